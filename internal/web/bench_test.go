package web

import (
	"fmt"
	"testing"

	"ros2_pulse/internal/window"
)

// largeWindow is the stress generator's shape as one window: 60 processes
// of 5 nodes, 250 topics with a publisher and three subscriptions each
// (300 nodes, 1,000 edges).
func largeWindow() *window.Window {
	w := &window.Window{TsNs: 1, Seconds: 1}
	for p := 0; p < 60; p++ {
		pr := window.Proc{Pid: 1000 + p, Alive: true}
		for n := 0; n < 5; n++ {
			pr.Nodes = append(pr.Nodes, fmt.Sprintf("/big/p%d/n%d", p, n))
		}
		w.Procs = append(w.Procs, pr)
	}
	for tp := 0; tp < 250; tp++ {
		hz := float64(10 + tp%40)
		t := window.Topic{Name: fmt.Sprintf("/big/t%d", tp), PubInter: hz, PubAny: hz, RecvInter: 3 * hz, PubCount: 1, SubCount: 3, PubInterSeen: true, RecvSeen: true}
		for k := 0; k < 4; k++ {
			p := (tp + k) % 60
			e := window.EndpointRate{Pid: 1000 + p, Node: fmt.Sprintf("/big/p%d/n%d", p, (tp+k)%5), Inter: hz, Alive: true, Exposure: 1}
			if k == 0 {
				t.Pubs = append(t.Pubs, e)
			} else {
				t.Subs = append(t.Subs, e)
			}
		}
		w.Topics = append(w.Topics, t)
	}
	return w
}

// The page server's work per window on the large graph: a frame built and
// published (its values encoded; the shape only once).
func BenchmarkBuildAndPublish(b *testing.B) {
	w := largeWindow()
	s, err := NewServer("bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	bl := NewBuilder()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w.TsNs = int64(i)
		if err := s.Publish(bl.Build(w, nil, nil)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(s.latest.now)), "bytes/window")
}
