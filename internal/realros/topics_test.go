package realros

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// judgeCounts compares pulse's cumulative counts of every publisher and
// subscription a node kept truth of with the node's own: exact. A
// publisher's count is its larger bucket (one publish may fire both), a
// subscription's the sum of its deliveries (callback_start inter and intra,
// or rmw_take for rclpy). Humble fires no tracepoint for an intra-process
// publish, so a Humble publisher whose every subscriber is in its process
// reads 0 (pulse reports its rate as not measured).
func judgeCounts(r *run, p *proc, intraOnly map[string]bool) tally {
	r.t.Helper()
	tr := r.truth(p)
	s := r.scan()
	var judged tally
	for i := range tr.Endpoints {
		e := &tr.Endpoints[i]
		if e.Kind != "publisher" && e.Kind != "subscription" {
			continue
		}
		f := lookup(s, tr.Pid, e)
		if len(f.eps) == 0 {
			r.t.Errorf("%s: pulse has no %s %s of %s (pid %d)", p.name, e.Kind, e.Name, e.Node, tr.Pid)
			continue
		}
		var got uint64
		want := e.Count
		switch e.Kind {
		case "publisher":
			got = max(f.counts[0], f.counts[1])
			if r.l.humble() && intraOnly[e.Name] {
				want = 0
			}
		case "subscription":
			got = f.counts[0] + f.counts[1]
		}
		if got != want {
			r.t.Errorf("%s %s %s %s of %s: pulse counts %d (inter %d, intra %d), the node %d", p.name, tr.Lang, e.Kind, e.Name, e.Node,
				got, f.counts[0], f.counts[1], want)
		}
		if e.Count == 0 {
			r.t.Errorf("%s %s %s: the node counted nothing: the test proves nothing", p.name, e.Kind, e.Name)
		}
		judged.add(tally{1, got, want})
	}
	return judged
}

// TestTopicCounts: rclcpp and rclpy publishers and subscriptions between
// processes, several nodes in one process on a multi-threaded executor,
// and an intra-process pair: every count of pulse equals the node's own.
func TestTopicCounts(t *testing.T) {
	l := setup(t)
	r := l.newRun(t)
	listener := r.node("listener", "cpp", "", "--sub", "/chatter", "--sub", "/pychat", "--duration", "7")
	pylistener := r.node("pylistener", "py", "", "--sub", "/chatter", "--duration", "7")
	time.Sleep(time.Second) // subscribers first: the publishers' first messages find them matched or not, counted either way
	talkers := r.node("talker", "cpp", "", "--nodes", "3", "--multi", "2", "--pub", "/chatter,50,64", "--duration", "5")
	pytalker := r.node("pytalker", "py", "", "--pub", "/pychat,20,32", "--duration", "5")
	intra := r.node("intra", "cpp", "", "--intra", "--pub", "/intra_chat,100,16", "--sub", "/intra_chat", "--duration", "5")
	r.waitAll(30 * time.Second)
	var all tally
	for _, p := range []*proc{listener, pylistener, talkers, pytalker} {
		all.add(judgeCounts(r, p, nil))
	}
	intraT := judgeCounts(r, intra, map[string]bool{"/intra_chat": true})
	all.add(intraT)
	if all.n != 9 { // listener 2, pylistener 1, talkers 3, pytalker 1, intra 2
		t.Errorf("%d endpoints judged, want 9", all.n)
	}
	all.row(t, "topic counts: rclcpp, rclpy, 3 nodes a process, intra-process")
}

// TestManyNodesPerProcess: a container of 20 nodes, each publishing and
// subscribing, in one process: exact per node.
func TestManyNodesPerProcess(t *testing.T) {
	l := setup(t)
	r := l.newRun(t)
	container := r.node("member", "cpp", "", "--nodes", "20", "--multi", "2", "--pub", "/fleet,10,16",
		"--sub", "/fleet", "--duration", "5")
	r.waitAll(30 * time.Second)
	c := judgeCounts(r, container, nil)
	if c.n != 40 {
		t.Errorf("%d endpoints judged, want 40", c.n)
	}
	c.row(t, "topic counts: 20 nodes in one process")
}

// TestSigkill: a publisher SIGKILLed after its fixed count keeps, in its
// dead process's segment, exactly what it published; its subscriber's count
// is exact too, and pulse says the process is dead.
func TestSigkill(t *testing.T) {
	l := setup(t)
	r := l.newRun(t)
	listener := r.node("listener", "cpp", "", "--sub", "/doomed", "--duration", "6")
	time.Sleep(time.Second)
	doomed := r.node("doomed", "cpp", "", "--pub", "/doomed,100,16,200") // no --duration: it runs until killed
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := ReadTruth(doomed.truth); err == nil {
			break // written when its 200 were published
		}
		if time.Now().After(deadline) {
			t.Fatalf("the publisher never finished its 200:\n%s", doomed.out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := doomed.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.wait(doomed, 5*time.Second)
	r.wait(listener, 15*time.Second)
	k := judgeCounts(r, doomed, nil)
	k.add(judgeCounts(r, listener, nil))
	k.row(t, "topic counts: a publisher SIGKILLed")
	tr := r.truth(doomed)
	for _, snap := range r.scan().Snapshots {
		if snap.Pid == tr.Pid && snap.Alive {
			t.Errorf("the SIGKILLed process (pid %d) reads alive", tr.Pid)
		}
	}
}

// TestRclpySpinOnceChurn: rclpy nodes that come and go (a spin_once loop
// each, three in a row): every process's counts exact.
func TestRclpySpinOnceChurn(t *testing.T) {
	l := setup(t)
	r := l.newRun(t)
	listener := r.node("listener", "cpp", "", "--sub", "/churn", "--duration", "9")
	time.Sleep(time.Second)
	var ps []*proc
	for i := 0; i < 3; i++ {
		p := r.node(fmt.Sprintf("churner%d", i), "py", "", "--spin-once", "--pub", "/churn,40,16", "--duration", "1.5")
		r.wait(p, 20*time.Second)
		ps = append(ps, p)
	}
	r.wait(listener, 20*time.Second)
	var all tally
	for _, p := range append(ps, listener) {
		all.add(judgeCounts(r, p, nil))
	}
	all.row(t, "topic counts: rclpy spin_once churn, 3 processes in a row")
}
