package window

import (
	"cmp"
	"slices"
	"strings"

	"ros2_pulse/internal/segment"
)

// Scratch is the memory one caller computes its windows in, kept from one
// window to the next (the recorder keeps one): Compute's own maps and lists
// are cleared and refilled instead of made again every sample, where they
// were most of a reader's garbage and so most of its collector's work.
//
// With ReuseWindows the next window also takes the previous window's lists
// (its topics, their endpoint rates, processes, callbacks, ...): the caller
// promises to keep no window, nor any list of one, past its next Compute.
// pulse record renders each window and drops it; views that keep windows
// (top, web, export) leave it off. A Scratch is not safe for concurrent use.
type Scratch struct {
	ReuseWindows bool

	before    map[string]*segment.Snapshot
	index     map[string]int32
	liveNodes map[string]bool
	topicOf   []int32
	sizes     [][2]int
	renumber  renumbering
	gapAccs   []*[3]gapAcc

	last *Window        // the previous window, when ReuseWindows
	slab []EndpointRate // the previous window's endpoint rates, when ReuseWindows

	timerOrder []int32    // sortTimers' permutation
	timerKeys  []timerKey // the timers it sorted, as they came
	timerSpare []Timer    // the list the sorted timers go to next, when ReuseWindows
}

// timerKey is what orders a timer.
type timerKey struct {
	node    string
	ordinal int
}

// sortTimers returns ts in node and ordinal order, stably: the order is
// sorted as indices and each timer moved once, and the same timers coming
// in the same order as last window keep last window's order. Sorting the
// timers themselves moved ~750 of them of ~200 bytes many times, 5 % of a
// robot's window. ts is kept as the next window's spare when ReuseWindows.
func (sc *Scratch) sortTimers(ts []Timer) []Timer {
	same := len(sc.timerKeys) == len(ts) && len(sc.timerOrder) == len(ts)
	sc.timerKeys = grow(sc.timerKeys[:0], len(ts))[:len(ts)]
	for i := range ts {
		k := timerKey{ts[i].Node, ts[i].Ordinal}
		same = same && sc.timerKeys[i] == k
		sc.timerKeys[i] = k
	}
	if !same {
		order := grow(sc.timerOrder[:0], len(ts))[:len(ts)]
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortStableFunc(order, func(a, b int32) int {
			return cmp.Or(strings.Compare(ts[a].Node, ts[b].Node), cmp.Compare(ts[a].Ordinal, ts[b].Ordinal))
		})
		sc.timerOrder = order
	}
	order := sc.timerOrder
	var out []Timer
	if sc.ReuseWindows {
		out, sc.timerSpare = sc.timerSpare[:0], ts
	}
	out = grow(out, len(ts))[:len(ts)]
	for k, i := range order {
		out[k] = ts[i]
	}
	return out
}

// renumbering is the scratch of a window's topics put in name order.
type renumbering struct {
	names       []string // by first-seen number
	order, rank []int32  // order[place] = first-seen number; rank[first-seen number] = place
	sizes       [][2]int // by place, copied back
}

// window is the Window to fill: the previous one emptied (its lists kept)
// when ReuseWindows, else a new one.
func (sc *Scratch) window() *Window {
	if !sc.ReuseWindows || sc.last == nil {
		w := &Window{}
		if sc.ReuseWindows {
			sc.last = w
		}
		return w
	}
	w := sc.last
	*w = Window{Topics: w.Topics[:0], Nodes: w.Nodes[:0], Procs: w.Procs[:0], Timers: w.Timers[:0],
		Services: w.Services[:0], Calls: w.Calls[:0], Callbacks: w.Callbacks[:0], Threads: w.Threads[:0]}
	return w
}

// endpointSlab is room for n endpoint rates: the previous window's when
// they fit and ReuseWindows, else new. Not cleared: Topic.slot writes each
// rate whole before it is filled in.
func (sc *Scratch) endpointSlab(n int) []EndpointRate {
	if !sc.ReuseWindows {
		return make([]EndpointRate, n)
	}
	if cap(sc.slab) < n {
		sc.slab = make([]EndpointRate, n, n+n/8) // a little room: a graph that grows by one endpoint does not reallocate
	}
	return sc.slab[:n]
}

// resetMap empties *m for reuse, making it with room for n entries the first time.
func resetMap[K comparable, V any](m *map[K]V, n int) map[K]V {
	if *m == nil {
		*m = make(map[K]V, n)
	} else {
		clear(*m)
	}
	return *m
}

// grow is s with room for n elements, reallocated only when it has less.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, len(s), n)
	}
	return s
}
