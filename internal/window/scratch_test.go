package window

import (
	"reflect"
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
