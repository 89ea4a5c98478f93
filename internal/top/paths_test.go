package top

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/paths"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// pathsModel is the faults model whose last frames link a chain: a named
// path over its bound (a path_slow verdict), the same chain found, and a
// named path through a hop nothing links.
func pathsModel(w, h int, ks ...string) tea.Model {
	var m tea.Model = New("live 1s", false)
	m, _ = m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	hop := func(node, from, to string, b int, sumMs float64) window.Link {
		hist := []window.Bucket{{B: b, N: 10}}
		return window.Link{Pid: 100, Node: node, From: from, To: to, Alive: true, N: 10, AgeHist: hist, OwnHist: hist,
			Age: window.HistStats(hist, sumMs), Own: window.HistStats(hist, sumMs)}
	}
	rules := []spec.PathRule{{Name: "lidar_to_cmd", Via: []string{"/scan", "/objects", "/cmd_vel"}, MaxMs: 10},
		{Name: "camera", Via: []string{"/image", "/detections"}}}
	for i := 0; i < 4; i++ {
		f := frame(i)
		f.W.Links = []window.Link{hop("/detector", "/scan", "/objects", 40, 45), hop("/planner", "/objects", "/cmd_vel", 48, 82)}
		paths.Fill(f.W, rules)
		f.Warns = append(f.Warns, health.Warning{Kind: health.PathSlow, Topic: "lidar_to_cmd", Timer: -1, Value: f.W.Paths[0].Worst.P99Ms, Bound: 10, Age: time.Second})
		m, _ = m.Update(FrameMsg(f))
	}
	return keysIn(m, ks...)
}

// The paths pane (issue 47): each path with its hops, messages, p50, p99,
// max and bound; a slow one warns, one through an unlinked hop says
// "no link"; tab reaches it (past services, which this frame has none of)
// and enter shows a path's hops with each node's share.
func TestPathsPane(t *testing.T) {
	view := pathsModel(100, 32).View()
	golden(t, "paths_100x32.txt", view)
	for _, want := range []string{"Paths (sort: name)", "lidar_to_cmd", "/scan -> /cmd_vel", "camera", "no link", "WARN", "path_slow", "path lidar_to_cmd: p99"} {
		if !strings.Contains(view, want) {
			t.Errorf("screen lacks %q:\n%s", want, view)
		}
	}
	focus := pathsModel(100, 32, "tab", "tab", "s", "s", "k", "k", "enter").View() // sorted by status: the slow path first (the cursor follows its row)
	for _, want := range []string{"Path lidar_to_cmd — hops", "/scan -> /objects", "/detector", "/objects -> /cmd_vel", "/planner", "p99"} {
		if !strings.Contains(focus, want) {
			t.Errorf("the focus on lidar_to_cmd lacks %q:\n%s", want, focus)
		}
	}
	gap := pathsModel(100, 32, "tab", "tab", "down", "enter").View() // by name: /scan -> /cmd_vel, camera, lidar_to_cmd
	if !strings.Contains(gap, "Path camera — hops") || !strings.Contains(gap, "not measured: hop /image -> /detections") {
		t.Errorf("the focus on camera does not say which hop is not measured:\n%s", gap)
	}
}
