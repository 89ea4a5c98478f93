// Package health judges windows against a spec, machine-wide.
//
// A rule is judged only against endpoints that exist on its side (a
// publisher-only process is never blamed for a missing receive rate).
// Receive rules are judged per subscription, and min_hz also in total. The
// first window and a final partial window are never judged (upstream
// pitfall 19). Nodes use real liveness: a node whose process exited is
// missing at once; a node never seen is missing after a grace period. A
// declared gap rule without gap data is "cannot judge", never a pass.
package health

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// Kind names a warning.
type Kind string

const (
	TopicRate    Kind = "topic_rate"    // a rate outside its bounds
	TopicGap     Kind = "topic_gap"     // a gap longer than max_gap_ms
	TopicMissing Kind = "topic_missing" // no live endpoint on the rule's side
	NodeMissing  Kind = "node_missing"
	TimerRate    Kind = "timer_rate"
	TopicLatency Kind = "topic_latency" // a receive latency above max_latency_ms
	TopicLoss    Kind = "topic_loss"    // a subscription that lost more than max_loss_pct
	TopicBytes   Kind = "topic_bytes"   // a side's bytes a second outside min/max_bytes_per_s
	CannotJudge  Kind = "cannot_judge"  // a rule without the data to judge it (Metric says which rule, Reason why)
	CallbackSlow Kind = "callback_slow" // a callback that ran longer than max_ms
	TimerLate    Kind = "timer_late"    // a timer called later than max_late_ms
	TimerOverrun Kind = "timer_overrun" // more callbacks longer than the period than max_overruns
	NodeBusy     Kind = "node_busy"     // a node whose callbacks took more of the window than max_busy_pct
)

// Why a rule cannot be judged: the reason= of an ALERT cannot_judge line.
const (
	NoGapData         = "no_gap_data"               // a gap rule, and gap tracking is off
	NoLatencyData     = "no_latency_data"           // a latency rule, and latency tracking is off
	NoLocalPublisher  = "no_local_publisher"        // a loss rule, and what was sent happens elsewhere
	PublishNotVisible = "intra_publish_not_visible" // Humble: a publisher's intra-process publishes fire no tracepoint
	NoTimerTracepoint = "no_timer_tracepoint"       // a live node with no timer the probe sees: rclpy's fire none
	NoCallbackTiming  = window.NoCallbackTracepoint // a callback or busy rule on callbacks rclpy runs: no callback tracepoint
	TimingOff         = window.TimingOff            // a timing rule on a process that times nothing (ROS_PULSE_TIMING=0, an older probe)
	NoCallTiming      = "no_call_timing"            // a service rule on a process whose calls are not timed (ROS_PULSE_TIMING=0, a probe before ABI 1.6)
	NoBytesData       = "no_bytes_data"             // a bytes rule, and no endpoint of the side's processes measures bytes
	BytesNotMeasured  = "bytes_not_measured"        // a bytes rule, and messages flowed whose size no type support could tell
)

// reasonText says each reason in words, with what would make the rule judgeable.
var reasonText = map[string]string{
	NoGapData:         "no gap data (run with --jitter or ROS_TOPIC_STATS_JITTER=1)",
	NoLatencyData:     "no latency data (run with ROS_TOPIC_STATS_LATENCY=1)",
	NoLocalPublisher:  "no publisher on this machine, so what was sent is unknown",
	PublishNotVisible: "its intra-process publishes are not visible on Humble (no rclcpp_intra_publish tracepoint)",
	NoTimerTracepoint: "the node is alive but no timer of it fires a tracepoint (rclpy timers fire none)",
	NoCallbackTiming:  "its callbacks fire no callback_start/callback_end (rclpy): their durations are not measured",
	TimingOff:         "its process times no callbacks (ROS_PULSE_TIMING=0, or a probe older than ABI 1.4)",
	NoCallTiming:      "its process does not time service calls (ROS_PULSE_TIMING=0, or a probe older than ABI 1.6)",
	NoBytesData:       "no bytes data (run with ROS_PULSE_BYTES=1)",
	BytesNotMeasured:  "messages flowed whose size could not be read (no introspection type support for their type)",
	NoLinkData:        "no process links its callbacks' inputs to their outputs (run with ROS_PULSE_LINKS=1; pulse run sets it for a spec with paths)",
	PathNotMeasured:   "a hop of the path linked no message in the window: an intra-process or loaned input, a timer's publish, or no traffic",
}

