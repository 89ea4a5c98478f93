package bench

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/diagnose"
	"ros2_pulse/internal/logfmt"
	"ros2_pulse/internal/recorder"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// The synthetic directory reads back as what was written.
func TestMakeDirectoryAndMeasure(t *testing.T) {
	dir := t.TempDir()
	if err := MakeDirectory(dir, 3, 20); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := MeasureReader(dir, 3, &out); err != nil {
		t.Fatal(err)
	}
	var cpu, sem float64
	var rss, anon int64
	if _, err := fmtSscanf(out.String(), &cpu, &sem, &rss, &anon); err != nil || rss <= 0 || anon <= 0 || anon > rss {
		t.Fatalf("%q: %v", out.String(), err)
	}
}

// The phases of a sample are each measured and said.
func TestMeasurePhases(t *testing.T) {
	dir := t.TempDir()
	if err := MakeDirectory(dir, 3, 20); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := MeasurePhases(dir, 4, 0, true, 2, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("%q: want a line per sample, the summary and the settled reading", out.String())
	}
	var settled, sem, most float64
	var n int
	if _, err := fmt.Sscanf(lines[5], "settled_ms=%f,%f max_ms=%f samples=%d", &settled, &sem, &most, &n); err != nil || n != 2 || settled < 0 || most < settled {
		t.Fatalf("settled line %q: %v", lines[5], err)
	}
	for i, l := range lines[:4] {
		var n, gc int
		var scan, window, memo, text, others float64
		if _, err := fmt.Sscanf(l, "sample=%d scan_ms=%f window_ms=%f memo_ms=%f text_ms=%f others_ms=%f gc=%d",
			&n, &scan, &window, &memo, &text, &others, &gc); err != nil || n != i || scan < 0 || window < 0 || memo < 0 || text < 0 || gc < 0 {
			t.Fatalf("sample line %q: %v", l, err)
		}
	}
	var scan, window, text, s1, s2, s3 float64
	if _, err := fmtSscanfPhases(lines[4], &scan, &s1, &window, &s2, &text, &s3); err != nil || scan < 0 || window < 0 || text < 0 {
		t.Fatalf("%q: %v", out.String(), err)
	}
}

func BenchmarkRecorderStep(b *testing.B) {
	dir, _ := os.MkdirTemp("/dev/shm", "bench-")
	defer os.RemoveAll(dir)
	MakeDirectory(dir, 100, 50)
	rec, _ := recorder.New(dir, recorder.Options{Period: time.Second, Format: logfmt.Text, Out: io.Discard, Retain: -1, ReuseWindows: true})
	defer rec.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec.Step(false)
	}
}

// The projection adds Prometheus's own series per target and scales
// linearly: 95 series + 5 at 15 s is 6.7 samples/s per robot, 670 for 100.
func TestCardinalityTable(t *testing.T) {
	tab := CardinalityTable([]CardinalityRow{{Graph: "demo", Series: 95, Bytes: 12000}}, 15*time.Second)
	for _, want := range []string{"| demo | off | per endpoint | 100 | 12000 | 6.7 |", "| 10000, 667, 0.1 GiB |", "| 100000, 6667, 1.1 GiB |"} {
		if !strings.Contains(tab, want) {
			t.Errorf("table lacks %q:\n%s", want, tab)
		}
	}
}

// A scrape's samples are its lines that are not comments.
func TestSeriesIn(t *testing.T) {
	body := "# HELP a x\n# TYPE a counter\na{b=\"1\"} 1\na{b=\"2\"} 2\n# HELP c y\n# TYPE c gauge\nc 3\n"
	if n := seriesIn([]byte(body)); n != 3 {
		t.Errorf("seriesIn = %d, want 3", n)
	}
}

// A hot-path run over one endpoint count draws (a log axis needs a range:
// it panicked before).
func TestPlotHotpathOneEndpointCount(t *testing.T) {
	rows := []HotpathRow{{Leg: "probe", Threads: 1, Endpoints: 1, NsPerMsg: 12.5}, {Leg: "floor", Threads: 1, Endpoints: 1, NsPerMsg: 3.2}}
	if err := PlotHotpath(rows, 1, t.TempDir()+"/hotpath.png"); err != nil {
		t.Fatal(err)
	}
}

func fmtSscanfPhases(s string, v ...any) (int, error) {
	return fmt.Sscanf(strings.TrimSpace(s), "scan_ms=%f,%f window_ms=%f,%f text_ms=%f,%f", v...)
}

// BenchmarkReadKept reads a real robot's segments, kept a second apart by
// TestRobotShape (PULSE_ROBOT_KEEP=DIR: DIR/a and DIR/b), as a sample of
// reader-sample --phases does: both scans and the window between them.
// PULSE_KEPT=DIR names them; without it the benchmark is skipped.
func BenchmarkReadKept(b *testing.B) {
	dir := os.Getenv("PULSE_KEPT")
	if dir == "" {
		b.Skip("PULSE_KEPT: no kept robot (TestRobotShape with PULSE_ROBOT_KEEP)")
	}
	// The kept processes are read as alive, as the robot's were: another
	// process holds each segment's lock, as each probe does.
	hold := exec.Command("python3", "-c", `import fcntl, glob, sys, time
fs = [open(p, "r+b") for p in glob.glob(sys.argv[1] + "/*/*.pulse")]
for f in fs: fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
print(len(fs), flush=True)
time.sleep(3600)`, dir)
	held, _ := hold.StdoutPipe()
	if err := hold.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { hold.Process.Kill(); hold.Wait() }()
	if n, err := fmt.Fscan(held, new(int)); n != 1 || err != nil {
		b.Fatalf("holding the kept segments' locks: %v", err)
	}
	var readers [2]*segment.Reader // a and b, read in turn
	for k, at := range []string{"a", "b"} {
		readers[k] = segment.NewReader(filepath.Join(dir, at))
		defer readers[k].Close()
		readers[k].Retain(-1, false)
	}
	var sc window.Scratch
	sc.ReuseWindows = true
	var memo diagnose.Memo
	start := segment.NowMono()
	// cold: every cache line evicted between samples, as a second on a busy
	// robot's cores leaves them (a sweep of 64 MiB, outside the timer).
	evict := make([]byte, 64<<20)
	for _, phase := range []string{"scan", "window", "scan-cold", "window-cold"} {
		b.Run(phase, func(b *testing.B) {
			var prev *segment.Scan
			for i := 0; i < b.N+1; i++ {
				if strings.HasSuffix(phase, "-cold") {
					b.StopTimer()
					for k := 0; k < len(evict); k += 64 {
						evict[k]++
					}
					b.StartTimer()
				}
				cur, err := readers[i%2].Scan()
				if err != nil {
					b.Fatal(err)
				}
				if prev != nil && strings.HasPrefix(phase, "window") {
					w := sc.Compute(prev, cur, start, time.Now().UnixNano(), window.Options{})
					w.Unmatched = memo.Unmatched(cur)
				}
				if prev != nil {
					readers[(i+1)%2].Recycle(prev) // back to the reader it came from
				}
				prev = cur
			}
		})
	}
}
