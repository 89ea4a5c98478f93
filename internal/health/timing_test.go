package health

import (
	"strings"
	"testing"

	"ros2_pulse/internal/window"
)

// Timing rules: a slow callback of a topic and of a node, a late and
// overrunning timer, a busy node; each unmeasurable case says why.
func TestTimingRules(t *testing.T) {
	e := New(mustSpec(t, `callbacks:
  /scan: {max_ms: 20}
  /planner: {max_ms: 5}
  /py_node: {max_ms: 5}
timers:
  /controller: {max_late_ms: 2, max_overruns: 0}
  /py_node: {max_late_ms: 2, max_overruns: 0}
  /old: {max_late_ms: 2}
nodes:
  /controller: {max_busy_pct: 80}
  /py_node: {max_busy_pct: 80}
`))
	w := win(nil, []string{"/controller", "/planner", "/py_node", "/old"}, []window.Timer{
		{Node: "/controller", Pid: 1, LateKnown: true, Late: window.Durations{N: 100, MaxMs: 3.5}, Overruns: 2, Timed: true},
		{Node: "/py_node", Pid: 2, LateKnown: true, Late: window.Durations{N: 10, MaxMs: 0.5}, Why: window.NoCallbackTracepoint},
		{Node: "/old", Pid: 3}, // a probe before ABI 1.4: no lateness
	})
	w.Callbacks = []window.Callback{
		{Pid: 1, Node: "/controller", Kind: "subscription", Name: "/scan", Measured: true, Duration: window.Durations{N: 10, MaxMs: 23}},
		{Pid: 1, Node: "/controller", Kind: "subscription", Name: "/odom", Measured: true, Duration: window.Durations{N: 10, MaxMs: 40}}, // no rule
		{Pid: 4, Node: "/planner", Kind: "timer", Measured: true, Duration: window.Durations{N: 5, MaxMs: 4.9}},                          // within
		{Pid: 4, Node: "/planner", Kind: "service", Name: "/plan", Measured: true, Duration: window.Durations{N: 1, MaxMs: 250}},
		{Pid: 2, Node: "/py_node", Kind: "subscription", Name: "/cmd", Why: window.NoCallbackTracepoint},
	}
	w.Busy = []window.NodeBusy{{Node: "/controller", Pid: 1, Pct: 97, Measured: true}, {Node: "/py_node", Pid: 2}}
	got := map[string]Warning{}
	for _, x := range judge(e, w) {
		got[string(x.Kind)+" "+x.Node+" "+x.Metric+" "+x.Topic] = x
	}
	want := map[string]func(Warning) bool{
		"callback_slow /controller subscription /scan": func(x Warning) bool { return x.Value == 23 && x.Bound == 20 && x.Pid == 1 },
		"callback_slow /planner service /plan":         func(x Warning) bool { return x.Value == 250 && x.Bound == 5 },
		"cannot_judge  callback /py_node":              func(x Warning) bool { return x.Reason == NoCallbackTiming && strings.Contains(x.Why(), "rclpy") },
		"timer_late /controller  ":                     func(x Warning) bool { return x.Value == 3.5 && x.Bound == 2 },
		"timer_overrun /controller  ":                  func(x Warning) bool { return x.Value == 2 && x.Bound == 0 },
		"cannot_judge /py_node timer_overrun ":         func(x Warning) bool { return x.Reason == NoCallbackTiming },
		"cannot_judge /old timer_late ":                func(x Warning) bool { return x.Reason == TimingOff && strings.Contains(x.Why(), "ROS_PULSE_TIMING=0") },
		"node_busy /controller  ":                      func(x Warning) bool { return x.Value == 97 && x.Bound == 80 },
		"cannot_judge /py_node busy ":                  func(x Warning) bool { return x.Reason == NoCallbackTiming },
	}
	for k, ok := range want {
		if x, found := got[k]; !found || !ok(x) {
			t.Errorf("%s: got %+v (found %v)", k, x, found)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d verdicts, want %d: %v", len(got), len(want), got)
	}
}
