package health

import (
	"fmt"
	"time"

	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// RecvLag is a subscription receiving less than the machine's publishers of
// its topic send, for several windows in a row: a slow callback, a starved
// executor, or a lossy QoS. It needs no spec.
const RecvLag Kind = "recv_lag"

// RecvStarved is a subscription that has received nothing at all, for
// several windows in a row, while this machine's publishers of its topic
// publish: a QoS, type, domain or name mismatch, publishers only on another
// DDS vendor's RMW, or an executor that never runs it. It needs no spec. Its
// cause, where StarvedCause finds one, is in the warning's Cause and Fix.
const RecvStarved Kind = "recv_starved"

// LagDetector finds lagging subscriptions. A subscription lags when it
// received less than Fraction of what the topic's live publishers sent (the
// publish "any transport" rate) for Windows consecutive windows, beyond one
// message of counting slack. Publishers on other machines are invisible, so
// only a shortfall is a verdict, never a surplus. A subscription that has
// never delivered is starved instead (RecvStarved), unless its takes may fire
// no tracepoint (window.EndpointRate.RecvHidden: then it is not measured).
type LagDetector struct {
	Fraction float64 // default 0.9
	Windows  int     // default 3

	streak map[subKey]int
	since  map[subKey]time.Time
}

// subKey is a subscription's streak: starved or lagging, on a topic, in a
// process and node. A struct, not a formatted string: every subscription is
// looked at every window.
type subKey struct {
	starved bool
	topic   string
	pid     int
	node    string
}

// NewLagDetector returns a detector with the defaults.
func NewLagDetector() *LagDetector {
	return &LagDetector{Fraction: 0.9, Windows: 3, streak: map[subKey]int{}, since: map[subKey]time.Time{}}
}

// Observe takes the next window and returns the lagging subscriptions, with
// Value the subscription's rate and Min what the publishers sent. A final
// partial window is not judged.
func (d *LagDetector) Observe(w *window.Window, final bool, now time.Time) []Warning {
	if final {
		return nil
	}
	var out []Warning
	current := map[subKey]bool{}
	for i := range w.Topics {
		t := &w.Topics[i]
		if t.PubCount == 0 || t.PubAny <= 0 || !t.PubMeasured("any") {
			continue // nothing, or not all, of what is published is seen
		}
		for _, s := range t.Subs {
			if t.Starved(&s) {
				k := subKey{true, t.Name, s.Pid, s.Node}
				current[k] = true
				if d.tick(k, now) {
					m := Warning{Kind: RecvStarved, Topic: t.Name, Side: spec.Recv, Transport: spec.Any, Node: s.Node, Pid: s.Pid,
						Timer: -1, Value: 0, Min: t.PubAny, Since: d.since[k], Age: now.Sub(d.since[k])}
					if u, ok := StarvedCause(w, t.Name, s.Node, s.Pid); ok {
						m.Cause, m.Fix = u.Why(), u.Fix
					}
					out = append(out, m)
				}
				continue
			}
			if !s.Alive || s.Exposure <= 0 || s.Total[0]+s.Total[1] == 0 {
				continue
			}
			got := s.Inter + s.Intra
			// The subscription's window and the publishers' differ by up to
			// one message each way.
			slack := 1 / s.Exposure
			if got+slack >= d.Fraction*t.PubAny {
				continue
			}
			k := subKey{false, t.Name, s.Pid, s.Node}
			current[k] = true
			if d.tick(k, now) {
				m := Warning{Kind: RecvLag, Topic: t.Name, Side: spec.Recv, Transport: spec.Any, Node: s.Node, Pid: s.Pid,
					Timer: -1, Value: got, Min: t.PubAny, Since: d.since[k], Age: now.Sub(d.since[k])}
				if got == 0 { // it stopped receiving: starving, as one that never received
					if u, ok := StarvedCause(w, t.Name, s.Node, s.Pid); ok {
						m.Cause, m.Fix = u.Why(), u.Fix
					}
				}
				out = append(out, m)
			}
		}
	}
	for k := range d.streak {
		if !current[k] {
			delete(d.streak, k)
			delete(d.since, k)
		}
	}
	return out
}

// StarvedWords says what is known of a starved subscription whose cause is
// not visible, in the words every view uses.
func StarvedWords(pubHz float64) string {
	return fmt.Sprintf("receives nothing of %.1f Hz published here; the cause is not visible yet", pubHz)
}

// tick counts one more window of a streak and reports whether it is long
// enough to say.
func (d *LagDetector) tick(k subKey, now time.Time) bool {
	d.streak[k]++
	if d.streak[k] == 1 {
		d.since[k] = now
	}
	return d.streak[k] >= d.Windows
}

// SegmentFull is not a spec verdict: a process whose segment ran out of
// endpoint slots counts nothing for the entities beyond it. Views show it in
// every window until the process is gone.
const SegmentFull Kind = "segment_full"

// FullSegments warns of every process of the window whose segment dropped
// endpoints (Value: how many).
func FullSegments(w *window.Window) []Warning {
	var out []Warning
	for _, p := range w.Procs {
		if p.Dropped > 0 {
			out = append(out, Warning{Kind: SegmentFull, Pid: p.Pid, Node: p.NodeNames(), Timer: -1, Value: float64(p.Dropped)})
		}
	}
	return out
}

// Unmatched is a publisher or subscription that meets nobody, as
// internal/diagnose finds it in the window (a QoS, type, domain, rmw,
// discovery or name mismatch): a machine warning that needs no spec. Its
// Reason is the diagnosis, its Cause the detail.
const Unmatched Kind = "unmatched"

// UnmatchedWarnings turns the window's diagnoses that meet nobody into
// warnings, except the subscriptions a recv_starved warning among others
// already names with its cause.
func UnmatchedWarnings(w *window.Window, others []Warning) []Warning {
	said := map[string]bool{}
	for _, o := range others {
		if o.Kind == RecvStarved && o.Cause != "" {
			said[fmt.Sprintf("%s|%d|%s", o.Topic, o.Pid, o.Node)] = true
		}
	}
	var out []Warning
	for _, u := range w.Unmatched {
		if !u.Error || (!u.Pub && said[fmt.Sprintf("%s|%d|%s", u.Topic, u.Pid, u.Node)]) {
			continue
		}
		side := spec.Recv
		if u.Pub {
			side = spec.Pub
		}
		out = append(out, Warning{Kind: Unmatched, Topic: u.Topic, Side: side, Transport: spec.Any, Node: u.Node, Pid: u.Pid,
			Timer: -1, Reason: u.Reason, Cause: u.Detail})
	}
	return out
}

// ViewWarnings is what a live view (top, web) shows of a window: the
// verdicts the recorder passed (which already hold its starved
// subscriptions), the subscriptions d finds lagging, the full segments, and
// the endpoints that meet nobody.
func (d *LagDetector) ViewWarnings(w *window.Window, recorded []Warning, final bool, now time.Time) []Warning {
	all := append([]Warning(nil), recorded...)
	for _, m := range d.Observe(w, final, now) {
		if m.Kind == RecvLag { // starved ones came with the recorder's
			all = append(all, m)
		}
	}
	all = append(all, FullSegments(w)...)
	return append(all, UnmatchedWarnings(w, all)...)
}
