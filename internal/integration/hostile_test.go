package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// runHost runs one simgraph process in place (no fork, so its pid is the
// shell's) under the probe, with a shell prelude, and returns its stderr.
func runHost(t *testing.T, prelude string, env ...string) (string, error) {
	t.Helper()
	b := buildDir(t)
	graph, _ := filepath.Abs("testdata/selfloop.graph")
	script := prelude + "\nexec " + filepath.Join(b, "bin/simgraph") + " --graph " + graph +
		" --child 0 --t0 0 --duration 0.3 --rundir " + t.TempDir()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+filepath.Join(b, "lib/libros2_pulse.so"),
		"LD_LIBRARY_PATH="+filepath.Join(b, "lib/sim/jazzy"))
	cmd.Env = append(cmd.Env, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stderr.String(), err
}

func probeLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "[ros2_pulse]") {
			out = append(out, l)
		}
	}
	return out
}

// In every hostile setting the host runs normally and the probe says why
// it is not counting in exactly one clear line.
func TestHostileEnvironments(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting test filesystems needs root (CI runs as root)")
	}
	mount := func(t *testing.T, opts string) string {
		dir := t.TempDir()
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
			t.Fatalf("mount: %v %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
		return dir
	}
	cases := []struct {
		name    string
		dir     func(t *testing.T) string
		prelude string
		want    string
	}{
		{"missing directory", func(t *testing.T) string { return "/nonexistent/ros2_pulse/segments" }, "", "cannot create segment directory '/nonexistent/ros2_pulse/segments'"},
		{"read-only directory", func(t *testing.T) string { return mount(t, "ro,size=1m") }, "", "cannot create segment"},
		{"full tmpfs", func(t *testing.T) string { return mount(t, "size=64k") }, "", "cannot reserve"},
		{"not a directory", func(t *testing.T) string {
			f := filepath.Join(t.TempDir(), "file")
			os.WriteFile(f, nil, 0o600)
			return f
		}, "", "is not a directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.dir(t)
			stderr, err := runHost(t, c.prelude, "ROS_PULSE_DIR="+dir)
			if err != nil {
				t.Fatalf("host failed: %v\n%s", err, stderr)
			}
			lines := probeLines(stderr)
			if len(lines) != 1 || !strings.Contains(lines[0], c.want) || !strings.Contains(lines[0], "counting disabled") {
				t.Fatalf("want one line containing %q, got %q", c.want, lines)
			}
			if matches, _ := filepath.Glob(filepath.Join(dir, "*.pulse")); len(matches) != 0 {
				t.Errorf("left segment files behind: %v", matches)
			}
		})
	}
}

// A symlink planted where the segment goes is never followed: the probe
// says so and uses the next free name.
func TestPlantedSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	stderr, err := runHost(t, `ln -s `+victim+` "$ROS_PULSE_DIR/$$.0.pulse"`, "ROS_PULSE_DIR="+dir)
	if err != nil {
		t.Fatalf("host failed: %v\n%s", err, stderr)
	}
	if _, err := os.Lstat(victim); !os.IsNotExist(err) {
		t.Fatal("the probe wrote through the planted symlink")
	}
	lines := probeLines(stderr)
	if len(lines) != 2 || !strings.Contains(lines[0], "already exists, not touching it") || !strings.Contains(lines[1], ".1.pulse") {
		t.Fatalf("stderr: %q", lines)
	}
	r := segment.NewReader(dir)
	defer r.Close()
	s, _ := r.Scan()
	if len(s.Snapshots) != 1 || len(s.Problems) != 1 || !strings.Contains(s.Problems[0].Err.Error(), "not a regular file") {
		t.Fatalf("reader: %d snapshots, problems %v", len(s.Snapshots), s.Problems)
	}
}

