package web

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/window"
)

func win(ts int64, topics ...string) *window.Window {
	w := &window.Window{TsNs: ts, Seconds: 1, Procs: []window.Proc{{Pid: 1, Alive: true, Nodes: []string{"/talker", "/listener"}}}}
	for _, t := range topics {
		w.Topics = append(w.Topics, window.Topic{Name: t, PubInter: 10, PubAny: 10, RecvInter: 10, PubCount: 1, SubCount: 1, PubInterSeen: true, RecvSeen: true,
			Pubs: []window.EndpointRate{{Pid: 1, Node: "/talker", Inter: 10, Alive: true}},
			Subs: []window.EndpointRate{{Pid: 1, Node: "/listener", Inter: 10, Alive: true}}})
	}
	return w
}

// A shape is sent only when the topology changes: the same topology makes
// no new shape, a new topic does, and the values follow the shape's lists.
func TestShapeOnlyOnChange(t *testing.T) {
	b := NewBuilder()
	f1 := b.Build(win(1, "/b"), nil, nil)
	if !f1.NewShape || f1.Shape.Seq != 1 || f1.Now.Seq != 1 {
		t.Fatalf("the first frame is a new shape: %+v", f1)
	}
	if f := b.Build(win(2, "/b"), nil, nil); f.NewShape || f.Shape != f1.Shape || f.Now.Seq != 1 {
		t.Errorf("the same topology made a new shape")
	}
	f3 := b.Build(win(3, "/a", "/b"), nil, nil) // /a sorts first: its graph id takes /b's
	if !f3.NewShape || f3.Shape.Seq != 2 || f3.Now.Seq != 2 || len(f3.Now.EdgeHz) != len(f3.Shape.Edges) || len(f3.Now.EdgeLabel) != len(f3.Shape.Edges) || len(f3.Now.Topics) != 2 {
		t.Fatalf("a new topic: shape %d (new %t), values of shape %d", f3.Shape.Seq, f3.NewShape, f3.Now.Seq)
	}
	if f3.Shape.Topics[0].Name != "/a" || f3.Shape.Topics[1].Name != "/b" {
		t.Errorf("topics %+v, want /a then /b", f3.Shape.Topics)
	}
}