// Why explains a cannot_judge verdict in words.
func (w *Warning) Why() string {
	if t, ok := reasonText[w.Reason]; ok {
		return t
	}
	return w.Reason
}

// Warning is one violated (or unjudgeable) rule in one window.
type Warning struct {
	Kind      Kind
	Topic     string
	Side      spec.Side
	Transport spec.Transport
	Node      string
	Pid       int     // the subscription's (or timer's) process; 0 for machine-wide warnings
	Timer     int     // the timer's ordinal in its node; -1 for every timer / not a timer
	Value     float64 // Hz, ms for gaps, latency, callbacks and lateness, % for loss and busy, overruns, bytes a second
	Min, Max  float64 // the bounds of a rate or bytes rule (Max +Inf when unbounded)
	Bound     float64 // max_gap_ms, max_latency_ms, max_loss_pct, max_ms, max_late_ms, max_overruns or max_busy_pct
	Metric    string  // for CannotJudge: "rate", "gap", "latency", "loss", "timer", "callback", "timer_late", "timer_overrun" or "busy"
	Reason    string  // for CannotJudge: one of the reasons above
	// Cause: for a receive-side verdict (a rate rule, recv_lag, recv_starved),
	// why the subscription cannot hear the topic's publishers, when
	// internal/diagnose knows (window.Unmatched): "qos_incompatible
	// (reliability: publisher best_effort, subscription reliable)"; for a
	// starving subscription (recv_starved, recv_lag at 0 Hz) whose only
	// publishers here run another DDS vendor's RMW, "cross_vendor (…)"
	// (StarvedCause).
	Cause string
	// Fix: for a starved (or stopped) subscription with a Cause, the one line
	// that fixes it (internal/diagnose's), as pulse doctor gives it.
	Fix   string
	Since time.Time
	Age   time.Duration // how long the violation has lasted, as of this window
}

// Key identifies a warning across windows, for its age.
func (w *Warning) Key() string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%d|%d|%s", w.Kind, w.Topic, w.Side, w.Transport, w.Node, w.Pid, w.Timer, w.Metric)
}

// Evaluator keeps what judging needs across windows: nodes ever seen, the
// start of each ongoing violation, and how many windows it has judged.
type Evaluator struct {
	Spec  *spec.Spec
	Grace int // windows before a never-seen node or timer is missing (default 2)

	seen    map[string]bool // nodes ever alive
	since   map[string]time.Time
	windows int
	overdue overdue // service calls open past a rule's bound at the last window's end
}

// New returns an evaluator of s.
func New(s *spec.Spec) *Evaluator {
	return &Evaluator{Spec: s, Grace: 2, seen: map[string]bool{}, since: map[string]time.Time{}}
}

// Judge returns the warnings of w; now stamps their age. A window that is
// the first or a final partial one is recorded but not judged: nil.
func (e *Evaluator) Judge(w *window.Window, final bool, now time.Time) []Warning {
	e.windows++
	for _, n := range w.Nodes {
		e.seen[n] = true
	}
	if e.windows == 1 || final {
		return nil
	}
	var out []Warning
	for _, r := range e.Spec.Topics {
		out = append(out, e.topic(r, w)...)
	}
	out = append(out, judgePaths(e.Spec.Paths, w)...) // a lean window carries its paths too
	alive := map[string]bool{}
	for _, n := range w.Nodes {
		alive[n] = true
	}
	for _, n := range e.Spec.Nodes {
		// Exited (seen before, not alive now): missing at once. Never seen: after the grace.
		if !alive[n] && (e.seen[n] || e.windows > e.Grace) {
			out = append(out, Warning{Kind: NodeMissing, Node: n, Timer: -1})
		}
	}
	if !w.Lean { // a lean window's timers, callbacks and calls are in its record's detail windows
		for _, r := range e.Spec.Timers {
			out = append(out, e.timer(r, w)...)
		}
		out = append(out, judgeTiming(e.Spec, w)...)
		out = append(out, e.judgeServices(w)...)
	}
	for i := range out {
		if o := &out[i]; o.Kind == TopicRate && o.Side == spec.Recv {
			o.Cause = Cause(w, o.Topic, o.Node, o.Pid) // the subscription's own, or (pid 0) the topic's first
		}
	}
	// Ages: a violation keeps the time of the window where it started.
	current := map[string]bool{}
	for i := range out {
		k := out[i].Key()
		current[k] = true
		if _, ok := e.since[k]; !ok {
			e.since[k] = now
		}
		out[i].Since = e.since[k]
		out[i].Age = now.Sub(e.since[k])
	}
	for k := range e.since {
		if !current[k] {
			delete(e.since, k)
		}
	}
	return out
}

