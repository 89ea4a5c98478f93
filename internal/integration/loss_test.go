package integration

import (
	"math"
	"testing"
	"time"

	"ros2_pulse/internal/window"
)

// Loss per subscription against known injected shares, for rclcpp and rclpy
// readers, and none for a reliable reader or an intra-process one: within one
// percentage point in every judged window, and within half of one over the
// whole run (in-flight messages only move between neighbouring windows).
func TestLossMatchesInjectedShare(t *testing.T) {
	g := sim(t, "testdata/loss.graph", "jazzy", 7*time.Second)
	rec := newRecorder(t, g.dir, 2*time.Second, window.Options{})
	ws := record(t, g, rec, 2*time.Second)
	g.wait()
	want := map[string]float64{"/lossy_cpp": 20, "/lossy_py": 5, "/reliable": 0, "/lidar": 0}
	published := uint64(0)
	delivered := map[string]uint64{}
	judged := 0
	for i, w := range ws[:len(ws)-1] {
		tp := w.Topic("/points")
		if tp == nil {
			t.Fatalf("window %d: no /points", i)
		}
		if i == 0 {
			if tp.Loss.Judged != 0 {
				t.Errorf("the first window has no baseline, yet: %+v", tp.Loss)
			}
			continue
		}
		published += tp.Published
		for _, s := range tp.Subs {
			share, ok := want[s.Node]
			if !ok || !s.LossJudged {
				t.Errorf("window %d: subscription %+v", i, s)
				continue
			}
			judged++
			delivered[s.Node] += s.Delta[0] + s.Delta[1]
			if math.Abs(s.LossPct-share) > 1 {
				t.Errorf("window %d: %s lost %.2f %%, injected %g %%", i, s.Node, s.LossPct, share)
			}
		}
		if tp.Loss.Node != "/lossy_cpp" || math.Abs(tp.Loss.WorstPct-20) > 1 {
			t.Errorf("window %d: worst %+v", i, tp.Loss)
		}
	}
	if judged < 8 {
		t.Fatalf("only %d subscription windows judged", judged)
	}
	for node, share := range want {
		got := 100 * (1 - float64(delivered[node])/float64(published))
		if math.Abs(got-share) > 0.5 {
			t.Errorf("%s over the run: %d of %d delivered, %.2f %% lost, injected %g %%", node, delivered[node], published, got, share)
		}
		t.Logf("%s: %d of %d delivered (%.2f %% lost, injected %g %%)", node, delivered[node], published, got, share)
	}
}
