package top

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"ros2_pulse/internal/window"
)

// robotFrame is a robot-sized window: 3 namespaces of 30 topics each (one
// of them stalled), a node per 10 topics, and /tf at the root.
func robotFrame() Frame {
	w := &window.Window{TsNs: t0.UnixNano(), Seconds: 1}
	p := window.Proc{Pid: 10, Alive: true}
	for _, ns := range []string{"/control", "/perception", "/sensing/lidar"} {
		for n := 0; n < 3; n++ {
			node := fmt.Sprintf("%s/node_%d", ns, n)
			p.Nodes = append(p.Nodes, node)
			for k := 0; k < 10; k++ {
				hz := 10.0
				if ns == "/perception" && n == 1 && k == 0 {
					hz = 0
				}
				w.Topics = append(w.Topics, window.Topic{Name: fmt.Sprintf("%s/debug/t%d", node, k), PubInter: hz, PubAny: hz, PubCount: 1, PubInterSeen: true,
					Pubs: []window.EndpointRate{{Pid: 10, Node: node, Inter: hz, Alive: true}}})
			}
		}
	}
	p.Nodes = append(p.Nodes, "/robot_state_publisher")
	w.Topics = append(w.Topics, window.Topic{Name: "/tf", PubInter: 50, PubAny: 50, PubCount: 1, PubInterSeen: true,
		Pubs: []window.EndpointRate{{Pid: 10, Node: "/robot_state_publisher", Inter: 50, Alive: true}}})
	w.Procs = []window.Proc{p}
	return Frame{W: w, At: t0, Live: true}
}

// At robot size the tables fold into a namespace tree (issue 46, item 3): a
// namespace is one row with its topics' summed rate and worst status; enter
// opens it (its topics under it, named relative to it); a filter
// shows its matches with their namespaces open; t turns the tree off.
func TestNamespaceTree(t *testing.T) {
	var m tea.Model = New("live 1s", false)
	m, _ = m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m, _ = m.Update(FrameMsg(robotFrame()))
	v := m.View()
	golden(t, "tree_closed_120x40.txt", v)
	for _, want := range []string{"▸ /control (30 topics)", "▸ /perception (30 topics, 1 stalled)", "▸ /sensing (30 topics)", "/tf", "▸ /sensing (3 nodes)"} {
		if !strings.Contains(v, want) {
			t.Errorf("the closed tree has no %q", want)
		}
	}
	if strings.Contains(v, "t0") {
		t.Errorf("a closed namespace shows its topics:\n%s", v)
	}
	// The cursor starts on /tf (root rows first); down once is /control, down twice /perception.
	m = keysIn(m, "down", "down", "enter")
	v = m.View()
	golden(t, "tree_perception_open_120x40.txt", v)
	if !strings.Contains(v, "▾ /perception (30 topics, 1 stalled)") || !strings.Contains(v, "   node_1/debug/t0 ") {
		t.Errorf("/perception did not open to its topics:\n%s", v)
	}
	if !strings.Contains(v, "— 91 topics, 10 nodes,") {
		t.Errorf("the title does not count every topic and node:\n%s", v)
	}
	m = keysIn(m, "/", "t7", "enter")
	v = m.View()
	if !strings.Contains(v, "   node_0/debug/t7 ") || strings.Contains(v, "debug/t6") {
		t.Errorf("the filter t7 shows no match under an open namespace, or more than its matches:\n%s", v)
	}
	m = keysIn(m, "esc", "t")
	if v = m.View(); !strings.Contains(v, "/control/node_0/debug/t0") || strings.Contains(v, "▸") {
		t.Errorf("t did not turn the tree off:\n%s", v)
	}
}