func rateOf(t *window.Topic, side spec.Side, tr spec.Transport) float64 {
	if side == spec.Pub {
		switch tr {
		case spec.Inter:
			return t.PubInter
		case spec.Intra:
			return t.PubIntra
		}
		return t.PubAny // one publish() can fire both tracepoints: max, not sum
	}
	switch tr {
	case spec.Inter:
		return t.RecvInter
	case spec.Intra:
		return t.RecvIntra
	}
	return t.RecvInter + t.RecvIntra // disjoint deliveries
}

func outside(v, lo, hi float64) bool { return v < lo || v > hi }

func (e *Evaluator) topic(r spec.TopicRule, w *window.Window) []Warning {
	base := Warning{Topic: r.Topic, Side: r.Side, Transport: r.Transport, Min: r.MinHz, Max: r.MaxHz, Bound: r.MaxGapMs, Timer: -1}
	t := w.Topic(r.Topic)
	live := 0
	if t != nil {
		live = t.PubCount
		if r.Side == spec.Recv {
			live = t.SubCount
		}
	}
	if live == 0 {
		if e.windows > e.Grace {
			m := base
			m.Kind = TopicMissing
			return []Warning{m}
		}
		return nil
	}
	var out []Warning
	if r.HasRate() && r.Side == spec.Pub && !t.PubMeasured(string(r.Transport)) {
		x := base
		x.Kind, x.Metric, x.Reason = CannotJudge, "rate", PublishNotVisible
		out = append(out, x)
	} else if r.HasRate() {
		if v := rateOf(t, r.Side, r.Transport); r.Side == spec.Pub && outside(v, r.MinHz, r.MaxHz) ||
			r.Side == spec.Recv && v < r.MinHz {
			x := base
			x.Kind, x.Value = TopicRate, v
			out = append(out, x)
		}
		if r.Side == spec.Recv { // every live subscription must receive within the bounds
			for _, s := range t.Subs {
				if !s.Alive {
					continue
				}
				v := s.Inter + s.Intra
				switch r.Transport {
				case spec.Inter:
					v = s.Inter
				case spec.Intra:
					v = s.Intra
				}
				if outside(v, r.MinHz, r.MaxHz) {
					x := base
					x.Kind, x.Value, x.Pid, x.Node = TopicRate, v, s.Pid, s.Node
					out = append(out, x)
				}
			}
		}
	}
	if r.HasGap() {
		g := t.PubGap
		if r.Side == spec.Recv {
			g = t.RecvGap
		}
		switch {
		case !g.HasData:
			x := base
			x.Kind, x.Metric, x.Reason = CannotJudge, "gap", NoGapData
			out = append(out, x)
		case g.MaxDtMs() > r.MaxGapMs:
			x := base
			x.Kind, x.Value = TopicGap, g.MaxDtMs()
			out = append(out, x)
		}
	}
	if r.HasLatency() {
		switch g := t.Latency; {
		case !g.HasData:
			x := base
			x.Kind, x.Metric, x.Reason, x.Bound = CannotJudge, "latency", NoLatencyData, r.MaxLatMs
			out = append(out, x)
		case g.N > 0 && g.MaxMs > r.MaxLatMs:
			x := base
			x.Kind, x.Value, x.Bound = TopicLatency, g.MaxMs, r.MaxLatMs
			out = append(out, x)
		}
	}
	if r.HasLoss() {
		out = append(out, lossVerdicts(base, r, t)...)
	}
	if r.HasBytes() {
		out = append(out, bytesVerdict(base, r, t)...)
	}
	return out
}

