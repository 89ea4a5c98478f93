package realros

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/window"
)

// near says whether pulse's mean (ms) agrees with the node's own: pulse times
// from callback_start to callback_end (or rcl_timer_call), a few µs around the
// node's own body, on a machine whose other core may be busy.
func near(pulse, node float64) bool {
	return math.Abs(pulse-node) <= 0.1+0.03*node
}

// TestCallbackTiming: an rclcpp subscription that works 2 ms a message and a
// timer that works 3 ms a call: pulse times every callback the node timed,
// their means agree with the node's, each is named by its function (never a
// tracetools placeholder, with LTTng linked or not), and the timer's lateness
// agrees with what the node measured against its own schedule.
func TestCallbackTiming(t *testing.T) {
	l := setup(t)
	r := l.newRun(t)
	worker := r.node("worker", "cpp", "", "--sub", "/work,2", "--timer", "20,3", "--duration", "7")
	time.Sleep(time.Second)
	r.node("feeder", "cpp", "", "--pub", "/work,50,16", "--duration", "5")
	r.waitAll(30 * time.Second)
	tr := r.truth(worker)
	s := r.scan()
	judged := 0
	for i := range tr.Endpoints {
		e := &tr.Endpoints[i]
		if e.Kind != "subscription" && e.Kind != "timer" {
			continue
		}
		f := lookup(s, tr.Pid, e)
		if len(f.eps) != 1 || f.eps[0].Timing == nil {
			t.Errorf("%s %s: pulse has %d endpoints, timing %v", e.Kind, e.Name, len(f.eps), len(f.eps) == 1 && f.eps[0].Timing != nil)
			continue
		}
		ep := f.eps[0]
		d := window.CallbackDurations(nil, ep.Timing)
		if d.N != e.Callback.N || !near(d.MeanMs, e.Callback.MeanMs()) || e.Callback.N < 50 {
			t.Errorf("%s %s: pulse timed %d callbacks, mean %.3f ms; the node %d, mean %.3f ms", e.Kind, e.Name, d.N, d.MeanMs,
				e.Callback.N, e.Callback.MeanMs())
		}
		table(t, "callback duration: rclcpp "+e.Kind, fmt.Sprintf("%d, mean %.3f ms", d.N, d.MeanMs),
			fmt.Sprintf("%d, mean %.3f ms", e.Callback.N, e.Callback.MeanMs()))
		fn := ep.Timing.Function
		want := map[string]string{"subscription": "TestNode::add_typed_subscription", "timer": "TestNode::add_timer"}[e.Kind] // the lambdas pulse_node registers
		if !strings.Contains(fn, want) || strings.Contains(fn, "DISABLED") {
			t.Errorf("%s %s: pulse names its callback %q, want rclcpp's name of the lambda in %s", e.Kind, e.Name, fn, want)
		}
		if e.Kind == "subscription" {
			table(t, "callback name", fn, "(the lambda in "+want+")")
		}
		if e.Kind == "timer" {
			late := window.TimerLateness(nil, ep.Lateness)
			table(t, "timer lateness", fmt.Sprintf("%d, mean %.3f ms", late.N, late.MeanMs),
				fmt.Sprintf("%d, mean %.3f ms", e.Late.N, e.Late.MeanMs()))
			if late.N != e.Late.N || !near(late.MeanMs, e.Late.MeanMs()) {
				t.Errorf("timer: pulse's lateness %d calls, mean %.3f ms; the node's %d, mean %.3f ms", late.N, late.MeanMs,
					e.Late.N, e.Late.MeanMs())
			}
		}
		judged++
	}
	if judged != 2 {
		t.Errorf("%d callbacks judged, want 2", judged)
	}
}
