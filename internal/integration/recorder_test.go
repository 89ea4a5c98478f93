package integration

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/logfmt"
	"ros2_pulse/internal/recorder"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/simtruth"
	"ros2_pulse/internal/window"
)

// flaky fails its first n writes (a full disk), then works.
type flaky struct {
	fail    int
	windows []string
}

func (f *flaky) Write(p []byte) (int, error) {
	if f.fail > 0 {
		f.fail--
		return 0, errors.New("no space left on device")
	}
	f.windows = append(f.windows, string(p))
	return len(p), nil
}

// Windows that cannot be written are not lost: the next written window
// spans them, so the written windows add up to every message sent.
func TestRecorderLosesNothingOnWriteFailure(t *testing.T) {
	g := sim(t, "testdata/fork.graph", "jazzy", 2*time.Second) // /parent at 20 Hz for 2 s
	out := &flaky{fail: 3}
	var warn strings.Builder
	rec, err := recorder.New(g.dir, recorder.Options{Period: 300 * time.Millisecond, Out: out, Warn: &warn, Retain: -1,
		Format: logfmt.JSONL, Window: window.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	var written []*window.Window
	next := time.Now()
	for done := false; !done; {
		next = next.Add(300 * time.Millisecond)
		select {
		case err := <-g.done:
			g.done <- err
			done = true
		case <-time.After(time.Until(next)):
		}
		before := len(out.windows)
		w, err := rec.Step(done)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.windows) > before {
			written = append(written, w)
		}
	}
	g.wait()
	var total float64
	for _, w := range written {
		if tp := w.Topic("/parent"); tp != nil {
			for _, p := range tp.Pubs {
				total += float64(p.Delta[0])
			}
		}
	}
	var counted uint64 // the parent, plus the fork child's copy (which never publishes /parent)
	for _, e := range endpoints(scan(t, g.dir), segment.KindPublisher, "/parent") {
		counted += e.Counts[segment.SlotInter]
	}
	// What the graph published (its own count; a loaded machine skips timer periods).
	var published uint64
	for k, c := range g.truth().Counts {
		if k.Kind == "pub" && k.Topic == "/parent" {
			published += c[simtruth.PubInter]
		}
	}
	if total != float64(counted) || counted != published || published == 0 {
		t.Errorf("written windows add up to %v messages, the segments counted %d, the graph published %d", total, counted, published)
	}
	if strings.Count(warn.String(), "cannot write window") != 1 || !strings.Contains(warn.String(), "writing windows again") {
		t.Errorf("warnings: %q", warn.String())
	}
	if written[0].Seconds < 1.0 {
		t.Errorf("the first written window should span the failed ones: %.3f s", written[0].Seconds)
	}
}

// A dead segment is removed once a written window has reported it exited
// and the retention (0 here) has passed: the next scan leaves it out.
func TestRecorderRemovesDeadSegmentsAfterRecording(t *testing.T) {
	g := sim(t, "testdata/selfloop.graph", "jazzy", 500*time.Millisecond)
	log := filepath.Join(t.TempDir(), "w.log")
	rec, err := recorder.New(g.dir, recorder.Options{Period: time.Second, Out: &recorder.RotatingFile{Path: log}, Format: logfmt.Text})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	g.wait()
	if _, err := rec.Step(false); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log)
	if !strings.Contains(string(b), "state=exited") || !strings.Contains(string(b), "TOPIC /loop") {
		t.Errorf("the exit and the final counts were not recorded:\n%s", b)
	}
	if m, _ := filepath.Glob(filepath.Join(g.dir, "*.pulse")); len(m) != 1 {
		t.Errorf("the segment went before a second scan: %v", m)
	}
	w, err := rec.Step(false)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(g.dir, "*")); len(m) != 0 || len(w.Procs) != 0 {
		t.Errorf("left after the retention: %v, procs %+v", m, w.Procs)
	}
}