// bytesVerdict judges a side's bytes a second (design note 0033): its
// endpoints' sum, exact or sampled; not judged where no process measures
// bytes, or where messages flowed that could not be sized.
func bytesVerdict(base Warning, r spec.TopicRule, t *window.Topic) []Warning {
	b := t.PubBytes
	if r.Side == spec.Recv {
		b = t.RecvBytes
	}
	base.Min, base.Max = r.MinBytesPerS, r.MaxBytesPerS
	switch {
	case b.How == "":
		base.Kind, base.Metric, base.Reason = CannotJudge, "bytes", NoBytesData
	case b.How == window.BytesNone:
		base.Kind, base.Metric, base.Reason = CannotJudge, "bytes", BytesNotMeasured
	case outside(b.PerS, r.MinBytesPerS, r.MaxBytesPerS):
		base.Kind, base.Value = TopicBytes, b.PerS
	default:
		return nil
	}
	return []Warning{base}
}

// lossVerdicts judges every subscription judged for loss in the window. A
// topic with no publisher on this machine cannot be judged: its messages
// come from elsewhere, and what was sent is unknown.
func lossVerdicts(base Warning, r spec.TopicRule, t *window.Topic) []Warning {
	base.Bound = r.MaxLossPct
	switch {
	case t.PubCount == 0:
		base.Kind, base.Metric, base.Reason = CannotJudge, "loss", NoLocalPublisher
		return []Warning{base}
	case t.PubHidden:
		base.Kind, base.Metric, base.Reason = CannotJudge, "loss", PublishNotVisible
		return []Warning{base}
	}
	var out []Warning
	for _, s := range t.Subs {
		if s.LossJudged && s.LossPct > r.MaxLossPct {
			x := base
			x.Kind, x.Value, x.Pid, x.Node = TopicLoss, s.LossPct, s.Pid, s.Node
			out = append(out, x)
		}
	}
	if len(t.Subs) == 0 && t.Loss.Judged > 0 && t.Loss.WorstPct > r.MaxLossPct { // read from a log: the worst one only
		x := base
		x.Kind, x.Value, x.Pid, x.Node = TopicLoss, t.Loss.WorstPct, t.Loss.Pid, t.Loss.Node
		out = append(out, x)
	}
	return out
}

func (e *Evaluator) timer(r spec.TimerRule, w *window.Window) []Warning {
	if r.MinHz == 0 {
		return nil // a lateness or overrun rule only (judgeTiming)
	}
	var out []Warning
	found := false
	for _, tm := range w.Timers {
		if tm.Node != r.Node || (r.Ordinal >= 0 && tm.Ordinal != r.Ordinal) {
			continue
		}
		found = true
		if tm.Hz < r.MinHz {
			out = append(out, Warning{Kind: TimerRate, Node: r.Node, Pid: tm.Pid, Timer: tm.Ordinal, Value: tm.Hz, Min: r.MinHz, Max: math.Inf(1)})
		}
	}
	switch {
	case found || e.windows <= e.Grace:
	case slices.Contains(w.Nodes, r.Node):
		// Alive, and no timer of it is seen: an rclpy node (its timers fire no
		// tracepoint), or one without the timer. Not a zero: not judged.
		out = append(out, Warning{Kind: CannotJudge, Metric: "timer", Reason: NoTimerTracepoint, Node: r.Node, Timer: r.Ordinal,
			Min: r.MinHz, Max: math.Inf(1)})
	default:
		out = append(out, Warning{Kind: TimerRate, Node: r.Node, Timer: r.Ordinal, Value: 0, Min: r.MinHz, Max: math.Inf(1)})
	}
	return out
}

// Sort orders warnings as the spec lists them: topics, nodes, timers; stable.
func Sort(ws []Warning) {
	rank := map[Kind]int{TopicRate: 0, TopicGap: 0, TopicLatency: 0, TopicLoss: 0, TopicMissing: 0, CannotJudge: 0, NodeMissing: 1, NodeBusy: 1,
		TimerRate: 2, TimerLate: 2, TimerOverrun: 2, CallbackSlow: 3}
	sort.SliceStable(ws, func(i, j int) bool { return rank[ws[i].Kind] < rank[ws[j].Kind] })
}

// Cause is why a subscription of topic cannot hear its publishers, from the
// window's diagnosis: the subscription's own (node and pid given), or the
// first of the topic's (pid 0); "" when nothing rules them out.
func Cause(w *window.Window, topic, node string, pid int) string {
	for i := range w.Unmatched {
		u := &w.Unmatched[i]
		if u.Pub || !u.Error || u.Topic != topic || (pid != 0 && (u.Pid != pid || u.Node != node)) {
			continue
		}
		return u.Why()
	}
	return ""
}