// Garbage in the probe's environment: one line each, defaults, and counting goes on.
func TestGarbageEnvironment(t *testing.T) {
	dir := t.TempDir()
	stderr, err := runHost(t, "", "ROS_PULSE_DIR="+dir, "ROS_PULSE_MAX_ENDPOINTS=12abc", "ROS_TOPIC_STATS_QUIET=yes")
	if err != nil {
		t.Fatalf("host failed: %v\n%s", err, stderr)
	}
	lines := probeLines(stderr)
	if len(lines) != 3 || !strings.Contains(lines[0], "invalid ROS_TOPIC_STATS_QUIET 'yes' (expected exactly 1 to switch it on, or 0), using off") ||
		!strings.Contains(lines[1], "invalid ROS_PULSE_MAX_ENDPOINTS '12abc'") || !strings.Contains(lines[2], "active:") {
		t.Fatalf("want both warnings and the banner (QUIET is exactly \"1\"): %q", lines)
	}
	// QUIET=1 silences the banner but never an error.
	stderr, _ = runHost(t, "", "ROS_PULSE_DIR=relative/dir", "ROS_TOPIC_STATS_QUIET=1", "ROS_PULSE_MAX_ENDPOINTS=16")
	lines = probeLines(stderr)
	if len(lines) != 1 || !strings.Contains(lines[0], "not an absolute path") {
		t.Fatalf("QUIET must keep errors: %q", lines)
	}
	os.RemoveAll(segment.DefaultDir()) // that run fell back to the default directory
	// A sampling interval that is not a power of two (or zero, or past the
	// limit) is said once and the default is used; bytes still count.
	for _, every := range []string{"3", "0", "131072", "1e3"} {
		stderr, err := runHost(t, "", "ROS_PULSE_DIR="+dir, "ROS_TOPIC_STATS_QUIET=1", "ROS_PULSE_BYTES=1", "ROS_PULSE_BYTES_EVERY="+every)
		lines := probeLines(stderr)
		if err != nil || len(lines) != 1 || !strings.Contains(lines[0], "invalid ROS_PULSE_BYTES_EVERY '"+every+"' (expected a power of two in [1, 65536]), using 16") {
			t.Errorf("ROS_PULSE_BYTES_EVERY=%s: %v %q", every, err, lines)
		}
	}
}

// A process killed with SIGKILL is reported exited, its nodes no longer
// alive, within one period.
func TestSigkillReportedWithinOnePeriod(t *testing.T) {
	g := sim(t, "demo", "jazzy", 20*time.Second)
	const period = 500 * time.Millisecond
	rec := newRecorder(t, g.dir, period, window.Options{})
	var victim int
	deadline := time.Now().Add(5 * time.Second)
	for victim == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		for _, s := range scan(t, g.dir).Snapshots {
			for _, n := range s.Nodes {
				if n.Name == "/base_driver" {
					victim = s.Pid
				}
			}
		}
	}
	if victim == 0 {
		t.Fatal("no /base_driver process")
	}
	time.Sleep(time.Second)
	w, _ := rec.Step(false)
	if !contains(w.Nodes, "/base_driver") {
		t.Fatalf("/base_driver not alive before the kill: %v", w.Nodes)
	}
	var before uint64
	if tp := w.Topic("/tf"); tp != nil && len(tp.Pubs) == 1 {
		before = tp.Pubs[0].Total[0]
	}
	if before == 0 {
		t.Fatalf("/tf published nothing before the kill: %+v", w.Topic("/tf"))
	}
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(period)
	w, _ = rec.Step(false)
	if contains(w.Nodes, "/base_driver") {
		t.Errorf("/base_driver still listed alive one period after SIGKILL")
	}
	found := false
	for _, p := range w.Procs {
		if p.Pid == victim {
			found = true
			if p.Alive || !contains(p.Nodes, "/base_driver") {
				t.Errorf("killed process: %+v", p)
			}
		} else if !p.Alive {
			t.Errorf("process %d reported exited", p.Pid)
		}
	}
	if !found {
		t.Error("the killed process vanished instead of being reported exited")
	}
	// Its last counts are still in its segment and in this window's totals.
	if tp := w.Topic("/tf"); tp == nil || len(tp.Pubs) != 1 || tp.Pubs[0].Total[0] < before {
		t.Errorf("/tf of the killed process lost its counts (%d before the kill): %+v", before, tp)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
