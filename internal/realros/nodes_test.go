package realros

import (
	"fmt"
	"math"
	"syscall"
	"testing"
	"time"

	"ros2_pulse/internal/segment"
)

// TestLiveness: pulse tells a running process's nodes from a stopped one's,
// by the probe's lock, not by traffic: both alive while they run, the
// stopped one dead with its nodes listed, the other still alive.
func TestLiveness(t *testing.T) {
	l := setup(t)
	r := l.newRun(t)
	r.node("keeper", "cpp", "", "--timer", "10", "--duration", "8")
	goner := r.node("goner", "py", "", "--timer", "10")
	time.Sleep(3 * time.Second)
	alive := func() map[string]bool {
		out := map[string]bool{}
		for _, snap := range r.scan().Snapshots {
			for _, n := range snap.Nodes {
				out[n.Name] = snap.Alive
			}
		}
		return out
	}
	if a := alive(); !a["/keeper"] || !a["/goner"] {
		t.Errorf("both running, pulse reads alive: %v", a)
	}
	if err := goner.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r.wait(goner, 10*time.Second)
	a := alive()
	table(t, "liveness", fmt.Sprintf("/goner alive %v, /keeper alive %v", a["/goner"], a["/keeper"]), "/goner stopped, /keeper running")
	if alive, listed := a["/goner"]; !listed || alive || !a["/keeper"] {
		t.Errorf("after SIGINT to /goner, pulse reads %v", a)
	}
	r.waitAll(20 * time.Second)
}

// TestExecutorBusy: a single-threaded executor whose timer works 12 ms of
// every 20: pulse's busy time of that thread agrees with the sum of the
// callback durations the node measured (the thread runs little else).
func TestExecutorBusy(t *testing.T) {
	l := setup(t)
	r := l.newRun(t)
	busy := r.node("busy", "cpp", "", "--timer", "50,12", "--duration", "5")
	r.waitAll(20 * time.Second)
	tr := r.truth(busy)
	var mine uint64
	for _, e := range tr.Endpoints {
		mine += e.Callback.SumNs
	}
	var pulse uint64
	var threads int
	for _, snap := range r.scan().Snapshots {
		if snap.Pid != tr.Pid {
			continue
		}
		for _, th := range snap.Threads {
			pulse += th.BusyNs
			threads++
		}
	}
	table(t, "executor busy", fmt.Sprintf("%.3f s busy", float64(pulse)/1e9), fmt.Sprintf("%.3f s in callbacks", float64(mine)/1e9))
	if threads == 0 || mine < 2e9 || math.Abs(float64(pulse)-float64(mine)) > 0.03*float64(mine)+20e6 {
		t.Errorf("pulse: %d threads busy %.3f s; the node's callbacks took %.3f s", threads, float64(pulse)/1e9, float64(mine)/1e9)
	}
}

// TestActions: action clients send ten goals each to action servers,
// rclcpp and rclpy on both sides: pulse sees each goal and each result as
// the calls of the action's send_goal and get_result services, on both
// sides, exactly.
func TestActions(t *testing.T) {
	l := setup(t)
	for _, c := range []struct{ client, server string }{{"cpp", "cpp"}, {"py", "cpp"}, {"cpp", "py"}} {
		t.Run(c.client+"-client-"+c.server+"-server", func(t *testing.T) {
			r := l.newRun(t)
			server := r.node("fib_server", c.server, "", "--action-server", "/fib,20", "--duration", "10")
			time.Sleep(time.Second)
			client := r.node("fib_client", c.client, "", "--action-client", "/fib,5,10", "--duration", "6")
			r.waitAll(30 * time.Second)
			judgeActions(t, r, r.truth(client), r.truth(server), c.client+" -> "+c.server)
		})
	}
}

func judgeActions(t *testing.T, r *run, ct, st *Truth, pair string) {
	goals, results, accepted := ct.Endpoints[0].Count, ct.Endpoints[0].Answered, st.Endpoints[0].Count
	if goals != 10 || results != 10 || accepted != 10 {
		t.Fatalf("the nodes: %d goals sent, %d results; the server accepted %d", goals, results, accepted)
	}
	s := r.scan()
	calls := func(pid int, kind segment.Kind, name string) *segment.Calls {
		for _, snap := range s.Snapshots {
			for i := range snap.Endpoints {
				e := &snap.Endpoints[i]
				if snap.Pid == pid && e.Kind == kind && e.Name == name && e.Calls != nil {
					return e.Calls
				}
			}
		}
		return nil
	}
	for _, c := range []struct {
		pid  int
		kind segment.Kind
		name string
		want uint64
	}{
		{ct.Pid, segment.KindClient, "/fib/_action/send_goal", goals},
		{ct.Pid, segment.KindClient, "/fib/_action/get_result", results},
		{st.Pid, segment.KindService, "/fib/_action/send_goal", accepted},
		{st.Pid, segment.KindService, "/fib/_action/get_result", results},
	} {
		got := calls(c.pid, c.kind, c.name)
		if got != nil {
			table(t, fmt.Sprintf("actions %s: %s %s", pair, c.kind, c.name), fmt.Sprintf("%d started, %d answered", got.Started, got.Answered),
				fmt.Sprintf("%d", c.want))
		}
		if got == nil || got.Started != c.want || got.Answered != c.want || len(got.Open) != 0 {
			t.Errorf("%s %s: pulse %+v, want %d started and answered, none open", c.kind, c.name, got, c.want)
		}
	}
}
