// Package integration runs the real probe inside simgraph, the stand-in ROS
// graph, and checks what the Go reader sees: the same ld.so interposition,
// threads and segments as on a robot. `make build` must have run first;
// PULSE_BUILD names the build directory (default ../../build).
package integration

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"ros2_pulse/internal/recorder"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/simtruth"
	"ros2_pulse/internal/window"
)

func buildDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PULSE_BUILD")
	if dir == "" {
		dir, _ = filepath.Abs("../../build")
	}
	for _, f := range []string{"lib/libros2_pulse.so", "bin/simgraph", "lib/sim/humble/libtracetools.so"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%s missing: run `make build` first (PULSE_BUILD=%s)", f, dir)
		}
	}
	return dir
}

// graph is one simgraph run under the probe.
type graph struct {
	t      *testing.T
	dir    string // segment directory
	cmd    *exec.Cmd
	stderr bytes.Buffer
	mu     sync.Mutex
	done   chan error
	// truthDir holds the graph's own counts (internal/simtruth); brackets
	// holds, for each window record returned, the truth read just before and
	// just after its scan.
	truthDir string
	brackets []bracket
	// tmpDir is simgraph's TMPDIR, where it makes its sockets' directory:
	// removed with the test, so that a graph the test kills leaves nothing.
	tmpDir string
}

// sim starts simgraph on graphArg (a built-in name or a testdata file) with
// the stand-in libtracetools of distro, the probe preloaded and a private
// segment directory. env adds or overrides variables.
func sim(t *testing.T, graphArg, distro string, duration time.Duration, env ...string) *graph {
	t.Helper()
	return simAs(t, nil, graphArg, distro, duration, env...)
}

// simAs is sim with simgraph's own process showing argv as its command line
// before its options (a ros2 launch, say); nil: its own.
func simAs(t *testing.T, argv []string, graphArg, distro string, duration time.Duration, env ...string) *graph {
	t.Helper()
	b := buildDir(t)
	if _, err := os.Stat(graphArg); err == nil {
		graphArg, _ = filepath.Abs(graphArg)
	}
	g := &graph{t: t, dir: t.TempDir(), truthDir: t.TempDir(), done: make(chan error, 1)}
	// Not t.TempDir(): its path would be too long for a socket's.
	tmp, err := os.MkdirTemp("", "sg")
	if err != nil {
		t.Fatal(err)
	}
	g.tmpDir = tmp
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	g.cmd = exec.Command(filepath.Join(b, "bin/simgraph"), "--graph", graphArg, "--duration", fmt.Sprint(duration.Seconds()),
		"--truth", g.truthDir)
	g.cmd.Env = append(os.Environ(),
		"LD_PRELOAD="+filepath.Join(b, "lib/libros2_pulse.so"),
		"LD_LIBRARY_PATH="+filepath.Join(b, "lib/sim", distro),
		"ROS_PULSE_DIR="+g.dir,
		"ROS_TOPIC_STATS_QUIET=1",
		"TMPDIR="+tmp)
	if len(argv) > 0 {
		g.cmd.Args = append(slices.Clone(argv), g.cmd.Args[1:]...)
		g.cmd.Env = append(g.cmd.Env, fmt.Sprintf("SIMGRAPH_DISGUISE=%d", len(argv)-1))
	}
	g.cmd.Env = append(g.cmd.Env, env...)
	g.cmd.Stderr = &g.stderr
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // cleanup reaches the graph's children
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.done <- g.cmd.Wait() }()
	t.Cleanup(func() {
		if g.cmd.ProcessState == nil {
			_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
			<-g.done
		}
	})
	return g
}

// wait waits for simgraph to exit and fails the test on a non-zero status.
func (g *graph) wait() {
	g.t.Helper()
	select {
	case err := <-g.done:
		if err != nil {
			g.t.Fatalf("simgraph: %v\nstderr:\n%s", err, g.stderr.String())
		}
	case <-time.After(60 * time.Second):
		g.t.Fatal("simgraph did not exit")
	}
}

// record takes a window every period until simgraph exits (plus the final
// one) and returns them all; the first comes from a baseline taken before
// any segment existed. Around every scan it reads the graph's own counts
// (g.brackets), so each window can be judged against what the graph did in it.
func record(t *testing.T, g *graph, rec *recorder.Recorder, period time.Duration) []*window.Window {
	t.Helper()
	var out []*window.Window
	g.brackets = g.brackets[:0]
	// The baseline scan: before any count (nil), and at or after it.
	prevBefore, prevAfter := (*simtruth.Snapshot)(nil), g.truth()
	step := func(final bool) {
		before := g.truth()
		w, err := rec.Step(final)
		if err != nil {
			t.Fatal(err)
		}
		after := g.truth()
		out = append(out, w)
		g.brackets = append(g.brackets, bracket{prevBefore: prevBefore, prevAfter: prevAfter, before: before, after: after})
		prevBefore, prevAfter = before, after
	}
	next := time.Now()
	for {
		next = next.Add(period)
		select {
		case err := <-g.done:
			g.done <- err
			step(true)
			return out
		case <-time.After(time.Until(next)):
			step(false)
		}
	}
}

func newRecorder(t *testing.T, dir string, period time.Duration, opt window.Options) *recorder.Recorder {
	t.Helper()
	// FromStart: the graph is already running (under qemu-user the baseline
	// scan can come after its first calls and its short-lived processes).
	rec, err := recorder.New(dir, recorder.Options{Period: period, Window: opt, Retain: -1, FromStart: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Close)
	return rec
}

// scan reads the segment directory once.
func scan(t *testing.T, dir string) *segment.Scan {
	t.Helper()
	r := segment.NewReader(dir)
	defer r.Close()
	s, err := r.Scan()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Problems {
		t.Errorf("segment problem: %v", p)
	}
	return s
}

// expect is a topic's nominal rates per bucket, in Hz: which buckets carry
// traffic (judged against what the graph did, never against these rates).
type expect struct{ pubInter, pubIntra, recvInter, recvIntra float64 }

// emulated names the emulator the arm64 lane runs these tests under
// (PULSE_EMULATED, set by make test-arm64), or is empty.
var emulated = os.Getenv("PULSE_EMULATED")

// skipProcUnderEmulation skips a test that reads other processes' /proc
// entries: under qemu-user they are the emulator's (its command line, and
// the start time it fakes in /proc/self/stat, which the probe reads), not the
// guest's. Nothing there is architecture-specific: these run natively.
func skipProcUnderEmulation(t *testing.T) {
	t.Helper()
	if emulated != "" {
		t.Skipf("under %s the processes' /proc entries are the emulator's; this test of /proc runs natively", emulated)
	}
}

// skipUnderEmulation skips a test whose figure is a timing. Under qemu-user
// the simulator, the probe and this reader run several times slower and
// unevenly, so such a figure would judge the emulator, not the probe. Counts
// stay exact there, and the tests of counts run; timings are checked on
// native builds.
func skipUnderEmulation(t *testing.T, what string) {
	t.Helper()
	if emulated != "" {
		t.Skipf("%s is a timing: under %s it would measure the emulator, not the probe (checked on native builds)", what, emulated)
	}
}
