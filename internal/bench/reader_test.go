package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/logfmt"
	"ros2_pulse/internal/recorder"
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
	if err := MeasurePhases(dir, 4, 0, &out); err != nil {
		t.Fatal(err)
	}
	var scan, window, text, s1, s2, s3 float64
	if _, err := fmtSscanfPhases(out.String(), &scan, &s1, &window, &s2, &text, &s3); err != nil || scan < 0 || window < 0 || text < 0 {
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
