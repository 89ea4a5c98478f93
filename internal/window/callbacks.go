package window

import (
	"math"
	"math/bits"
	"sort"

	"ros2_pulse/internal/segment"
)

// TimeBucketBounds returns the duration range [lo, hi) in nanoseconds of
// bucket b of rp_timing (segment.h): 8 linear buckets of 1024 ns, then 8 per
// octave. The last bucket is open-ended (hi = +Inf).
func TimeBucketBounds(b int) (lo, hi float64) {
	return timeBounds[b], timeBounds[b+1]
}

// timeBounds[b] is bucket b's lower bound, and timeBounds[TimeBuckets] +Inf:
// a window looks bounds up ~10,000 times at robot size.
var timeBounds = func() (t [segment.TimeBuckets + 1]float64) {
	for b := range segment.TimeBuckets {
		t[b], t[b+1] = logLinearBounds(b, 8, segment.TimeBuckets)
	}
	return t
}()

// Durations describes the durations (callbacks, or a timer's lateness)
// counted in one window, from the histogram's bucket deltas.
type Durations struct {
	N      uint64
	SumMs  float64 // exact
	MeanMs float64 // exact
	// MaxMs: the longest took at least this: the lower bound of the highest
	// bucket, or the mean when that is larger (never above the truth, at
	// most 12.5 % below), so a max_ms verdict is never a false alarm.
	// Quantiles: the middle of their bucket (within 6.25 %), at most MaxMs;
	// the mean when every duration fell in one bucket.
	P50Ms, P90Ms, P99Ms, MaxMs float64
}

// durAcc merges duration histograms over a window.
type durAcc struct {
	delta [segment.TimeBuckets]uint64
	n     uint64
	sumNs uint64
}

// add diffs two readings of one histogram; prev nil counts everything.
func (a *durAcc) add(prevSum uint64, prev *[segment.TimeBuckets]uint32, sum uint64, cur *[segment.TimeBuckets]uint32) {
	a.sumNs += sum - prevSum
	for b := range a.delta {
		d := cur[b]
		if prev != nil {
			d -= prev[b] // modular: right across one wrap
		}
		a.delta[b] += uint64(d)
		a.n += uint64(d)
	}
}

func (a *durAcc) stats() Durations {
	return histStats(&a.delta, nonZero(&a.delta), a.n, a.sumNs)
}

// histStats summarises n durations summing sumNs, counted by bucket in
// delta, whose non-zero buckets are nz (nonZero): one pass for the buckets
// used and the highest, one over those for the three quantiles.
func histStats[T uint32 | uint64](delta *[segment.TimeBuckets]T, nz segment.BucketSet, n, sumNs uint64) Durations {
	st := Durations{N: n, SumMs: float64(sumNs) / 1e6}
	if n == 0 {
		return st
	}
	st.MeanMs = st.SumMs / float64(n)
	used, top := 0, 0
	for w, m := range nz {
		if m != 0 {
			used += bits.OnesCount64(m)
			top = w*64 + 63 - bits.LeadingZeros64(m)
		}
	}
	lo, _ := TimeBucketBounds(top)
	st.MaxMs = math.Max(lo/1e6, st.MeanMs)
	if used == 1 { // one bucket: the exact mean is the best figure for every quantile
		st.P50Ms, st.P90Ms, st.P99Ms = st.MeanMs, st.MeanMs, st.MeanMs
		return st
	}
	var need [3]uint64 // the count each quantile is reached at
	for k, q := range [3]float64{0.5, 0.9, 0.99} {
		need[k] = uint64(math.Ceil(q * float64(n)))
	}
	var at [3]float64
	k := 0
	var acc uint64
	for b := range nz.Each() {
		acc += uint64(delta[b])
		for ; k < len(need) && acc >= need[k]; k++ {
			lo, hi := TimeBucketBounds(b)
			at[k] = (lo + hi) / 2e6
			if math.IsInf(hi, 1) {
				at[k] = lo / 1e6
			}
		}
		if k == len(need) {
			break
		}
	}
	for ; k < len(need); k++ {
		at[k] = st.MaxMs
	}
	st.P50Ms, st.P90Ms, st.P99Ms = math.Min(at[0], st.MaxMs), math.Min(at[1], st.MaxMs), math.Min(at[2], st.MaxMs)
	return st
}

