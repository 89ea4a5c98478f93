package window

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"ros2_pulse/internal/segment"
)

// A window computed in a reused scratch, with or without the previous
// window's lists, is the window Compute makes afresh, while the graph grows,
// shrinks and its counts move: nothing of an earlier window leaks into a
// later one.
func TestScratchComputesWhatComputeDoes(t *testing.T) {
	timer := func(idx int, created, fires uint64) segment.Endpoint {
		e := ep(idx, segment.KindTimer, "", created, fires, 0)
		e.Aux = 100e6
		return e
	}
	scans := []*segment.Scan{
		{Mono: 10 * sec, Snapshots: []*segment.Snapshot{
			snap("a", sec, true, ep(0, segment.KindPublisher, "/a", sec, 100, 0), ep(1, segment.KindSubscription, "/a", sec, 90, 0),
				ep(2, segment.KindPublisher, "/b", sec, 10, 10), timer(3, sec, 50)),
		}},
		{Mono: 11 * sec, Snapshots: []*segment.Snapshot{
			snap("a", sec, true, ep(0, segment.KindPublisher, "/a", sec, 110, 0), ep(1, segment.KindSubscription, "/a", sec, 99, 0),
				ep(2, segment.KindPublisher, "/b", sec, 20, 20), timer(3, sec, 60), ep(4, segment.KindSubscription, "/c", 10500*sec/1000, 0, 3)),
			snap("bb", 10*sec, true, ep(0, segment.KindPublisher, "/c", 10*sec, 30, 0), ep(1, segment.KindSubscription, "/b", 10*sec, 5, 0)),
		}},
		{Mono: 12 * sec, Snapshots: []*segment.Snapshot{
			snap("bb", 10*sec, false, ep(0, segment.KindPublisher, "/c", 10*sec, 35, 0), ep(1, segment.KindSubscription, "/b", 10*sec, 9, 0)),
		}},
		{Mono: 13 * sec, Snapshots: []*segment.Snapshot{
			snap("bb", 10*sec, false, ep(0, segment.KindPublisher, "/c", 10*sec, 35, 0), ep(1, segment.KindSubscription, "/b", 10*sec, 9, 0)),
			snap("ccc", 12*sec, true, ep(0, segment.KindPublisher, "/d", 12*sec, 7, 0)),
		}},
	}
	for _, reuse := range []bool{false, true} {
		sc := Scratch{ReuseWindows: reuse}
		for i := 1; i < len(scans); i++ {
			want := Compute(scans[i-1], scans[i], 0, int64(i), Options{})
			got := sc.Compute(scans[i-1], scans[i], 0, int64(i), Options{})
			if len(want.Topics) == 0 {
				t.Fatalf("window %d has no topics: the test tests nothing", i)
			}
			if d := windowDiff(want, got); d != "" {
				t.Errorf("reuse %v, window %d: %s differs:\nwant %+v\n got %+v", reuse, i, d, want, got)
			}
		}
	}
}

// windowDiff names the first field of two windows that differs (an empty list equals a nil one).
func windowDiff(a, b *Window) string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for f := 0; f < va.NumField(); f++ {
		x, y := va.Field(f), vb.Field(f)
		if x.Kind() == reflect.Slice && x.Len() == 0 && y.Len() == 0 {
			continue
		}
		if !reflect.DeepEqual(x.Interface(), y.Interface()) {
			return va.Type().Field(f).Name
		}
	}
	return ""
}

