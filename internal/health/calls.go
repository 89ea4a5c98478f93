package health

import (
	"fmt"
	"math"

	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// Service and action verdicts (issue 26).
const (
	ServiceMissing Kind = "service_missing"     // a rule with min_hz, and no live server (or client) of the service
	ServiceRate    Kind = "service_rate"        // a server taking, or a client sending, fewer calls than min_hz
	ServiceSlow    Kind = "service_slow"        // a server's answers later than max_response_ms, or requests open past it
	ServiceTimeout Kind = "service_timeout"     // a client's calls unanswered past max_response_ms: time outs
	ServiceBacklog Kind = "service_outstanding" // more calls open than max_outstanding
	ActionSlow     Kind = "action_slow"         // goals accepted later than max_accept_ms, or results later than max_result_ms
)

// ServiceSendFailed is a server whose responses rcl_send_response refused in
// the window (ABI 1.8): rmw_fastrtps returns RCL_RET_TIMEOUT ("client will
// not receive response") when a request is handled after its client went
// away (it timed out and exited, or crashed, while the request waited).
// rclcpp and rclpy log a warning and move on: the call is lost. It needs no
// spec and is not a spec verdict (the exit status does not change).
const ServiceSendFailed Kind = "service_send_failed"

// SendFailures warns of every server of w whose responses could not be sent
// in the window (Value: how many).
func SendFailures(w *window.Window) []Warning {
	var out []Warning
	for i := range w.Calls {
		if c := &w.Calls[i]; !c.Client && c.SendFailed > 0 {
			out = append(out, Warning{Kind: ServiceSendFailed, Topic: c.Name, Node: c.Node, Pid: c.Pid, Timer: -1,
				Side: spec.Side("server"), Value: float64(c.SendFailed)})
		}
	}
	return out
}

// SendFailedWords says a server's refused responses (n in a window) and
// why, in the words every view uses; SendFailedFix is what to do.
func SendFailedWords(n float64) string {
	return fmt.Sprintf("%.0f responses not sent: their client went away before the answer (rcl_send_response: RCL_RET_TIMEOUT)", n)
}

// SendFailedFix is the fix of ServiceSendFailed.
const SendFailedFix = "answer within the client's timeout, or keep the client until its answer comes"

// callKey names one server or client across windows.
func callKey(c *window.Call) string {
	return fmt.Sprintf("%d %s %s %s", c.Pid, c.Node, c.Name, c.Side())
}

// overdue keeps, per server or client and bound, how many of its calls were
// open past the bound at the end of the previous window: a call is counted
// as timed out once, in the window it passed the bound (window.Call.Timeouts).
// It keeps only what it must: no entry for a call with nothing overdue, and
// none for one that has not been in a window for forgetAfter windows (its
// process exited), so a crash loop of new pids leaves nothing behind.
type overdue struct {
	judged  int // windows judged
	entries map[string]overdueEntry
}

type overdueEntry struct {
	open int // calls open past the bound at the end of window seen
	seen int
}

// forgetAfter is how many windows an entry outlives its call's last one: a
// reader that missed a live process for a window or two must not count its
// overdue calls again.
const forgetAfter = 60

// timeouts counts c's calls that passed boundMs in w, and remembers what is open past it now.
func (o *overdue) timeouts(c *window.Call, boundMs float64, part string) uint64 {
	k := fmt.Sprintf("%s %s %g", callKey(c), part, boundMs)
	n := c.Timeouts(boundMs, o.entries[k].open)
	if open := c.Overdue(boundMs); open > 0 {
		if o.entries == nil {
			o.entries = map[string]overdueEntry{}
		}
		o.entries[k] = overdueEntry{open, o.judged}
	} else {
		delete(o.entries, k)
	}
	return n
}

// next ends a judged window: entries whose call was absent too long go.
func (o *overdue) next() {
	o.judged++
	for k, e := range o.entries {
		if o.judged-e.seen > forgetAfter {
			delete(o.entries, k)
		}
	}
}

// judgeServices judges the service and action rules of s on w.
func (e *Evaluator) judgeServices(w *window.Window) []Warning {
	var out []Warning
	for _, r := range e.Spec.Services {
		out = append(out, e.service(r, w)...)
	}
	for _, r := range e.Spec.Actions {
		out = append(out, e.action(r, w)...)
	}
	e.overdue.next()
	return out
}

func (e *Evaluator) service(r spec.ServiceRule, w *window.Window) []Warning {
	var out []Warning
	found := false
	for i := range w.Calls {
		c := &w.Calls[i]
		if c.Name != r.Name || c.Client != r.Client || !c.Alive {
			continue
		}
		found = true
		base := Warning{Topic: r.Name, Node: c.Node, Pid: c.Pid, Timer: -1, Side: spec.Side(r.Side())}
		if r.MinHz > 0 && c.Hz < r.MinHz {
			v := base
			v.Kind, v.Value, v.Min, v.Max = ServiceRate, c.Hz, r.MinHz, math.Inf(1)
			out = append(out, v)
		}
		if !math.IsInf(r.MaxResponseMs, 1) {
			if n := e.overdue.timeouts(c, r.MaxResponseMs, ""); n > 0 {
				v := base
				v.Kind, v.Value, v.Bound = ServiceSlow, float64(n), r.MaxResponseMs
				if r.Client {
					v.Kind = ServiceTimeout
				}
				out = append(out, v)
			}
		}
		if open := float64(len(c.Open)); open > r.MaxOutstanding {
			v := base
			v.Kind, v.Value, v.Bound = ServiceBacklog, open, r.MaxOutstanding
			out = append(out, v)
		}
	}
	if !found {
		for _, sv := range w.Services { // served, but its calls are not timed
			if sv.Name == r.Name && !r.Client {
				out = append(out, Warning{Kind: CannotJudge, Metric: "service", Reason: NoCallTiming, Topic: r.Name, Node: sv.Node, Pid: sv.Pid,
					Timer: -1, Side: spec.Side(r.Side()), Bound: r.MaxResponseMs})
				found = true
			}
		}
	}
	if !found && r.MinHz > 0 {
		out = append(out, Warning{Kind: ServiceMissing, Topic: r.Name, Timer: -1, Side: spec.Side(r.Side()), Min: r.MinHz, Max: math.Inf(1)})
	}
	return out
}

// action judges an action's send_goal calls against max_accept_ms and its
// get_result calls against max_result_ms, on both sides.
func (e *Evaluator) action(r spec.ActionRule, w *window.Window) []Warning {
	var out []Warning
	for i := range w.Calls {
		c := &w.Calls[i]
		name, part, ok := window.ActionOf(c.Name)
		if !ok || name != r.Name || !c.Alive {
			continue
		}
		bound, what := r.MaxAcceptMs, "accept"
		switch part {
		case "get_result":
			bound, what = r.MaxResultMs, "result"
		case "send_goal":
		default:
			continue
		}
		if math.IsInf(bound, 1) {
			continue
		}
		if n := e.overdue.timeouts(c, bound, what); n > 0 {
			out = append(out, Warning{Kind: ActionSlow, Topic: r.Name, Node: c.Node, Pid: c.Pid, Timer: -1, Side: spec.Side(c.Side()),
				Metric: what, Value: float64(n), Bound: bound})
		}
	}
	return out
}