// nonZero is the buckets of delta that are not 0.
func nonZero[T uint32 | uint64](delta *[segment.TimeBuckets]T) segment.BucketSet {
	var nz segment.BucketSet
	for b, d := range delta {
		if d != 0 {
			nz[b/64] |= 1 << (b % 64)
		}
	}
	return nz
}

// Callback is the callbacks of one subscription, timer or service over the
// window. Callbacks are timed from callback_start to callback_end, which
// rclcpp fires; rclpy fires neither, so its callbacks are not measured
// (Measured false), never zero.
type Callback struct {
	Pid      int
	Node     string // "" when the probe links it to no node
	Kind     string // "subscription", "timer" or "service"
	Name     string // topic or service name; "" for a timer (Ordinal and PeriodMs name it)
	Ordinal  int    // timers: among the node's timers in creation order
	PeriodMs float64
	Function string // its function as rclcpp registered it (demangled), "" when unknown
	Duration Durations
	Unended  uint64 // starts whose end never came (an exception, a deferred service response)
	Measured bool
	Why      string // when not measured: NoCallbackTracepoint or TimingOff
}

// Why a callback's durations are not measured.
const (
	NoCallbackTracepoint = "no_callback_tracepoint" // rclpy (or plain rcl): no callback_start/callback_end
	TimingOff            = "timing_off"             // its process runs with ROS_PULSE_TIMING=0, or an older probe
)

// Thread is one thread that ran callbacks, over the window: the share of the
// window it spent inside its outermost callbacks (a callback still running
// at the window's end counts up to then).
type Thread struct {
	Pid       int
	Tid       int
	Name      string
	Node      string // the node of its last callback
	BusyPct   float64
	Callbacks uint64
	// OutsideWaitPct: the share of the window it spent outside rcl_wait,
	// working (any client library's executor: rclpy's only measure of busy);
	// Waiter: the thread waits through rcl_wait at all (else not an executor
	// thread, and OutsideWaitPct means nothing).
	OutsideWaitPct float64
	Waiter         bool
}

// Load is how much of the window the thread had no time to wait: its share
// outside rcl_wait where it waits through rcl (rclpy's only measure; for
// rclcpp it also holds the executor's own work between waits), else its
// share inside callbacks.
func (t Thread) Load() float64 {
	if t.Waiter {
		return math.Max(t.BusyPct, t.OutsideWaitPct)
	}
	return t.BusyPct
}

// ProcBusy rolls a process's executor threads up: the busiest one (a single
// saturated thread starves every node it serves, however idle the others)
// and the sum (in percent of one core).
type ProcBusy struct {
	Pid         int
	Threads     int
	BusiestPct  float64
	BusiestTid  int
	BusiestName string
	TotalPct    float64
}

// ProcessBusy rolls the window's threads up per process.
func ProcessBusy(threads []Thread) map[int]ProcBusy {
	out := map[int]ProcBusy{}
	for _, t := range threads {
		p, seen := out[t.Pid]
		l := t.Load()
		p.Pid = t.Pid
		p.Threads++
		p.TotalPct += l
		if !seen || l > p.BusiestPct {
			p.BusiestPct, p.BusiestTid, p.BusiestName = l, t.Tid, t.Name
		}
		out[t.Pid] = p
	}
	return out
}

// NodeBusy is the share of the window a node spent in its callbacks (the sum
// of their durations: above 100 % when they run on several threads at once).
type NodeBusy struct {
	Node     string
	Pid      int
	Pct      float64
	Measured bool // some callback of the node is timed, or FromWait
	// FromWait: its callbacks are not timed (rclpy), and Pct is the share of
	// the window its executor thread spent outside rcl_wait instead.
	FromWait bool
}

// busyFromWaits fills the busy share of nodes whose callbacks are not timed
// from their threads' time outside rcl_wait (the node a thread serves is
// known for a process with one node).
func busyFromWaits(busy []NodeBusy, threads []Thread) {
	for i := range busy {
		b := &busy[i]
		if b.Measured {
			continue
		}
		for _, th := range threads {
			if th.Waiter && th.Pid == b.Pid && th.Node == b.Node {
				b.Pct, b.Measured, b.FromWait = math.Max(b.Pct, th.OutsideWaitPct), true, true
			}
		}
	}
}

