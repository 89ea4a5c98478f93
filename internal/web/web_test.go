package web

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
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

// Data flows left to right (publisher, topic, subscriber), and a place once
// given is kept: a new topic is put below the others of its column, and
// nothing drawn before moves; an unchanged topology is not laid out again.
func TestLayoutKeepsPlaces(t *testing.T) {
	b := NewBuilder()
	f1 := b.Build(win(1, "/b"), nil, nil)
	if !f1.NewShape || f1.Shape.Seq != 1 || f1.Now.Seq != 1 {
		t.Fatalf("the first frame is a new shape: %+v", f1)
	}
	byName := func(f Frame) map[string]Pos {
		out := map[string]Pos{}
		for _, n := range f.Shape.Nodes {
			out[n.Name] = f.Shape.Pos[n.ID]
		}
		for _, tp := range f.Shape.Topics {
			out[tp.Name] = f.Shape.Pos[tp.ID]
		}
		return out
	}
	p1 := byName(f1)
	if !(p1["/talker"].X < p1["/b"].X && p1["/b"].X < p1["/listener"].X) {
		t.Errorf("not left to right: %+v", p1)
	}
	if f := b.Build(win(2, "/b"), nil, nil); f.NewShape || f.Shape != f1.Shape || f.Now.Seq != 1 {
		t.Errorf("the same topology made a new shape")
	}
	f3 := b.Build(win(3, "/a", "/b"), nil, nil) // /a sorts first: its graph id takes /b's
	if !f3.NewShape || f3.Shape.Seq != 2 || f3.Now.Seq != 2 || len(f3.Now.EdgeHz) != len(f3.Shape.Edges) || len(f3.Now.EdgeLabel) != len(f3.Shape.Edges) || len(f3.Now.Topics) != 2 {
		t.Fatalf("a new topic: shape %d (new %t), values of shape %d", f3.Shape.Seq, f3.NewShape, f3.Now.Seq)
	}
	p3 := byName(f3)
	for name, p := range p1 {
		if p3[name] != p {
			t.Errorf("%s moved from %+v to %+v", name, p, p3[name])
		}
	}
	if a := p3["/a"]; a.X != p1["/b"].X || a.Y <= p1["/b"].Y {
		t.Errorf("the new topic /a is at %+v, want below /b (%+v) in its column", a, p1["/b"])
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
				if err := json.Unmarshal([]byte(data), &sh); err != nil || len(sh.Pos) != len(sh.Nodes)+len(sh.Topics)+len(sh.Services) {
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
