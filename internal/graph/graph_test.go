package graph

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixture: a camera pipeline in one process (intra), a controller in
// another, a listener whose process has exited.
func fixture() *window.Window {
	return &window.Window{
		Topics: []window.Topic{
			{Name: "/camera/image", PubAny: 30, RecvIntra: 30,
				Pubs: []window.EndpointRate{{Pid: 10, Node: "/camera", Intra: 30, Alive: true}},
				Subs: []window.EndpointRate{{Pid: 10, Node: "/detector", Intra: 30, Alive: true}}},
			{Name: "/detections", PubAny: 30, RecvInter: 30,
				Pubs: []window.EndpointRate{{Pid: 10, Node: "/detector", Inter: 30, Intra: 30, Alive: true}},
				Subs: []window.EndpointRate{{Pid: 20, Node: "/controller", Inter: 30, Alive: true},
					{Pid: 30, Node: "/logger \"x\"", Alive: false}}},
		},
		Procs: []window.Proc{
			{Pid: 10, Alive: true, Nodes: []string{"/camera", "/detector"}},
			{Pid: 20, Alive: true, Nodes: []string{"/controller"}},
			{Pid: 30, Alive: false, Nodes: []string{"/logger \"x\""}},
		},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs:\n%s", name, got)
	}
}

func TestFormats(t *testing.T) {
	g := FromWindow(fixture())
	if len(g.Nodes) != 4 || len(g.Topics) != 2 || len(g.Edges) != 5 {
		t.Fatalf("%+v", g)
	}
	edges := map[[2]string]Edge{}
	for _, e := range g.Edges {
		edges[[2]string{e.From, e.To}] = e
	}
	// n0 /camera, n1 /controller, n2 /detector, n3 /logger; t0 image, t1 detections
	for k, want := range map[[2]string]string{{"n0", "t0"}: "intra", {"t0", "n2"}: "intra", {"n2", "t1"}: "both", {"t1", "n1"}: "inter", {"t1", "n3"}: "none"} {
		if edges[k].Transport != want {
			t.Errorf("edge %v: %+v, want %s", k, edges[k], want)
		}
	}
	j, err := g.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Graph
	if err := json.Unmarshal(j, &back); err != nil || len(back.Edges) != 5 {
		t.Fatalf("JSON does not read back: %v", err)
	}
	golden(t, "graph.json", j)
	golden(t, "graph.dot", g.DOT())
	golden(t, "graph.mmd", g.Mermaid())
}