// NodeOf names an endpoint's node: its linked node, or for a timer with no
// link (rclpy's: rcl_timer_init names no node) the process's node when it
// has exactly one. "" when unknown.
func NodeOf(s *segment.Snapshot, e *segment.Endpoint) string {
	if e.Node >= 0 && e.Node < len(s.Nodes) {
		return s.Nodes[e.Node].Name
	}
	if e.Kind == segment.KindTimer && len(s.Nodes) == 1 {
		return s.Nodes[0].Name
	}
	return ""
}

var kindNames = map[segment.Kind]string{segment.KindSubscription: "subscription", segment.KindTimer: "timer", segment.KindService: "service"}

// callbackOf diffs one endpoint's timing over the window. base is its
// reading at the window start (nil: count everything).
func callbackOf(s *segment.Snapshot, e, base *segment.Endpoint) Callback {
	c := Callback{Pid: s.Pid, Kind: kindNames[e.Kind], Name: e.Name, Node: NodeOf(s, e)}
	if e.Kind == segment.KindTimer {
		c.Name, c.PeriodMs = "", float64(e.Aux)/1e6
	}
	// rclcpp marks what it delivers for; a subscription's callbacks are timed only then
	c.Measured = e.Timing != nil && e.Flags&segment.FlagRclcpp != 0
	switch {
	case e.Timing == nil:
		c.Why = TimingOff
		return c
	case !c.Measured:
		c.Why = NoCallbackTracepoint
		return c
	}
	c.Function = e.Timing.Function
	var prev *segment.Timing
	if base != nil {
		prev = base.Timing
	}
	c.Duration = CallbackDurations(prev, e.Timing)
	if prev != nil {
		c.Unended = sub(e.Timing.Unended, prev.Unended)
	} else {
		c.Unended = e.Timing.Unended
	}
	return c
}

// durationsBetween summarises one histogram from a reading (prevSum, prev;
// prev nil: from its creation) to another, walking only the buckets in set
// (both readings' marks; AllBuckets for a record without them).
func durationsBetween(prevSum uint64, prev *[segment.TimeBuckets]uint32, sum uint64, cur *[segment.TimeBuckets]uint32, set *segment.BucketSet) Durations {
	var delta [segment.TimeBuckets]uint32 // half a durAcc, on the stack
	var n uint64
	var nz segment.BucketSet // the buckets that changed: histStats walks only those
	diff := func(b int) {
		d := cur[b]
		if prev != nil {
			d -= prev[b] // modular: right across one wrap
		}
		if d != 0 {
			delta[b] = d
			n += uint64(d)
			nz[b/64] |= 1 << (b % 64)
		}
	}
	if *set == segment.AllBuckets { // a record without marks (ABI < 1.10)
		for b := range delta {
			diff(b)
		}
	} else {
		for b := range set.Each() {
			diff(b)
		}
	}
	return histStats(&delta, nz, n, sum-prevSum)
}

// either is the buckets two readings of one histogram may use between them.
func either(a, b *segment.BucketSet) *segment.BucketSet {
	var u segment.BucketSet
	for w := range u {
		u[w] = a[w] | b[w]
	}
	return &u
}

// CallbackDurations summarises an endpoint's callback durations from prev
// (nil: from its creation) to cur.
func CallbackDurations(prev, cur *segment.Timing) Durations {
	switch {
	case cur == nil || cur.SumNs == 0: // never timed (segment.readTiming reads no buckets)
		return Durations{}
	case prev == nil:
		return durationsBetween(0, nil, cur.SumNs, &cur.Buckets, &cur.Used)
	}
	return durationsBetween(prev.SumNs, &prev.Buckets, cur.SumNs, &cur.Buckets, either(&prev.Used, &cur.Used))
}

// TimerLateness summarises a timer's lateness from prev (nil: from its creation) to cur.
func TimerLateness(prev, cur *segment.Lateness) Durations {
	switch {
	case cur == nil:
		return Durations{}
	case prev == nil:
		return durationsBetween(0, nil, cur.SumNs, &cur.Buckets, &cur.Used)
	}
	return durationsBetween(prev.SumNs, &prev.Buckets, cur.SumNs, &cur.Buckets, either(&prev.Used, &cur.Used))
}

