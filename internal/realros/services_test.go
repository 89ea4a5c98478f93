package realros

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// judgeCalls compares pulse's calls of every service and client a node kept
// truth of with the node's own: requests taken, answers sent (and refused),
// requests sent and answers taken, exactly; nothing left open once the run
// is over; rclcpp's handling time and round trip agree with the node's.
func judgeCalls(r *run, p *proc) int {
	r.t.Helper()
	tr := r.truth(p)
	s := r.scan()
	judged := 0
	for i := range tr.Endpoints {
		e := &tr.Endpoints[i]
		if e.Kind != "service" && e.Kind != "client" {
			continue
		}
		f := lookup(s, tr.Pid, e)
		if len(f.eps) != 1 || f.eps[0].Calls == nil {
			r.t.Errorf("%s %s %s: pulse has %d endpoints (calls recorded: %v)", p.name, e.Kind, e.Name, len(f.eps),
				len(f.eps) == 1 && f.eps[0].Calls != nil)
			continue
		}
		c := f.eps[0].Calls
		judged++
		table(r.t, fmt.Sprintf("service calls: %s %s", tr.Lang, e.Kind),
			fmt.Sprintf("%d started, %d answered, %d refused", c.Started, c.Answered, c.SendFailed),
			fmt.Sprintf("%d, %d answered, %d refused", e.Count, map[bool]uint64{true: e.Answered, false: e.Count - uint64(max(e.Failed, 0))}[e.Kind == "client"], max(e.Failed, 0)))
		if len(c.Open) != 0 {
			r.t.Errorf("%s %s %s: %d calls still open after the run", p.name, e.Kind, e.Name, len(c.Open))
		}
		if e.Count == 0 {
			r.t.Errorf("%s %s %s: the node made no call: the test proves nothing", p.name, e.Kind, e.Name)
		}
		switch e.Kind {
		case "service":
			answered := e.Count
			if e.Failed > 0 {
				answered -= uint64(e.Failed)
			}
			if c.Started != e.Count || (e.Failed >= 0 && c.Answered != answered) {
				r.t.Errorf("%s service %s: pulse took %d requests and sent %d answers; the node handled %d, rcl refused %d",
					p.name, e.Name, c.Started, c.Answered, e.Count, e.Failed)
			}
			if e.Failed >= 0 && c.SendFailed != uint64(e.Failed) {
				r.t.Errorf("%s service %s: pulse counts %d refused answers, the node %d", p.name, e.Name, c.SendFailed, e.Failed)
			}
			if tr.Lang == "rclcpp" && c.Answered > 0 && !near(float64(c.SumNs)/float64(c.Answered)/1e6, e.Callback.MeanMs()) {
				r.t.Errorf("%s service %s: pulse's handling mean %.3f ms, the node's %.3f ms", p.name, e.Name,
					float64(c.SumNs)/float64(c.Answered)/1e6, e.Callback.MeanMs())
			}
		case "client":
			if c.Started != e.Count || c.Answered != e.Answered {
				r.t.Errorf("%s client %s: pulse sent %d, answered %d; the node sent %d, answered %d", p.name, e.Name,
					c.Started, c.Answered, e.Count, e.Answered)
			}
		}
	}
	return judged
}

// TestServices: rclcpp and rclpy servers and clients, each side of each
// language: every call counted on both sides, exactly, and none left open.
func TestServices(t *testing.T) {
	l := setup(t)
	r := l.newRun(t)
	server := r.node("server", "cpp", "", "--server", "/add,1", "--duration", "8")
	pyserver := r.node("pyserver", "py", "", "--server", "/pyadd,1", "--duration", "8")
	time.Sleep(time.Second)
	client := r.node("client", "cpp", "", "--client", "/add,20", "--client", "/pyadd,10", "--duration", "5")
	pyclient := r.node("pyclient", "py", "", "--client", "/add,10", "--client", "/pyadd,10", "--duration", "5")
	r.waitAll(30 * time.Second)
	n := 0
	for _, p := range []*proc{server, pyserver, client, pyclient} {
		n += judgeCalls(r, p)
	}
	if n != 6 {
		t.Errorf("%d endpoints judged, want 6", n)
	}
}

// TestServerAnswersAGoneClient: a client sends five requests to a server
// that takes 300 ms over each, and exits at once. The server answers into
// the void: on Fast DDS rcl refuses those answers (RCL_RET_TIMEOUT, "client
// will not receive response"), on Cyclone DDS they are sent to nobody. Either
// way pulse counts what rcl did, exactly as the server saw it, and leaves no
// call open.
func TestServerAnswersAGoneClient(t *testing.T) {
	l := setup(t)
	r := l.newRun(t)
	server := r.node("server", "cpp", "", "--server", "/slow,300", "--duration", "6")
	time.Sleep(time.Second)
	client := r.node("client", "cpp", "", "--client", "/slow,20,5", "--exit-when-sent")
	time.Sleep(4 * time.Second) // the server has handled all five; it lives on to 6 s
	doc := doctorSays(r)
	r.waitAll(30 * time.Second)
	judgeCalls(r, server)
	tr := r.truth(client)
	if len(tr.Endpoints) != 1 || tr.Endpoints[0].Count != 5 {
		t.Errorf("the client's truth: %+v", tr.Endpoints)
	}
	st := r.truth(server)
	t.Logf("%s: the server handled %d requests of a gone client, rcl refused %d answers", l.rmw, st.Endpoints[0].Count, st.Endpoints[0].Failed)
	if l.rmw == "rmw_fastrtps_cpp" && st.Endpoints[0].Failed == 0 {
		t.Errorf("Fast DDS refused no answer to a gone client: the case this test is for did not happen")
	}
	if said := strings.Contains(doc, "responses not sent"); said != (st.Endpoints[0].Failed > 0) {
		t.Errorf("rcl refused %d answers; pulse doctor says:\n%s", st.Endpoints[0].Failed, doc)
	}
}
