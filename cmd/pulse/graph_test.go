package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/graph"
)

// pulse graph on the running demo robot: every pub/sub edge with its
// transport and rate, the rclpy subscriber included; the DOT output is
// accepted by Graphviz itself.
func TestGraphLive(t *testing.T) {
	dir := t.TempDir()
	g, segs := startGraph(t, dir, "demo", "6")
	defer g.Wait()
	time.Sleep(time.Second)
	run := func(format string) []byte {
		cmd := pulseCmd(t, "graph", "--format", format)
		cmd.Env = append(cmd.Env, "ROS_PULSE_DIR="+segs)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("pulse graph --format %s: %v", format, err)
		}
		return out
	}
	gr, got := graphEdges(t, run("json"))
	for edge, want := range map[string]struct {
		transport string
		hz        float64
	}{
		"/camera_driver -> /camera/image":   {"intra", 30},
		"/camera/image -> /image_proc":      {"intra", 30},
		"/image_proc -> /camera/detections": {"both", 30},
		"/cmd_vel -> /odometry":             {"inter", 20}, // rclpy, counted at rmw_take
		"/odometry -> /odom":                {"inter", 50},
		"/lidar_driver -> /scan":            {"inter", 10},
	} {
		e, ok := got[edge]
		tr := "inter"
		if want.transport == "intra" {
			tr = "intra"
		}
		hz, _ := e.Hz(tr)
		if !ok || e.Transport != want.transport || hz < want.hz*0.9 || hz > want.hz*1.1 || !e.Alive {
			t.Errorf("%s: %+v, want %s at %g Hz", edge, e, want.transport, want.hz)
		}
	}
	if len(gr.Edges) != 12 {
		t.Errorf("%d edges, want 12 (the demo's 6 publishers and 6 subscriptions)", len(gr.Edges))
	}
	dot := run("dot")
	mmd := run("mermaid")
	if !bytes.HasPrefix(mmd, []byte("flowchart LR\n")) || strings.Count(string(mmd), "-->")+strings.Count(string(mmd), "-.->") != 12 {
		t.Errorf("mermaid:\n%s", mmd)
	}
	dotBin, err := exec.LookPath("dot")
	if err != nil {
		t.Fatal("Graphviz is needed to check the DOT output (apt-get install graphviz; .ci/run does)")
	}
	check := exec.Command(dotBin, "-Tsvg")
	check.Stdin = bytes.NewReader(dot)
	svg, err := check.Output()
	if err != nil || !bytes.Contains(svg, []byte("/camera/image")) {
		t.Errorf("Graphviz rejects the DOT output: %v\n%s", err, dot)
	}
	bad := pulseCmd(t, "graph", "--format", "png")
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), `expected dot, mermaid or json`) {
		t.Errorf("a bad format: %v %s", err, out)
	}
}

// graphEdges decodes pulse graph's JSON and names its edges "from -> to".
func graphEdges(t *testing.T, out []byte) (graph.Graph, map[string]graph.Edge) {
	t.Helper()
	var gr graph.Graph
	if err := json.Unmarshal(out, &gr); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, n := range gr.Nodes {
		names[n.ID] = n.Name
	}
	for _, tp := range gr.Topics {
		names[tp.ID] = tp.Name
	}
	edges := map[string]graph.Edge{}
	for _, e := range gr.Edges {
		edges[names[e.From]+" -> "+names[e.To]] = e
	}
	return gr, edges
}