// lateness diffs a timer's calls against its schedule, and its overruns.
func lateness(e, base *segment.Endpoint) (Durations, uint64, bool) {
	if e.Lateness == nil {
		return Durations{}, 0, false
	}
	var prev *segment.Lateness
	var prevOver uint64
	if base != nil {
		prev = base.Lateness
		if base.Timing != nil {
			prevOver = base.Timing.Overruns
		}
	}
	return TimerLateness(prev, e.Lateness), sub(e.Timing.Overruns, prevOver), true
}

// threadsOf is the busy share of each thread of a live process that has a
// baseline in the previous scan (a thread first seen now shows next window).
func threadsOf(s, old *segment.Snapshot, t1, t2 uint64) []Thread {
	if old == nil || !s.Alive || t2 <= t1 {
		return nil
	}
	var out []Thread
	for i := range s.Threads {
		th := &s.Threads[i]
		var was *segment.Thread
		for j := range old.Threads {
			if old.Threads[j].Lane == th.Lane && old.Threads[j].Tid == th.Tid {
				was = &old.Threads[j]
			}
		}
		if was == nil {
			continue
		}
		busy := sub(th.BusyAt(t2), was.BusyAt(t1))
		t := Thread{Pid: s.Pid, Tid: th.Tid, Name: th.Name, Callbacks: sub(th.Callbacks, was.Callbacks),
			BusyPct: math.Min(100, 100*float64(busy)/float64(t2-t1))}
		if th.Node >= 0 && th.Node < len(s.Nodes) {
			t.Node = s.Nodes[th.Node].Name
		}
		if t.Waiter = th.Waiter(); t.Waiter { // a thread in one long callback waits no more, and is 100 % out
			wait := sub(th.WaitAt(t2), was.WaitAt(t1))
			t.OutsideWaitPct = math.Max(0, 100-100*float64(wait)/float64(t2-t1))
		}
		if t.Node == "" && len(s.Nodes) == 1 { // an rclpy executor: its process's one node
			t.Node = s.Nodes[0].Name
		}
		out = append(out, t)
	}
	return out
}

// nodeBusy sums each node's callback time over the window.
func nodeBusy(cbs []Callback, seconds float64) []NodeBusy {
	type key struct {
		node string
		pid  int
	}
	idx := map[key]int{}
	var out []NodeBusy
	for _, c := range cbs {
		if c.Node == "" {
			continue
		}
		k := key{c.Node, c.Pid}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, NodeBusy{Node: c.Node, Pid: c.Pid})
		}
		if c.Measured {
			out[i].Measured = true
			if seconds > 0 {
				out[i].Pct += c.Duration.SumMs / 10 / seconds
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return out[i].Pid < out[j].Pid
	})
	return out
}

// Wakeups counts, per process, the callbacks and takes the probe saw in the
// window: every delivery (inter and intra), timer fire and service request
// handled. It is what a process's CPU is divided by for the cost of a
// wake-up: in a process with several nodes, each node reads its process's
// figure (CPU time is the process's; nothing splits it by node). An rclpy
// service's requests are not seen, so its process's cost reads high.
func Wakeups(w *Window) map[int]uint64 {
	out := map[int]uint64{}
	for i := range w.Topics {
		for _, s := range w.Topics[i].Subs {
			out[s.Pid] += s.Delta[0] + s.Delta[1]
		}
	}
	for _, tm := range w.Timers {
		out[tm.Pid] += tm.Delta
	}
	for _, sv := range w.Services {
		out[sv.Pid] += sv.Delta
	}
	return out
}

// SnapshotWakeups is Wakeups' count since the process started: what the
// exporter serves as a counter.
func SnapshotWakeups(s *segment.Snapshot) uint64 {
	var n uint64
	for i := range s.Endpoints {
		e := &s.Endpoints[i]
		if e.Kind != segment.KindPublisher {
			n += e.Counts[segment.SlotInter] + e.Counts[segment.SlotIntra]
		}
	}
	return n
}