// Topics first seen out of name order (across processes, and a vanished
// endpoint folded into a topic nothing lives on any more) come out in name
// order, each with its own endpoints and counts, in a fresh scratch and a
// reused one alike.
func TestTopicsInNameOrder(t *testing.T) {
	gen := func(e segment.Endpoint, g uint32, base uint64) segment.Endpoint {
		e.Generation, e.Base[segment.SlotInter] = g, base
		return e
	}
	prev := &segment.Scan{Mono: 10 * sec, Snapshots: []*segment.Snapshot{
		snap("p", sec, true, gen(ep(0, segment.KindPublisher, "/zz", sec, 50, 0), 1, 0), ep(1, segment.KindSubscription, "/mm", sec, 10, 0)),
	}}
	cur := &segment.Scan{Mono: 11 * sec, Snapshots: []*segment.Snapshot{
		// slot 0 reused: /zz's publisher ended at 60, /aa's has published 5 since
		snap("p", sec, true, gen(ep(0, segment.KindPublisher, "/aa", 10500*sec/1000, 5, 0), 2, 60), ep(1, segment.KindSubscription, "/mm", sec, 20, 0)),
		snap("qq", 10*sec, true, ep(0, segment.KindPublisher, "/mm", 10*sec, 30, 0), ep(1, segment.KindSubscription, "/aa", 10*sec, 4, 0)),
	}}
	for _, reuse := range []bool{false, true} {
		sc := Scratch{ReuseWindows: reuse}
		for round := 0; round < 2; round++ { // the second round reuses the first's renumbering
			w := sc.Compute(prev, cur, 0, 1, Options{})
			var names []string
			for _, tp := range w.Topics {
				names = append(names, tp.Name)
			}
			if !reflect.DeepEqual(names, []string{"/aa", "/mm", "/zz"}) {
				t.Fatalf("reuse %v round %d: topics %q", reuse, round, names)
			}
			want := map[string][2]uint64{"/aa": {5, 4}, "/mm": {30, 10}, "/zz": {10, 0}} // published, received in the window
			for _, tp := range w.Topics {
				var pub, recv uint64
				for _, e := range tp.Pubs {
					pub += e.Delta[0]
				}
				for _, e := range tp.Subs {
					recv += e.Delta[0]
				}
				if got := [2]uint64{pub, recv}; got != want[tp.Name] {
					t.Errorf("reuse %v round %d: %s published and received %v, want %v", reuse, round, tp.Name, got, want[tp.Name])
				}
			}
		}
	}
}

// A scratch keeps its last topic order while the same topics come in the
// same first-seen numbering; as many topics under other names are put in
// their own order.
func TestTopicOrderFollowsRenamedTopics(t *testing.T) {
	scanOf := func(mono uint64, names ...string) *segment.Scan {
		var eps []segment.Endpoint
		for i, n := range names {
			eps = append(eps, ep(i, segment.KindPublisher, n, sec, uint64(mono/sec)*10, 0))
		}
		return &segment.Scan{Mono: mono, Snapshots: []*segment.Snapshot{snap("p", sec, true, eps...)}}
	}
	for _, reuse := range []bool{false, true} {
		sc := Scratch{ReuseWindows: reuse}
		for round, names := range [][]string{{"/c", "/a", "/b"}, {"/c", "/a", "/b"}, {"/c", "/z", "/b"}, {"/y", "/z", "/b"}} {
			w := sc.Compute(scanOf(10*sec, names...), scanOf(11*sec, names...), 0, 1, Options{})
			var got []string
			for _, tp := range w.Topics {
				got = append(got, tp.Name)
				if len(tp.Pubs) != 1 || tp.Pubs[0].Delta[0] != 10 {
					t.Errorf("reuse %v round %d: %s's publishers %+v", reuse, round, tp.Name, tp.Pubs)
				}
			}
			want := slices.Sorted(slices.Values(names))
			if !slices.Equal(got, want) {
				t.Errorf("reuse %v round %d: topics %q, want %q", reuse, round, got, want)
			}
		}
	}
}

// Timers come out in node and ordinal order, each with its own counts, in a
// fresh scratch and a reused one, while the same timers stay and when
// another process's take their place.
func TestTimersInNodeOrder(t *testing.T) {
	scanOf := func(mono uint64, procs ...string) *segment.Scan {
		sc := &segment.Scan{Mono: mono}
		for _, p := range procs {
			var eps []segment.Endpoint
			for k := range len(p) { // a process named "bb" has two timers
				eps = append(eps, ep(k, segment.KindTimer, "", sec, uint64(mono/sec)*uint64(len(p)*10+k), 0))
			}
			sc.Snapshots = append(sc.Snapshots, snap(p, sec, true, eps...))
		}
		return sc
	}
	for _, reuse := range []bool{false, true} {
		sc := Scratch{ReuseWindows: reuse}
		for round, procs := range [][]string{{"bb", "a"}, {"bb", "a"}, {"ccc", "a"}, {"a", "ccc"}} {
			w := sc.Compute(scanOf(10*sec, procs...), scanOf(11*sec, procs...), 0, 1, Options{})
			var got []string
			for _, tm := range w.Timers {
				got = append(got, fmt.Sprintf("%s#%d@%d:%d", tm.Node, tm.Ordinal, tm.Pid, tm.Delta))
			}
			var want []string
			for _, p := range slices.Sorted(slices.Values(procs)) {
				for k := range len(p) {
					want = append(want, fmt.Sprintf("/n%s#%d@%d:%d", p, k, len(p), len(p)*10+k))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("reuse %v round %d: timers %q, want %q", reuse, round, got, want)
			}
		}
	}
}
