package logfmt

import (
	"math"
	"sort"

	"ros2_pulse/internal/window"
)

// SplitDetail separates a log's detail windows (pulse record --detail) from
// its timeline: the lean windows and whole windows, in file order. Each is
// judged on its own: a detail window overlaps the lean windows it covers.
func SplitDetail(ws []*window.Window) (timeline, detail []*window.Window) {
	for _, w := range ws {
		if w.Detail {
			detail = append(detail, w)
		} else {
			timeline = append(timeline, w)
		}
	}
	return timeline, detail
}

// Replayed is a log as a replay shows it: its timeline, every lean window
// given the detail of the detail window that covers it (the first one
// written at or after it, else the last), its counts scaled to the lean
// window's length. A replayed lean window shows the minute's callbacks,
// timers, threads and calls: their durations and shares as measured over
// the minute, their counts as that minute's average over the window.
func Replayed(ws []*window.Window) []*window.Window {
	timeline, detail := SplitDetail(ws)
	if len(detail) == 0 {
		return timeline
	}
	out := make([]*window.Window, len(timeline))
	for i, w := range timeline {
		out[i] = w
		if !w.Lean {
			continue
		}
		k := sort.Search(len(detail), func(k int) bool { return detail[k].TsNs >= w.TsNs })
		if k == len(detail) {
			k--
		}
		if detail[k].Run == w.Run && detail[k].Seconds > 0 {
			out[i] = borrow(w, detail[k])
		}
	}
	return out
}

// borrow is lean with d's detail, counts scaled by the ratio of lengths.
func borrow(lean, d *window.Window) *window.Window {
	f := lean.Seconds / d.Seconds
	n := func(v uint64) uint64 { // a count that happened stays at least one
		if v == 0 {
			return 0
		}
		return max(1, uint64(math.Round(float64(v)*f)))
	}
	dur := func(x window.Durations) window.Durations {
		x.N, x.SumMs = n(x.N), x.SumMs*f
		return x
	}
	w := *lean
	w.Lean = false
	w.Timers = make([]window.Timer, len(d.Timers))
	for i, t := range d.Timers {
		t.Delta, t.Late, t.Overruns = n(t.Delta), dur(t.Late), n(t.Overruns)
		w.Timers[i] = t
	}
	w.Callbacks = make([]window.Callback, len(d.Callbacks))
	for i, c := range d.Callbacks {
		c.Duration, c.Unended = dur(c.Duration), n(c.Unended)
		w.Callbacks[i] = c
	}
	w.Threads = make([]window.Thread, len(d.Threads))
	for i, t := range d.Threads {
		t.Callbacks = n(t.Callbacks)
		w.Threads[i] = t
	}
	w.Services = make([]window.Service, len(d.Services))
	for i, s := range d.Services {
		s.Delta = n(s.Delta)
		w.Services[i] = s
	}
	w.Calls = make([]window.Call, len(d.Calls))
	for i, c := range d.Calls {
		c.Started, c.Answered, c.Time = n(c.Started), n(c.Answered), dur(c.Time)
		c.Evicted, c.Unmatched, c.SendFailed = n(c.Evicted), n(c.Unmatched), n(c.SendFailed)
		c.Hist = append([]window.Bucket(nil), c.Hist...)
		for j := range c.Hist {
			c.Hist[j].N = n(c.Hist[j].N)
		}
		w.Calls[i] = c
	}
	w.Busy = d.Busy
	// Endpoints: the minute's, under the window's own topic rates.
	eps := map[string]*window.Topic{}
	for i := range d.Topics {
		eps[d.Topics[i].Name] = &d.Topics[i]
	}
	w.Topics = make([]window.Topic, len(lean.Topics))
	for i, t := range lean.Topics {
		if dt := eps[t.Name]; dt != nil && len(t.Pubs)+len(t.Subs) == 0 {
			t.Pubs, t.Subs = dt.Pubs, dt.Subs
		}
		w.Topics[i] = t
	}
	return &w
}
