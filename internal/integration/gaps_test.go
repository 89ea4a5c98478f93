package integration

import (
	"math"
	"testing"
	"time"

	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/simtruth"
	"ros2_pulse/internal/window"
)

// With ROS_TOPIC_STATS_JITTER=1 every endpoint keeps an inter-arrival
// histogram: a steady 50 Hz topic reads a 20 ms period on both sides, and a
// driver wedged for 0.8 s shows as a growing silence while it lasts and as
// a max gap of at least 800 ms once it ends.
func TestGapTracking(t *testing.T) {
	skipUnderEmulation(t, "an inter-arrival histogram")
	g := sim(t, "testdata/stall.graph", "jazzy", 3*time.Second, "ROS_TOPIC_STATS_JITTER=1")
	const period = 500 * time.Millisecond
	rec := newRecorder(t, g.dir, period, window.Options{})
	ws := record(t, g, rec, period)
	g.wait()
	var sawSilence, sawGap bool
	for i, w := range ws[:len(ws)-1] {
		if st := w.Topic("/steady"); st != nil && st.RecvGap.N > 5 {
			for _, side := range []window.GapStats{st.PubGap, st.RecvGap} {
				// The max only has to tell a hiccup of this shared VM from a stall.
				if math.Abs(side.MeanMs-20) > 1 || side.P50Ms < 19 || side.P50Ms > 22 || side.MaxDtMs() > 150 {
					t.Errorf("window %d: /steady gaps %+v", i, side)
				}
			}
		}
		if wd := w.Topic("/wedged"); wd != nil {
			if wd.PubGap.OpenMs > 300 && wd.RecvGap.OpenMs > 300 {
				sawSilence = true // "silent for ... now", while the stall lasts
			}
			if wd.RecvGap.MaxMs >= 800 && wd.RecvGap.MaxMs < 800*1.07+25 && wd.PubGap.MaxMs >= 800 {
				sawGap = true // the closed gap, within one bucket (6.25 %) plus the delivery
			}
		}
	}
	if !sawSilence || !sawGap {
		t.Errorf("stall not seen: silence %v gap %v", sawSilence, sawGap)
		for i, w := range ws {
			if wd := w.Topic("/wedged"); wd != nil {
				t.Logf("window %d: pub %+v recv %+v", i, wd.PubGap, wd.RecvGap)
			}
		}
	}
}

// Without the opt-in there is no gap section and no gap data.
func TestGapTrackingOffByDefault(t *testing.T) {
	g := sim(t, "testdata/stall.graph", "jazzy", 300*time.Millisecond, "ROS_TOPIC_STATS_JITTER=true")
	g.wait()
	for _, s := range scan(t, g.dir).Snapshots {
		for _, e := range s.Endpoints {
			if e.Gap != nil {
				t.Fatalf("gap data without ROS_TOPIC_STATS_JITTER=1 (only exactly \"1\" enables it): %+v", e)
			}
		}
	}
	_ = segment.GapBuckets
}

// A Jazzy publisher that publishes intra- and inter-process fires two
// tracepoints per message: it must still read one gap per message.
func TestGapIntraPublisherCountsOnce(t *testing.T) {
	g := sim(t, "demo", "jazzy", 2500*time.Millisecond, "ROS_TOPIC_STATS_JITTER=1")
	rec := newRecorder(t, g.dir, time.Second, window.Options{})
	ws := record(t, g, rec, time.Second)
	g.wait()
	w := ws[1]
	det := w.Topic("/camera/detections") // image_proc publishes it with intra-process on, to another process
	if det == nil || det.PubIntra == 0 || det.PubInter == 0 {
		t.Fatalf("/camera/detections should publish on both paths: %+v", det)
	}
	if math.Abs(det.PubGap.MeanMs-1000.0/30) > 2 || det.PubGap.P50Ms < 30 {
		t.Errorf("intra+inter publisher gaps: %+v (want a 33 ms period, not half of it)", det.PubGap)
	}
}

// Two threads publish on one publisher at the same instants (each at 50 Hz
// on one schedule), both wedged for 0.5 s. The probe moves the last arrival
// forward by compare-exchange (ABI 1.7), so the largest gap it reads is the
// graph's own (its clock read just before each publish), within the bucket
// pulse reports it by; every message but the first closes at most one gap,
// and only a publish that lost a race to a later clock read closes none. Of
// each period's two publishes at most one can lose (the one whose clock read
// is older); how many do depends on the machine (14 % in one CI run on a
// loaded 2-vCPU VM), so only that bound is judged.
func TestGapTwoThreadsOnePublisher(t *testing.T) {
	skipUnderEmulation(t, "an inter-arrival histogram")
	g := sim(t, "testdata/shared_pub.graph", "jazzy", 3*time.Second, "ROS_TOPIC_STATS_JITTER=1")
	const period = 500 * time.Millisecond
	rec := newRecorder(t, g.dir, period, window.Options{})
	ws := record(t, g, rec, period)
	g.wait()
	truth := g.truth()
	var key simtruth.Key
	for _, k := range truth.Keys() {
		if k.Kind == "pub" && k.Topic == "/shared" {
			key = k
		}
	}
	want := float64(truth.Timing[key].GapMaxNs) / 1e6
	sent := truth.Get(key)[simtruth.PubInter]
	if want < 500 || sent < 100 {
		t.Fatalf("the graph's /shared: largest gap %.1f ms, %d messages: it did not run as staged", want, sent)
	}
	var maxMs float64
	var gaps uint64
	for _, w := range ws {
		if st := w.Topic("/shared"); st != nil {
			maxMs = math.Max(maxMs, st.PubGap.MaxMs)
			gaps += st.PubGap.N
		}
	}
	if maxMs < want-1 || maxMs > want*1.0625+1 {
		t.Errorf("largest gap %.2f ms, the graph's own %.2f ms (want it within its bucket, 6.25 %%)", maxMs, want)
	}
	if gaps >= sent || gaps+1 < sent-(sent+1)/2 {
		t.Errorf("%d gaps from %d messages: want at most one a message after the first, and at most one race lost a period", gaps, sent)
	}
	t.Logf("largest gap %.2f ms (graph %.2f); %d gaps from %d messages", maxMs, want, gaps, sent)
}