// An empty machine is empty arrays in JSON, never null (as jsonl promises).
func TestEmptyGraphHasArrays(t *testing.T) {
	j, err := FromWindow(&window.Window{}).JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"nodes": []`, `"topics": []`, `"edges": []`} {
		if !strings.Contains(string(j), key) {
			t.Errorf("empty graph: no %s in\n%s", key, j)
		}
	}
}

// A node's busy share and slowest callback label it; a saturated one is drawn
// red; an rclpy node, whose callbacks are not timed, has neither (absent, not 0).
func TestNodeTimingLabels(t *testing.T) {
	w := &window.Window{
		Procs: []window.Proc{{Pid: 1, Alive: true, Nodes: []string{"/planner"}}, {Pid: 2, Alive: true, Nodes: []string{"/py"}}},
		Busy:  []window.NodeBusy{{Node: "/planner", Pid: 1, Pct: 97.2, Measured: true}, {Node: "/py", Pid: 2}},
		Callbacks: []window.Callback{
			{Pid: 1, Node: "/planner", Kind: "timer", Measured: true, Duration: window.Durations{N: 10, MaxMs: 41.9}},
			{Pid: 1, Node: "/planner", Kind: "subscription", Name: "/map", Measured: true, Duration: window.Durations{N: 2, MaxMs: 3}},
			{Pid: 2, Node: "/py", Kind: "subscription", Name: "/map", Why: window.NoCallbackTracepoint},
		},
		// /py's rclpy thread is 96 % outside rcl_wait: it is starved though its callbacks are not timed
		Threads: []window.Thread{{Pid: 1, Tid: 11, BusyPct: 97.2, Waiter: true, OutsideWaitPct: 97.9}, {Pid: 2, Tid: 21, Waiter: true, OutsideWaitPct: 96.4}},
	}
	g := FromWindow(w)
	if p := g.Nodes[0]; p.Name != "/planner" || p.BusyPct == nil || *p.BusyPct != 97.2 || p.SlowestMs == nil || *p.SlowestMs != 41.9 {
		t.Errorf("planner %+v", p)
	}
	if p := g.Nodes[1]; p.BusyPct != nil || p.SlowestMs != nil || p.ThreadPct == nil || *p.ThreadPct != 96.4 {
		t.Errorf("an rclpy node's callback timing must be absent, its thread's share outside rcl_wait present: %+v", p)
	}
	dot := string(g.DOT())
	if !strings.Contains(dot, `n0 [shape=ellipse, label="/planner\npid 1\nbusy 97%, slowest 41.9 ms, thread 98%", style=bold, color=red`) ||
		!strings.Contains(dot, `n1 [shape=ellipse, label="/py\npid 2\nthread 96%", style=bold, color=red`) {
		t.Errorf("DOT:\n%s", dot)
	}
	if j, _ := g.JSON(); !strings.Contains(string(j), `"busy_pct": 97.2`) || strings.Count(string(j), "busy_pct") != 1 ||
		!strings.Contains(string(j), `"executor_thread_pct": 96.4`) {
		t.Errorf("JSON:\n%s", j)
	}
	if m := string(g.Mermaid()); !strings.Contains(m, `n0("/planner pid 1 · busy 97%, slowest 41.9 ms, thread 98%")`) {
		t.Errorf("Mermaid:\n%s", m)
	}
}

// Each edge carries its endpoint's QoS and type; a subscription that meets
// nobody is drawn "unmatched" with its reason, a topic whose endpoints
// disagree on the type says so (issue 25).
func TestUnmatchedEdgesAndQoS(t *testing.T) {
	be := &segment.QoS{Actual: true, History: 1, Depth: 10, Reliability: 2, Durability: 2, Liveliness: 1, Domain: 0, Type: "std_msgs/msg/String"}
	rel := &segment.QoS{Actual: true, History: 1, Depth: 10, Reliability: 1, Durability: 2, Liveliness: 1, Domain: 0, Type: "std_msgs/msg/Int32"}
	w := &window.Window{
		Procs: []window.Proc{{Pid: 1, Alive: true, Nodes: []string{"/talker"}}, {Pid: 2, Alive: true, Nodes: []string{"/listener"}}},
		Topics: []window.Topic{{Name: "/chatter", PubInter: 20, PubAny: 20, PubCount: 1, SubCount: 1, Published: 20,
			Pubs: []window.EndpointRate{{Pid: 1, Node: "/talker", Inter: 20, Alive: true, QoS: be}},
			Subs: []window.EndpointRate{{Pid: 2, Node: "/listener", Alive: true, QoS: rel}}}},
		Unmatched: []window.Unmatched{{Topic: "/chatter", Node: "/listener", Pid: 2, Reason: "type_mismatch", Error: true,
			Detail: "publisher std_msgs/msg/String, subscription std_msgs/msg/Int32"}},
	}
	g := FromWindow(w)
	var sub, pub *Edge
	for i := range g.Edges {
		if g.Edges[i].Kind == "sub" {
			sub = &g.Edges[i]
		} else {
			pub = &g.Edges[i]
		}
	}
	if sub == nil || sub.Transport != "unmatched" || sub.Unmatched != "type_mismatch" || sub.Type != "std_msgs/msg/Int32" ||
		sub.QoS != "reliable volatile keep_last(10)" {
		t.Errorf("subscription edge %+v", sub)
	}
	if pub == nil || pub.Transport != "inter" || pub.Unmatched != "" || pub.QoS != "best_effort volatile keep_last(10)" {
		t.Errorf("publication edge %+v", pub)
	}
	dot := string(g.DOT())
	if !strings.Contains(dot, `label="type_mismatch: publisher std_msgs/msg/String, subscription std_msgs/msg/Int32", style="bold,dashed", color=red`) ||
		!strings.Contains(dot, `label="/chatter\ntypes differ: std_msgs/msg/Int32, std_msgs/msg/String"`) {
		t.Errorf("DOT:\n%s", dot)
	}
	if j, _ := g.JSON(); !strings.Contains(string(j), `"unmatched": "type_mismatch"`) || !strings.Contains(string(j), `"qos": "best_effort volatile keep_last(10)"`) {
		t.Errorf("JSON:\n%s", j)
	}
}

// Services a node serves are drawn with their request rate and, for rclcpp,
// the handling time at p99; an rclpy server is not measured (never 0 req/s);
// a parameter service appears only while it serves (issue 26, first part).
func TestServices(t *testing.T) {
	w := &window.Window{Seconds: 2,
		Procs: []window.Proc{{Pid: 1, Alive: true, Nodes: []string{"/adder"}}, {Pid: 2, Alive: true, Nodes: []string{"/py_adder"}}},
		Services: []window.Service{
			{Node: "/adder", Pid: 1, Name: "/add_two_ints", Delta: 40, Measured: true},
			{Node: "/adder", Pid: 1, Name: "/adder/get_parameters", Measured: true},
			{Node: "/adder", Pid: 1, Name: "/adder/set_parameters", Delta: 2, Measured: true},
			{Node: "/py_adder", Pid: 2, Name: "/add_two_ints"},
		},
		Callbacks: []window.Callback{{Pid: 1, Node: "/adder", Kind: "service", Name: "/add_two_ints", Measured: true,
			Duration: window.Durations{N: 40, P99Ms: 5.2, MaxMs: 5.9}}},
	}
	g := FromWindow(w)
	if len(g.Services) != 2 || g.Services[0].Name != "/add_two_ints" || g.Services[0].Hz == nil || *g.Services[0].Hz != 20 ||
		g.Services[1].Name != "/adder/set_parameters" {
		t.Fatalf("services %+v", g.Services)
	}
	var serves []Edge
	for _, e := range g.Edges {
		if e.Kind == "serves" {
			serves = append(serves, e)
		}
	}
	if len(serves) != 3 {
		t.Fatalf("serves edges %+v", serves)
	}
	dot := string(g.DOT())
	for _, want := range []string{`s0 [shape=hexagon, label="/add_two_ints"]`, `n0 -> s0 [label="20.0 req/s, p99 5.2 ms"]`,
		`n1 -> s0 [label="not measured (rclpy server, no timing)"`, `n0 -> s1 [label="1.0 req/s"]`} {
		if !strings.Contains(dot, want) {
			t.Errorf("DOT lacks %q:\n%s", want, dot)
		}
	}
	if strings.Contains(dot, "get_parameters") {
		t.Errorf("an idle parameter service is drawn:\n%s", dot)
	}
	if m := string(g.Mermaid()); !strings.Contains(m, `s0{{"/add_two_ints"}}`) {
		t.Errorf("Mermaid:\n%s", m)
	}
}

// With the probe's call timing (ABI 1.6) every server and client is drawn,
// rclpy's too: client -> service <- server, calls per second, handling and
// round trip at p99, open calls, a client of a service nothing here serves
// marked unmatched; an action's three services are one action with goals
// per second, time to accept and to result (issue 26).
func TestServiceCallsAndActions(t *testing.T) {
	w := &window.Window{Seconds: 1,
		Procs: []window.Proc{{Pid: 1, Alive: true, Nodes: []string{"/server", "/nav"}}, {Pid: 2, Alive: true, Nodes: []string{"/caller", "/bt"}}},
		Calls: []window.Call{
			{Pid: 1, Node: "/server", Name: "/add", Alive: true, Started: 20, Answered: 20, Hz: 20, Time: window.Durations{N: 20, P99Ms: 5.1, MaxMs: 5.3}},
			{Pid: 2, Node: "/caller", Name: "/add", Client: true, Alive: true, HasServer: true, Started: 20, Answered: 19, Hz: 20,
				Time: window.Durations{N: 19, P99Ms: 5.6, MaxMs: 5.9}, Open: []float64{3}},
			{Pid: 2, Node: "/caller", Name: "/nobody", Client: true, Alive: true, Started: 2, Hz: 2, Open: []float64{900, 400}},
			{Pid: 1, Node: "/nav", Name: "/navigate/_action/send_goal", Alive: true, Started: 1, Answered: 1, Hz: 1, Time: window.Durations{N: 1, P99Ms: 2}},
			{Pid: 1, Node: "/nav", Name: "/navigate/_action/get_result", Alive: true, Started: 1, Answered: 1, Hz: 1, Time: window.Durations{N: 1, P99Ms: 1000}},
			{Pid: 2, Node: "/bt", Name: "/navigate/_action/send_goal", Client: true, HasServer: true, Alive: true, Started: 1, Answered: 1, Hz: 1,
				Time: window.Durations{N: 1, P99Ms: 2.4}},
			{Pid: 2, Node: "/bt", Name: "/navigate/_action/get_result", Client: true, HasServer: true, Alive: true, Started: 1, Answered: 1, Hz: 1,
				Time: window.Durations{N: 1, P99Ms: 1001}},
			{Pid: 2, Node: "/bt", Name: "/navigate/_action/cancel_goal", Client: true, HasServer: true, Alive: true, Started: 1, Answered: 1, Hz: 1},
			{Pid: 1, Node: "/server", Name: "/server/get_parameters", Alive: true},
		},
	}
	g := FromWindow(w)
	var names []string
	for _, sv := range g.Services {
		names = append(names, sv.Kind+" "+sv.Name)
	}
	if strings.Join(names, ",") != "service /add,action /navigate,service /nobody" {
		t.Fatalf("services %v", names)
	}
	dot := string(g.DOT())
	for _, want := range []string{
		`s1 [shape=hexagon, label="action /navigate"]`,
		`-> s0 [label="20.0 req/s, p99 5.1 ms"]`,
		`-> s0 [label="20.0 req/s, p99 5.6 ms, 1 open"]`,
		`-> s2 [label="2.0 req/s, 2 open, nothing here serves /nobody", style="bold,dashed", color=red`,
		`-> s1 [label="1.0 goals/s, accept p99 2.4 ms, result p99 1001.0 ms, 1 cancels"]`,
		`-> s1 [label="1.0 goals/s, accept p99 2.0 ms, result p99 1000.0 ms"]`,
	} {
		if !strings.Contains(dot, want) {
			t.Errorf("DOT lacks %q:\n%s", want, dot)
		}
	}
	if strings.Contains(dot, "get_parameters") || strings.Contains(dot, "_action") {
		t.Errorf("an idle parameter service or an action's part is drawn:\n%s", dot)
	}
}

// A service's introspection topic (Iron+: <service>/_service_event) and an
// action's feedback and status are drawn as what they are (issue 26, item 7).
func TestIntrospectionAndActionTopics(t *testing.T) {
	w := &window.Window{Seconds: 1,
		Procs: []window.Proc{{Pid: 1, Alive: true, Nodes: []string{"/srv"}}},
		Topics: []window.Topic{
			{Name: "/add/_service_event", PubAny: 2, PubInter: 2, PubCount: 1, Pubs: []window.EndpointRate{{Pid: 1, Node: "/srv", Inter: 2, Alive: true}}},
			{Name: "/nav/_action/feedback", PubAny: 5, PubInter: 5, PubCount: 1, Pubs: []window.EndpointRate{{Pid: 1, Node: "/srv", Inter: 5, Alive: true}}},
		}}
	g := FromWindow(w)
	if g.Topics[0].Introspects != "/add" || g.Topics[1].Action != "/nav" || g.Topics[1].Part != "feedback" {
		t.Fatalf("topics %+v", g.Topics)
	}
	dot := string(g.DOT())
	for _, want := range []string{`label="/add/_service_event\nservice events of /add (introspection)"`, `label="/nav/_action/feedback\nfeedback of action /nav"`} {
		if !strings.Contains(dot, want) {
			t.Errorf("DOT lacks %q:\n%s", want, dot)
		}
	}
}

// An edge whose process measures bytes carries its bytes a second and mean
// message size in the JSON and says both in its label, "~" when sampled; an
// edge that could not be sized says nothing of bytes.
func TestEdgeBytes(t *testing.T) {
	w := fixture()
	d := &w.Topics[1]
	d.Pubs[0].Bytes = window.Bytes{How: window.BytesSampled, PerS: 30 * 1500, MeanSize: 1500, Messages: 30}
	d.Subs[0].Bytes = window.Bytes{How: window.BytesExact, PerS: 30 * 1400, MeanSize: 1400, Messages: 30}
	d.Subs[1].Bytes = window.Bytes{How: window.BytesNone, Messages: 30}
	g := FromWindow(w)
	if len(g.Edges) != 5 {
		t.Fatalf("edges %+v", g.Edges)
	}
	for i, e := range g.Edges[2:] { // the /detections edges: its publisher's, then its two subscriptions'
		switch i {
		case 0:
			if e.BytesPerS == nil || *e.BytesPerS != 45000 || e.MeanBytes == nil || *e.MeanBytes != 1500 || !e.BytesSampled ||
				!strings.HasSuffix(e.Label(), " · ~45.0 kB/s, ~1.50 kB/msg") {
				t.Errorf("sampled pub edge %+v: %q", e, e.Label())
			}
		case 1:
			if e.BytesPerS == nil || *e.MeanBytes != 1400 || e.BytesSampled || !strings.HasSuffix(e.Label(), " · 42.0 kB/s, 1.40 kB/msg") {
				t.Errorf("exact sub edge %+v: %q", e, e.Label())
			}
		case 2:
			if e.BytesPerS != nil || e.MeanBytes != nil || strings.Contains(e.Label(), "B/s") {
				t.Errorf("unsized edge %+v: %q", e, e.Label())
			}
		}
	}
	if j, _ := g.JSON(); !strings.Contains(string(j), `"mean_bytes": 1500`) || !strings.Contains(string(j), `"bytes_sampled": true`) {
		t.Errorf("JSON:\n%s", j)
	}
}
