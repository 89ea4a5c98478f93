package realros

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDoctorOnRealROS: pulse doctor on a healthy real graph, with the
// prefix's own libtracetools: no FAIL, exit 0, the distro named, and
// whether LTTng is linked said as ldd sees it.
func TestDoctorOnRealROS(t *testing.T) {
	l := setup(t)
	r := l.newRun(t)
	r.node("listener", "cpp", "", "--sub", "/chatter", "--duration", "8")
	talker := r.node("talker", "cpp", "", "--pub", "/chatter,20,16", "--duration", "8")
	time.Sleep(4 * time.Second)
	tt := filepath.Join(l.prefix, "lib/libtracetools.so")
	// The nodes load this prefix's tracetools (a workspace's setup.bash chains
	// to the prefix it was built against: one built against another core
	// would judge that core's tracetools).
	maps, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", talker.cmd.Process.Pid))
	real, _ := filepath.EvalSymlinks(tt)
	if !strings.Contains(string(maps), real) && !strings.Contains(string(maps), tt) {
		t.Errorf("the talker did not load %s", tt)
	}
	out, err := r.pulseCmd("doctor", "--tracetools", tt, "--dir", r.dir).CombinedOutput()
	doc := string(out)
	if err != nil || strings.Contains(doc, "FAIL") {
		t.Errorf("pulse doctor on a healthy %s graph: %v\n%s", l.distro, err, doc)
	}
	table(t, "pulse doctor, healthy graph", fmt.Sprintf("exit %v, FAIL lines: %v", err, strings.Contains(doc, "FAIL")), "healthy")
	ldd, _ := exec.Command("ldd", tt).Output()
	lttng := "without LTTng"
	if strings.Contains(string(ldd), "liblttng-ust") {
		lttng = "LTTng linked"
	}
	if !strings.Contains(doc, l.distro) || !strings.Contains(doc, lttng) {
		t.Errorf("pulse doctor does not say %s, %s:\n%s", l.distro, lttng, doc)
	}
	for _, node := range []string{"/listener", "/talker"} {
		if !strings.Contains(doc, node) {
			t.Errorf("pulse doctor does not list %s:\n%s", node, doc)
		}
	}
	r.waitAll(20 * time.Second)
}
