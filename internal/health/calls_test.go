package health

import (
	"math"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// A client's call is counted as timed out once, in the window it passed the
// bound: answered late in it, or still open past the bound at its end; an
// open call past the bound that is answered in the next window is not
// counted again, and calls given up on count (issue 26).
func TestServiceTimeoutsCountedOnce(t *testing.T) {
	lateBucket := 0 // the first bucket wholly above 100 ms
	for b := 0; ; b++ {
		if lo, _ := window.TimeBucketBounds(b); lo/1e6 >= 100 {
			lateBucket = b
			break
		}
	}
	s := &spec.Spec{Services: []spec.ServiceRule{{Name: "/plan", Client: true, MaxResponseMs: 100, MaxOutstanding: math.Inf(1)}}}
	e := New(s)
	call := func(answeredLate uint64, open []float64, evicted uint64) window.Call {
		c := window.Call{Pid: 1, Node: "/bt", Name: "/plan", Client: true, Alive: true, HasServer: true, Open: open, Evicted: evicted, Hz: 10}
		if answeredLate > 0 {
			c.Hist = []window.Bucket{{B: lateBucket, N: answeredLate}}
		}
		return c
	}
	steps := []struct {
		c    window.Call
		want float64 // timeouts in the window; 0: no verdict
	}{
		{call(0, nil, 0), 0},                   // the first window is never judged
		{call(0, []float64{150, 20}, 0), 1},    // one call open past 100 ms
		{call(1, []float64{120}, 0), 1},        // that one answered late (already counted), the 20 ms one now 120 ms open
		{call(1, nil, 0), 0},                   // the second answered late: counted before
		{call(2, []float64{50}, 1), 3},         // two answered late, never seen open past the bound; one given up on
		{call(0, []float64{30, 10}, 0), 0},     // healthy
		{call(0, []float64{5000, 4000}, 0), 2}, // two calls past the bound (a server gone)
		{call(0, []float64{5500, 4500}, 0), 0}, // still open: counted already
	}
	now := time.Unix(0, 0)
	for i, st := range steps {
		w := &window.Window{Seconds: 0.5, Calls: []window.Call{st.c}}
		ws := e.Judge(w, false, now)
		got := 0.0
		for _, v := range ws {
			if v.Kind == ServiceTimeout {
				got = v.Value
			}
		}
		if got != st.want {
			t.Errorf("window %d: %v timeouts (%+v), want %v", i, got, ws, st.want)
		}
	}
}

// The evaluator forgets the overdue calls of processes that are gone: a
// crash loop of clients, each exiting with a call open past the bound, leaves
// no entry behind once forgetAfter windows have passed; a client missing from
// a window or two and back with the same call open is not counted again.
func TestOverdueCallsForgottenWhenGone(t *testing.T) {
	s := &spec.Spec{Services: []spec.ServiceRule{{Name: "/plan", Client: true, MaxResponseMs: 100, MaxOutstanding: math.Inf(1)}}}
	e := New(s)
	now := time.Unix(0, 0)
	judge := func(calls ...window.Call) float64 {
		got := 0.0
		for _, v := range e.Judge(&window.Window{Seconds: 0.5, Calls: calls}, false, now) {
			if v.Kind == ServiceTimeout {
				got += v.Value
			}
		}
		return got
	}
	client := func(pid int) window.Call {
		return window.Call{Pid: pid, Node: "/bt", Name: "/plan", Client: true, Alive: true, HasServer: true, Open: []float64{500}, Hz: 10}
	}
	judge() // the first window is never judged
	for pid := 1; pid <= 200; pid++ {
		if got := judge(client(pid)); got != 1 {
			t.Fatalf("pid %d: %v timeouts, want 1", pid, got)
		}
	}
	if n := len(e.overdue.entries); n != forgetAfter {
		t.Errorf("%d entries kept after 200 short-lived clients, want the last %d", n, forgetAfter)
	}
	// the last client vanishes from two windows and comes back with its call still open
	judge()
	judge()
	if got := judge(client(200)); got != 0 {
		t.Errorf("a client back after two windows had its open call counted again: %v", got)
	}
	for i := 0; i <= forgetAfter+1; i++ {
		judge()
	}
	if n := len(e.overdue.entries); n != 0 {
		t.Errorf("%d entries kept for clients gone for %d windows", n, forgetAfter+2)
	}
}

// A service rule with min_hz finds no server: service_missing; a server
// rule on a server whose calls are not timed (ROS_PULSE_TIMING=0): cannot
// judge, never a pass; an action's accept and result bounds judge its
// send_goal and get_result calls.
func TestServiceMissingUntimedAndActions(t *testing.T) {
	s := &spec.Spec{
		Services: []spec.ServiceRule{{Name: "/gone", MinHz: 1, MaxResponseMs: math.Inf(1), MaxOutstanding: math.Inf(1)},
			{Name: "/old", MaxResponseMs: 10, MaxOutstanding: math.Inf(1)}},
		Actions: []spec.ActionRule{{Name: "/nav", MaxAcceptMs: 100, MaxResultMs: 100}},
	}
	lateBucket := 0
	for b := 0; ; b++ {
		if lo, _ := window.TimeBucketBounds(b); lo/1e6 >= 100 {
			lateBucket = b
			break
		}
	}
	w := &window.Window{Seconds: 1,
		Services: []window.Service{{Node: "/legacy", Pid: 3, Name: "/old", Measured: true, Delta: 4}},
		Calls: []window.Call{
			{Pid: 2, Node: "/bt", Name: "/nav/_action/send_goal", Client: true, Alive: true, Hz: 1, Hist: []window.Bucket{{B: 3, N: 1}}},
			{Pid: 2, Node: "/bt", Name: "/nav/_action/get_result", Client: true, Alive: true, Hz: 1, Hist: []window.Bucket{{B: lateBucket, N: 1}}},
		}}
	e := New(s)
	e.Judge(w, false, time.Unix(0, 0))
	kinds := map[Kind]string{}
	for _, v := range e.Judge(w, false, time.Unix(1, 0)) {
		kinds[v.Kind] += v.Topic + ":" + v.Metric + ":" + v.Reason + " "
	}
	if kinds[ServiceMissing] != "/gone:: " || kinds[CannotJudge] != "/old:service:"+NoCallTiming+" " || kinds[ActionSlow] != "/nav:result: " {
		t.Errorf("verdicts %v", kinds)
	}
}

// A server whose responses could not be sent in a window (ABI 1.8: its
// clients went away first) is warned of without a spec, with the count; a
// server that refused none, a client, and a server of an older probe (not
// measured) are not.
func TestSendFailures(t *testing.T) {
	w := &window.Window{Calls: []window.Call{
		{Pid: 1, Node: "/worker", Name: "/work", Alive: true, Started: 9, Answered: 6, SendFailed: 3, FailKnown: true},
		{Pid: 1, Node: "/worker", Name: "/fine", Alive: true, Started: 5, Answered: 5, FailKnown: true},
		{Pid: 2, Node: "/caller", Name: "/work", Client: true, Alive: true, Started: 9, Answered: 6},
		{Pid: 3, Node: "/old", Name: "/work", Alive: true, Started: 4, Answered: 4},
	}}
	got := SendFailures(w)
	if len(got) != 1 {
		t.Fatalf("warnings %+v, want one", got)
	}
	if g := got[0]; g.Kind != ServiceSendFailed || g.Topic != "/work" || g.Node != "/worker" || g.Pid != 1 || g.Side != "server" || g.Value != 3 {
		t.Errorf("warning %+v", g)
	}
	if words := SendFailedWords(3); !strings.Contains(words, "3 responses not sent") || !strings.Contains(words, "RCL_RET_TIMEOUT") {
		t.Errorf("words %q", words)
	}
}
