package window

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"ros2_pulse/internal/segment"
)

const sec = uint64(1e9)

func ep(idx int, kind segment.Kind, name string, created uint64, inter, intra uint64) segment.Endpoint {
	e := segment.Endpoint{Index: idx, Kind: kind, Name: name, Node: 0, CreatedMono: created}
	e.Counts[segment.SlotInter], e.Counts[segment.SlotIntra] = inter, intra
	return e
}

func snap(path string, start uint64, alive bool, eps ...segment.Endpoint) *segment.Snapshot {
	return &segment.Snapshot{Path: path, Pid: len(path), StartMono: start, Alive: alive, Nodes: []segment.Node{{Name: "/n" + path}}, Endpoints: eps}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestRatesUseMeasuredTimeAndPublishMax(t *testing.T) {
	prev := &segment.Scan{Mono: 10 * sec, Snapshots: []*segment.Snapshot{
		snap("a", 1*sec, true, ep(0, segment.KindPublisher, "/t", 1*sec, 100, 100), ep(1, segment.KindSubscription, "/t", 1*sec, 50, 40)),
	}}
	cur := &segment.Scan{Mono: 12500 * sec / 1000, Snapshots: []*segment.Snapshot{
		snap("a", 1*sec, true, ep(0, segment.KindPublisher, "/t", 1*sec, 125, 125), ep(1, segment.KindSubscription, "/t", 1*sec, 70, 55)),
	}}
	w := Compute(prev, cur, 0, 0, Options{})
	if !near(w.Seconds, 2.5) {
		t.Fatalf("window %v s, want the measured 2.5", w.Seconds)
	}
	tp := w.Topic("/t")
	// One publish() fired both tracepoints: any-transport is the max, not the sum.
	if !near(tp.PubInter, 10) || !near(tp.PubIntra, 10) || !near(tp.PubAny, 10) {
		t.Errorf("publish %+v", tp)
	}
	// Receive buckets are disjoint deliveries.
	if !near(tp.RecvInter, 8) || !near(tp.RecvIntra, 6) {
		t.Errorf("receive %+v", tp)
	}
}

func TestYoungEndpointsAndNewSegments(t *testing.T) {
	prev := &segment.Scan{Mono: 10 * sec, Problems: []segment.Problem{{Path: "old", Err: errors.New("torn")}}}
	cur := &segment.Scan{Mono: 12 * sec, Snapshots: []*segment.Snapshot{
		// created 1.5 s into the 2 s window: its 15 messages are 30 Hz, not 7.5
		snap("new", 11500*sec/1000, true, ep(0, segment.KindPublisher, "/young", 11500*sec/1000, 15, 0),
			// created 0.05 s before the end with one message: the floor keeps it at 5 Hz, not 20
			ep(1, segment.KindPublisher, "/latched", 11950*sec/1000, 1, 0)),
		// an old segment the previous scan could not read: no baseline, so no history dumped into this window
		snap("old", 1*sec, true, ep(0, segment.KindPublisher, "/old", 1*sec, 5000, 0)),
		// created before the previous scan ended but not yet readable by it
		// (no magic yet, or made after the listing): every count is this window's
		snap("straddled", 9*sec, true, ep(0, segment.KindPublisher, "/straddled", 9*sec, 7, 0)),
	}}
	w := Compute(prev, cur, 0, 0, Options{})
	if tp := w.Topic("/young"); !near(tp.PubInter, 30) || !near(tp.Exposure, 0.5) {
		t.Errorf("young: %+v", tp)
	}
	if tp := w.Topic("/latched"); !near(tp.PubInter, 1/MinExposure) {
		t.Errorf("latched: %v", tp.PubInter)
	}
	if tp := w.Topic("/old"); tp.PubInter != 0 || !tp.PubInterSeen {
		t.Errorf("old segment without baseline: %+v", tp)
	}
	if tp := w.Topic("/straddled"); !near(tp.PubInter, 3.5) {
		t.Errorf("a segment created as the previous scan ran lost counts: %+v", tp)
	}
}

func TestStallVisibilityAndLiveness(t *testing.T) {
	mk := func(alive bool, retired bool) *segment.Scan {
		pub := ep(0, segment.KindPublisher, "/p", 0, 10, 0)
		if retired {
			pub.Flags = segment.FlagRetired
		}
		return &segment.Scan{Mono: 5 * sec, Snapshots: []*segment.Snapshot{snap("x", 0, alive, pub, ep(1, segment.KindSubscription, "/s", 0, 3, 0),
			ep(2, segment.KindSubscription, "/never", 0, 0, 0), ep(3, segment.KindTimer, "", 0, 99, 0))}}
	}
	same := mk(true, false)
	w := Compute(same, mk(true, false), 0, 0, Options{})
	if tp := w.Topic("/p"); tp.PubInter != 0 || !tp.PubInterSeen || tp.PubCount != 1 {
		t.Errorf("stalled publisher: %+v", tp)
	}
	if tp := w.Topic("/s"); !tp.RecvSeen {
		t.Errorf("stalled subscription: %+v", tp)
	}
	if tp := w.Topic("/never"); tp.RecvSeen {
		t.Errorf("a subscription that never delivered is not a stall: %+v", tp)
	}
	if len(w.Topics) != 3 || len(w.Nodes) != 1 {
		t.Errorf("timers are not topics; nodes of live processes: %+v %v", w.Topics, w.Nodes)
	}
	w = Compute(same, mk(false, false), 0, 0, Options{})
	if tp := w.Topic("/p"); tp.PubInterSeen || len(w.Nodes) != 0 || w.Procs[0].Alive {
		t.Errorf("a dead process keeps no stall lines and no live nodes: %+v %v", tp, w.Nodes)
	}
	w = Compute(same, mk(true, true), 0, 0, Options{})
	if tp := w.Topic("/p"); tp.PubInterSeen {
		t.Errorf("a retired endpoint is gone: %+v", tp)
	}
}

func TestBuiltinTopicsHidden(t *testing.T) {
	cur := &segment.Scan{Mono: sec, Snapshots: []*segment.Snapshot{snap("x", 0, true,
		ep(0, segment.KindPublisher, "/rosout", 0, 1, 0), ep(1, segment.KindPublisher, "/parameter_events", 0, 1, 0))}}
	if w := Compute(nil, cur, 0, 0, Options{}); len(w.Topics) != 0 {
		t.Errorf("builtin topics shown: %+v", w.Topics)
	}
	if w := Compute(nil, cur, 0, 0, Options{ShowBuiltin: true}); len(w.Topics) != 2 {
		t.Errorf("ShowBuiltin: %+v", w.Topics)
	}
}

// Loss: each subscription that lived through the window is compared with the
// messages the machine published (each publish once, whatever its
// transports); late joiners and the first window are not judged, and a
// subscription fed by a remote publisher too reads 0, never negative.
func TestLossPerSubscription(t *testing.T) {
	prev := &segment.Scan{Mono: 10 * sec, Snapshots: []*segment.Snapshot{
		snap("p", 1*sec, true, ep(0, segment.KindPublisher, "/t", 1*sec, 1000, 1000), ep(1, segment.KindSubscription, "/t", 1*sec, 0, 1000)),
		snap("s1", 1*sec, true, ep(0, segment.KindSubscription, "/t", 1*sec, 900, 0)),
		snap("s2", 1*sec, true, ep(0, segment.KindSubscription, "/t", 1*sec, 1500, 0)),
	}}
	cur := &segment.Scan{Mono: 12 * sec, Snapshots: []*segment.Snapshot{
		snap("p", 1*sec, true, ep(0, segment.KindPublisher, "/t", 1*sec, 1100, 1100), ep(1, segment.KindSubscription, "/t", 1*sec, 0, 1100)),
		snap("s1", 1*sec, true, ep(0, segment.KindSubscription, "/t", 1*sec, 980, 0)),  // 80 of 100: 20 % lost
		snap("s2", 1*sec, true, ep(0, segment.KindSubscription, "/t", 1*sec, 1650, 0)), // 150 of 100: a remote publisher too
		snap("late", 11*sec, true, ep(0, segment.KindSubscription, "/t", 11*sec, 10, 0)),
	}}
	w := Compute(prev, cur, 0, 0, Options{})
	tp := w.Topic("/t")
	if tp.Published != 100 {
		t.Fatalf("published %d, want 100 (inter and intra of one publish are one message)", tp.Published)
	}
	want := map[string]struct {
		judged bool
		pct    float64
	}{"/np": {true, 0}, "/ns1": {true, 20}, "/ns2": {true, 0}, "/nlate": {false, 0}}
	for _, s := range tp.Subs {
		if wnt := want[s.Node]; s.LossJudged != wnt.judged || !near(s.LossPct, wnt.pct) {
			t.Errorf("%s: judged %v loss %.2f %%, want %v %.2f", s.Node, s.LossJudged, s.LossPct, wnt.judged, wnt.pct)
		}
	}
	if tp.Loss.Judged != 3 || !near(tp.Loss.WorstPct, 20) || tp.Loss.Node != "/ns1" || tp.Loss.Pid != 2 {
		t.Errorf("topic loss %+v", tp.Loss)
	}
	if first := Compute(nil, cur, 0, 0, Options{}).Topic("/t"); first.Loss.Judged != 0 {
		t.Errorf("the first window has no baseline, yet judged %+v", first.Loss)
	}
}

// On Humble an rclcpp intra-process publish fires no tracepoint: a publisher
// whose process delivers its topic intra-process is not measured (never a
// zero), its topic's loss is not judged and no stall is read into it; the
// same counts from Jazzy are measured. Inter-process figures stay exact.
func TestHumbleIntraPublishesAreNotMeasured(t *testing.T) {
	scan := func(distro segment.Distro, mono, n uint64) *segment.Scan {
		s := snap("cam", 1*sec, true,
			ep(0, segment.KindPublisher, "/image", 1*sec, 0, 0),    // Humble: intra publishes unseen
			ep(1, segment.KindSubscription, "/image", 1*sec, 0, n), // its intra-process deliveries are counted
			ep(2, segment.KindPublisher, "/other", 1*sec, n, 0))    // an inter-only publisher: exact anywhere
		s.Distro = distro
		if distro != segment.DistroHumble {
			s.Endpoints[0].Counts[segment.SlotIntra] = n
		}
		return &segment.Scan{Mono: mono, Snapshots: []*segment.Snapshot{s}}
	}
	humble := Compute(scan(segment.DistroHumble, 10*sec, 100), scan(segment.DistroHumble, 11*sec, 130), 0, 0, Options{})
	img := humble.Topic("/image")
	if !img.PubHidden || !img.Pubs[0].PubHidden || img.PubMeasured("any") || img.PubMeasured("intra") || !img.PubMeasured("inter") {
		t.Errorf("Humble intra publisher: %+v", img)
	}
	if img.Loss.Judged != 0 || img.Subs[0].LossJudged || img.Stalled() {
		t.Errorf("Humble intra topic: loss %+v, stalled %v", img.Loss, img.Stalled())
	}
	if o := humble.Topic("/other"); o.PubHidden || !near(o.PubInter, 30) {
		t.Errorf("an inter-only publisher on Humble: %+v", o)
	}
	jazzy := Compute(scan(segment.DistroJazzy, 10*sec, 100), scan(segment.DistroJazzy, 11*sec, 130), 0, 0, Options{})
	if img := jazzy.Topic("/image"); img.PubHidden || !near(img.PubIntra, 30) || img.Loss.Judged != 1 || !near(img.Loss.WorstPct, 0) {
		t.Errorf("Jazzy intra topic: %+v", img)
	}
}

// The one-pass quantiles equal the reading of the definition: the middle of
// the first bucket whose running count reaches ceil(q*n), at most the max;
// and so do they over only the buckets a histogram marks as used.
func TestHistStatsQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 2000; trial++ {
		var prev, cur [segment.TimeBuckets]uint32
		for k := rng.IntN(6); k >= 0; k-- {
			b := rng.IntN(segment.TimeBuckets)
			if rng.IntN(3) == 0 {
				b = segment.TimeBuckets - 1 // the open-ended bucket
			}
			cur[b] += uint32(1 + rng.IntN(50))
		}
		for b := range prev {
			prev[b] = uint32(rng.IntN(3))
			cur[b] += prev[b]
		}
		sum := 100 + uint64(rng.IntN(1e9))
		got := durationsBetween(100, &prev, sum, &cur, &segment.AllBuckets)
		// Walking only the marked buckets (ABI 1.10: every bucket that ever
		// counted, and maybe others) gives the same figures.
		var marked segment.BucketSet
		for b := range cur {
			if cur[b] != 0 || rng.IntN(20) == 0 {
				marked[b/64] |= 1 << (b % 64)
			}
		}
		if sparse := durationsBetween(100, &prev, sum, &cur, &marked); sparse != got {
			t.Fatalf("trial %d: over the marked buckets %+v, over all %+v", trial, sparse, got)
		}
		var n uint64
		for b := range cur {
			n += uint64(cur[b] - prev[b])
		}
		want := func(q float64) float64 {
			target := uint64(math.Ceil(q * float64(n)))
			var acc uint64
			for b := range cur {
				if acc += uint64(cur[b] - prev[b]); acc >= target {
					lo, hi := TimeBucketBounds(b)
					if math.IsInf(hi, 1) {
						return math.Min(lo/1e6, got.MaxMs)
					}
					return math.Min((lo+hi)/2e6, got.MaxMs)
				}
			}
			return got.MaxMs
		}
		used := 0
		for b := range cur {
			if cur[b] != prev[b] {
				used++
			}
		}
		if got.N != n {
			t.Fatalf("n %d, want %d", got.N, n)
		}
		if used > 1 && (got.P50Ms != want(0.5) || got.P90Ms != want(0.9) || got.P99Ms != want(0.99)) {
			t.Fatalf("trial %d: %+v, want p50 %v p90 %v p99 %v", trial, got, want(0.5), want(0.9), want(0.99))
		}
	}
}
