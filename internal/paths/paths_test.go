package paths

import (
	"math"
	"slices"
	"testing"

	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// link is a live link from one topic to another whose every message's age
// fell in the given buckets (counts), with the exact age sum sumMs.
func link(node, from, to string, sumMs float64, hist ...window.Bucket) window.Link {
	l := window.Link{Node: node, From: from, To: to, Alive: true, AgeHist: hist}
	for _, b := range hist {
		l.N += b.N
	}
	l.Age = window.HistStats(hist, sumMs)
	return l
}

// bucketOf is the rp_timing bucket holding ms.
func bucketOf(ms float64) int {
	for b := 0; ; b++ {
		if lo, hi := window.TimeBucketBounds(b); ms*1e6 >= lo && ms*1e6 < hi {
			return b
		}
	}
}

// Paths run from every topic no link outputs to every topic no link takes,
// through branches, and a feedback loop ends a chain where it would close.
func TestChains(t *testing.T) {
	links := []window.Link{
		link("/f", "/lidar", "/filtered", 10, window.Bucket{B: 20, N: 1}),
		link("/d", "/filtered", "/objects", 10, window.Bucket{B: 20, N: 1}),
		link("/p", "/objects", "/trajectory", 10, window.Bucket{B: 20, N: 1}),
		link("/m", "/objects", "/markers", 10, window.Bucket{B: 20, N: 1}),
		link("/c", "/trajectory", "/cmd", 10, window.Bucket{B: 20, N: 1}),
		link("/loop", "/cmd", "/objects", 10, window.Bucket{B: 20, N: 1}), // a feedback
	}
	var got [][]string
	for _, p := range Of(links, nil) {
		got = append(got, p.Topics)
	}
	want := [][]string{
		{"/lidar", "/filtered", "/objects", "/markers"},
		{"/lidar", "/filtered", "/objects", "/trajectory", "/cmd"},
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("chains %v, want %v", got, want)
	}
}

// A path's latency is its hops' added: the mean exactly (each hop's exact
// mean), the quantiles of the sum of independent hops, the max a bound.
func TestLatencyAddsHops(t *testing.T) {
	// Hop 1: every message 2 ms. Hop 2: half 3 ms, half 9 ms.
	a, b, c := bucketOf(2), bucketOf(3), bucketOf(9)
	links := []window.Link{
		link("/n1", "/s", "/m", 200, window.Bucket{B: a, N: 100}),
		link("/n2", "/m", "/e", 50*3+50*9, window.Bucket{B: b, N: 50}, window.Bucket{B: c, N: 50}),
	}
	ps := Of(links, nil)
	if len(ps) != 1 || !ps[0].Measured || ps[0].N != 100 {
		t.Fatalf("%+v", ps)
	}
	l := ps[0].Best
	if math.Abs(l.MeanMs-8) > 1e-9 {
		t.Errorf("mean %.6f, want exactly 8 (2 + 6)", l.MeanMs)
	}
	// p50: the lower half (2 + 3), p99: the upper (2 + 9), to their buckets' width
	if math.Abs(l.P50Ms-5) > 5*0.07 || math.Abs(l.P99Ms-11) > 11*0.07 {
		t.Errorf("p50 %.3f p99 %.3f, want 5 and 11 within a bucket", l.P50Ms, l.P99Ms)
	}
	if l.MaxMs < 11 {
		t.Errorf("max %.3f is below the largest message, 11 ms", l.MaxMs)
	}
	if ps[0].Worst != ps[0].Best {
		t.Errorf("without sampled links the worst case is the best: %+v %+v", ps[0].Worst, ps[0].Best)
	}
}

// A named path says which hop is not measured, and never guesses its
// latency; a hop whose links carried nothing in the window is not measured.
func TestNamedPaths(t *testing.T) {
	links := []window.Link{
		link("/n1", "/s", "/m", 20, window.Bucket{B: bucketOf(2), N: 10}),
		{Node: "/idle", From: "/m", To: "/e", Alive: true}, // linked before, nothing this window
	}
	ps := Of(links, []spec.PathRule{
		{Name: "gap", Via: []string{"/s", "/x", "/e"}, MaxMs: 5},
		{Name: "idle", Via: []string{"/s", "/m", "/e"}},
		{Name: "half", Via: []string{"/s", "/m"}, MaxMs: 1},
	})
	if p := ps[0]; p.Measured || p.Missing != "/s -> /x" || p.Best != (window.Latency{}) || !p.Named || p.MaxMs != 5 {
		t.Errorf("gap: %+v", p)
	}
	if p := ps[1]; p.Measured || p.Missing != "/m -> /e" {
		t.Errorf("idle: %+v", p)
	}
	if p := ps[2]; !p.Measured || !p.Slow() || p.Hops[0].Node != "/n1" {
		t.Errorf("half: %+v (slow %v)", p, p.Slow())
	}
	if Of(nil, nil) != nil {
		t.Error("no links, no rules: no paths")
	}
}

// Two chains between the same ends are named by all their topics, so every
// found path's name is its own (the views key rows by name).
func TestFoundNamesAreUnique(t *testing.T) {
	b := window.Bucket{B: 20, N: 1}
	links := []window.Link{link("/x", "/a", "/b", 1, b), link("/y", "/a", "/c", 1, b), link("/z", "/b", "/d", 1, b), link("/w", "/c", "/d", 1, b),
		link("/v", "/e", "/f", 1, b)}
	var got []string
	for _, p := range Of(links, nil) {
		got = append(got, p.Name)
	}
	if want := []string{"/a -> /b -> /d", "/a -> /c -> /d", "/e -> /f"}; !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}