// One frame per window to every page over server-sent events, the latest
// at once to a page that opens later; the site is read-only and sends a
// policy that allows no script but its own.
func TestServerStreamsFrames(t *testing.T) {
	s, err := NewServer("test", nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	b := NewBuilder()
	if err := s.Publish(b.Build(win(1, "/chatter"), nil, nil)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(ts.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	lines := bufio.NewReader(resp.Body)
	var shapes []Shape
	next := func() Now {
		t.Helper()
		event := ""
		for {
			l, err := lines.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if e, ok := strings.CutPrefix(l, "event: "); ok {
				event = strings.TrimSpace(e)
				continue
			}
			if data, ok := strings.CutPrefix(l, "data: "); ok && event == "shape" { // before the values that follow it
				var sh Shape
				if err := json.Unmarshal([]byte(data), &sh); err != nil || len(sh.Nodes) == 0 || len(sh.Topics) == 0 {
					t.Fatalf("shape %q: %v", data, err)
				}
				shapes = append(shapes, sh)
				event = ""
				continue
			}
			if data, ok := strings.CutPrefix(l, "data: "); ok {
				var n Now
				if err := json.Unmarshal([]byte(data), &n); err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
	}
	if n := next(); n.TsNs != 1 || len(n.Topics) != 1 || n.Topics[0].State != window.StateOK || len(shapes) != 1 || n.Seq != shapes[0].Seq ||
		len(n.EdgeHz) != len(shapes[0].Edges) || n.EdgeLabel[0] != "10.0 Hz" || n.EdgeState[0] != "inter" || n.EdgeHz[0] != 10 {
		t.Errorf("first values %+v (after %d shapes)", n, len(shapes))
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.Publish(b.Build(win(2, "/chatter"), nil, nil))
		time.Sleep(50 * time.Millisecond)
		s.Publish(b.Build(win(3, "/chatter", "/new"), nil, nil))
	}()
	if n := next(); n.TsNs != 2 || len(shapes) != 1 {
		t.Errorf("second values %+v: the same topology, no shape sent (%d shapes)", n, len(shapes))
	}
	if n := next(); n.TsNs != 3 || len(shapes) != 2 || n.Seq != shapes[1].Seq || len(shapes[1].Topics) != 2 || len(n.Topics) != 2 {
		t.Errorf("third values %+v: a new topic, a new shape first (%d shapes)", n, len(shapes))
	}
	page, err := http.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
		t.Errorf("policy %q", csp)
	}
	post, err := http.Post(ts.URL+"/events", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	if post.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", post.StatusCode)
	}
	if r, _ := http.Get(ts.URL + "/api/frame?i=0"); r == nil || r.StatusCode != http.StatusNotFound {
		t.Errorf("a live server has no recorded frames")
	}
}

// Each warning is said with its own ALERT fields, oldest first: two verdicts
// of one kind on one topic (two subscriptions) stay apart.
func TestWarningsSaidOneByOne(t *testing.T) {
	warns := []health.Warning{
		{Kind: health.RecvLag, Topic: "/imu", Node: "/a", Pid: 7, Value: 5, Min: 10, Timer: -1, Age: time.Second},
		{Kind: health.RecvLag, Topic: "/imu", Node: "/b", Pid: 8, Value: 2, Min: 10, Timer: -1, Age: 3 * time.Second},
	}
	f := NewBuilder().Build(win(1, "/imu"), warns, nil)
	if ws := f.Now.Warnings; len(ws) != 2 || !strings.Contains(ws[0].What, "node=/b") || !strings.Contains(ws[1].What, "node=/a") ||
		strings.HasPrefix(ws[0].What, "ALERT") {
		t.Errorf("warnings %+v", ws)
	}
}

// A clicked entity's detail: a topic's endpoints with their process, rate,
// loss and callback time, and its gaps and latency; a node's publications,
// subscriptions, timers (lateness) and service calls; the server answers
// it for the latest window, a replay for the window asked.
func TestDetail(t *testing.T) {
	w := win(1, "/imu")
	w.Procs[0].Exe = "/opt/ros/lib/robot"
	imu := &w.Topics[0]
	imu.Subs[0].LossJudged, imu.Subs[0].LossPct = true, 12.5
	imu.PubGap = window.GapStats{N: 9, MeanMs: 100, P99Ms: 104, MaxMs: 110, HasData: true}
	imu.Latency = window.GapStats{N: 9, MeanMs: 1.5, P99Ms: 3, MaxMs: 4, HasData: true}
	w.Callbacks = []window.Callback{
		{Pid: 1, Node: "/listener", Kind: "subscription", Name: "/imu", Measured: true, Duration: window.Durations{N: 10, MeanMs: 2, P99Ms: 5, MaxMs: 6}},
		{Pid: 1, Node: "/talker", Kind: "timer", Ordinal: 0, Measured: true, Duration: window.Durations{N: 10, MeanMs: 0.5, P99Ms: 0.9, MaxMs: 1}},
	}
	w.Timers = []window.Timer{{Node: "/talker", Pid: 1, PeriodMs: 100, Hz: 10, LateKnown: true, Late: window.Durations{N: 10, MeanMs: 0.2, P99Ms: 0.4, MaxMs: 0.5}}}
	w.Calls = []window.Call{{Pid: 1, Node: "/talker", Name: "/reset", Alive: true, Started: 5, Answered: 3, Hz: 3, Time: window.Durations{N: 3, MeanMs: 7, P99Ms: 9, MaxMs: 9}, Open: []float64{4},
		SendFailed: 1, FailKnown: true}}

	d := DetailOf(w, "t:/imu")
	if len(d.Endpoints) != 2 || d.PubGap == nil || d.PubGap.P99Ms != 104 || d.Latency == nil || d.Latency.P99Ms != 3 || d.RecvGap != nil {
		t.Fatalf("topic detail %+v", d)
	}
	pub, sub := d.Endpoints[0], d.Endpoints[1]
	if pub.Kind != "pub" || pub.Other != "/talker" || pub.Exe != "/opt/ros/lib/robot" || pub.Hz == nil || *pub.Hz != 10 || pub.Time != nil {
		t.Errorf("publisher %+v", pub)
	}
	if sub.Kind != "sub" || sub.LossPct == nil || *sub.LossPct != 12.5 || sub.Time == nil || sub.Time.P99Ms != 5 {
		t.Errorf("subscription %+v", sub)
	}
	kinds := map[string]DetailRow{}
	for _, r := range DetailOf(w, "n:/talker@1").Endpoints {
		kinds[r.Kind] = r
	}
	if p, tm, sv := kinds["pub"], kinds["timer"], kinds["server"]; len(kinds) != 3 || p.Other != "/imu" || tm.Late == nil || tm.Late.P99Ms != 0.4 ||
		tm.Time == nil || tm.Time.MaxMs != 1 || tm.Other != "100 ms" || sv.Other != "/reset" || sv.Time == nil || sv.Open != 1 || sv.Failed != 1 {
		t.Errorf("node detail %+v", kinds)
	}
	if d := DetailOf(w, "s:/reset"); len(d.Endpoints) != 1 || d.Endpoints[0].Other != "/talker" {
		t.Errorf("service detail %+v", d)
	}
	if d := DetailOf(w, "n:nonsense"); len(d.Endpoints) != 0 {
		t.Errorf("a key naming nothing: %+v", d)
	}

	s, _ := NewServer("test", nil)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	if r, _ := http.Get(ts.URL + "/api/detail?key=t:/imu"); r == nil || r.StatusCode != http.StatusNotFound {
		t.Errorf("a detail before any window")
	}
	s.Publish(NewBuilder().Build(w, nil, nil))
	r, err := http.Get(ts.URL + "/api/detail?key=" + url.QueryEscape("n:/talker@1"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var got Detail
	if err := json.NewDecoder(r.Body).Decode(&got); err != nil || got.Key != "n:/talker@1" || len(got.Endpoints) != 3 {
		t.Errorf("served detail %+v %v", got, err)
	}
	b := NewBuilder()
	replay, _ := NewServer("test", []Frame{b.Build(win(1, "/a"), nil, nil), b.Build(win(2, "/a", "/b"), nil, nil)})
	rs := httptest.NewServer(replay.Handler())
	defer rs.Close()
	for i, want := range []int{0, 2} { // /b's endpoints only in the second window
		var d Detail
		if r, err := http.Get(rs.URL + "/api/detail?key=t:/b&i=" + itoa(i)); err != nil || json.NewDecoder(r.Body).Decode(&d) != nil || len(d.Endpoints) != want {
			t.Errorf("replay window %d: %+v %v", i, d, err)
		}
	}
}

// A subscription's judged loss is said on its edge.
func TestEdgeLabelsSayLoss(t *testing.T) {
	w := win(1, "/imu")
	w.Topics[0].Subs[0].LossJudged, w.Topics[0].Subs[0].LossPct = true, 25
	f := NewBuilder().Build(w, nil, nil)
	for i, e := range f.Shape.Edges {
		if want := e.Kind == "sub"; strings.Contains(f.Now.EdgeLabel[i], "loss 25.0%") != want {
			t.Errorf("edge %+v label %q", e, f.Now.EdgeLabel[i])
		}
	}
}

// A clicked topic's detail carries each endpoint's bytes a second and mean
// message size where bytes are measured, how ("sampled"), or that they
// could not be ("none"); without bytes, nothing.
func TestDetailBytes(t *testing.T) {
	w := win(1, "/imu")
	if d := DetailOf(w, "t:/imu"); d.Endpoints[0].BytesHow != "" || d.Endpoints[0].BytesPerS != nil {
		t.Fatalf("bytes without bytes: %+v", d.Endpoints[0])
	}
	w.Topics[0].Pubs[0].Bytes = window.Bytes{How: window.BytesSampled, PerS: 2.76e7, MeanSize: 921652.4}
	w.Topics[0].Subs[0].Bytes = window.Bytes{How: window.BytesNone, Messages: 3}
	d := DetailOf(w, "t:/imu")
	pub, sub := d.Endpoints[0], d.Endpoints[1]
	if pub.BytesHow != "sampled" || pub.BytesPerS == nil || *pub.BytesPerS != 2.76e7 || pub.MeanBytes == nil || *pub.MeanBytes != 921652.4 {
		t.Errorf("publisher %+v", pub)
	}
	if sub.BytesHow != "none" || sub.BytesPerS != nil {
		t.Errorf("subscription %+v", sub)
	}
}

// Where a process measures bytes (design note 0033) each measured edge
// carries its bytes a second (the page's edge width) and says them in its
// label, "~" when sampled; without bytes a frame has no edge_bytes at all.
func TestEdgeBytes(t *testing.T) {
	w := win(1, "/imu")
	if f := NewBuilder().Build(w, nil, nil); f.Now.EdgeBytes != nil {
		t.Fatalf("edge bytes without bytes: %v", f.Now.EdgeBytes)
	}
	w.Topics[0].Pubs[0].Bytes = window.Bytes{How: window.BytesSampled, PerS: 2.76e7}
	w.Topics[0].Subs[0].Bytes = window.Bytes{How: window.BytesNone}
	f := NewBuilder().Build(w, nil, nil)
	if len(f.Now.EdgeBytes) != len(f.Shape.Edges) {
		t.Fatalf("edge bytes %v for %d edges", f.Now.EdgeBytes, len(f.Shape.Edges))
	}
	for i, e := range f.Shape.Edges {
		pub := e.Kind == "pub"
		if got := f.Now.EdgeBytes[i]; pub && got != 2.76e7 || !pub && got != 0 {
			t.Errorf("edge %+v: %v bytes/s", e, got)
		}
		if strings.Contains(f.Now.EdgeLabel[i], "~27.6 MB/s") != pub {
			t.Errorf("edge %+v label %q", e, f.Now.EdgeLabel[i])
		}
	}
}

// A detail's key comes from the page's query string: any string gives a
// detail of that key, never a panic.
func FuzzDetail(f *testing.F) {
	w := win(1, "/imu")
	w.Calls = []window.Call{{Pid: 1, Node: "/talker", Name: "/fib/_action/send_goal", Alive: true}}
	w.Timers = []window.Timer{{Node: "/talker", Pid: 1, PeriodMs: 100}}
	for _, k := range []string{"t:/imu", "n:/talker@1", "n:/talker@", "n:@@1", "s:/fib", "", ":", "n:", "x:/imu"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if d := DetailOf(w, key); d.Key != key || d.Endpoints == nil {
			t.Errorf("key %q: %+v", key, d)
		}
	})
}
