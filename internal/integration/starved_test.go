package integration

import (
	"strings"
	"testing"
	"time"

	pgraph "ros2_pulse/internal/graph"
	"ros2_pulse/internal/health"
	"ros2_pulse/internal/window"
)

// starvedIn runs the lag detector over windows and returns the starved
// subscriptions it said, by node.
func starvedIn(ws []*window.Window) map[string]bool {
	d := health.NewLagDetector()
	out := map[string]bool{}
	for i, w := range ws {
		for _, warn := range d.Observe(w, i == len(ws)-1, time.Unix(0, w.TsNs)) {
			if warn.Kind == health.RecvStarved {
				out[warn.Node] = true
			}
		}
	}
	return out
}

// A subscription that receives nothing while its topic is published here is
// starved, without any spec: in another process, in the publisher's own, and
// an rclpy one where its takes are visible. On Humble an rclpy
// subscription's raw takes fire no tracepoint: its silence is not measured,
// neither starved nor 100 % lost. The healthy listener is never flagged
// (issue 23, item 1).
func TestStarvedSubscriptions(t *testing.T) {
	for _, distro := range []string{"humble", "jazzy"} {
		t.Run(distro, func(t *testing.T) {
			g := sim(t, "testdata/starved.graph", distro, 3*time.Second)
			ws, _ := judgeRun(t, g, 500*time.Millisecond, []string{"/chatter"}, 0)
			got := starvedIn(ws)
			want := map[string]bool{"/near_listener": true, "/far_listener": true, "/py_listener": distro != "humble"}
			for _, node := range []string{"/near_listener", "/far_listener", "/py_listener", "/listener"} {
				if got[node] != want[node] {
					t.Errorf("%s starved: %v, want %v (said: %v)", node, got[node], want[node], got)
				}
			}
			w := ws[len(ws)-2] // the last complete window
			tp := w.Topic("/chatter")
			if tp == nil {
				t.Fatal("no /chatter")
			}
			// pulse graph draws them starved (not measured where so), the healthy edge as traffic.
			gr := pgraph.FromWindow(w)
			names := map[string]string{}
			for _, n := range gr.Nodes {
				names[n.ID] = n.Name
			}
			pyEdge := "starved"
			if distro == "humble" {
				pyEdge = "not_measured"
			}
			wantEdge := map[string]string{"/near_listener": "starved", "/far_listener": "starved", "/py_listener": pyEdge, "/listener": "inter"}
			for _, e := range gr.Edges {
				if want, ok := wantEdge[names[e.To]]; ok && e.Kind == "sub" {
					if e.Transport != want {
						t.Errorf("graph edge to %s: %s, want %s", names[e.To], e.Transport, want)
					}
					delete(wantEdge, names[e.To])
				}
			}
			if len(wantEdge) != 0 {
				t.Errorf("graph edges missing: %v", wantEdge)
			}
			if dot := string(gr.DOT()); !strings.Contains(dot, `[label="starved: receives nothing", style=bold, color=red`) {
				t.Errorf("DOT without a starved edge:\n%s", dot)
			}
			for _, s := range tp.Subs {
				if s.Node == "/py_listener" && distro == "humble" && (!s.RecvHidden || s.LossJudged) {
					t.Errorf("humble rclpy silent subscription: %+v, want not measured (no loss judged)", s)
				}
				if s.Node == "/far_listener" && (!s.LossJudged || s.LossPct != 100) {
					t.Errorf("a starved subscription's loss: %+v, want 100 %% judged", s)
				}
			}
		})
	}
}
