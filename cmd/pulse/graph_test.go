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
	// Wait for the graph (its segments), not for the clock.
	for deadline := time.Now().Add(15 * time.Second); len(segmentFiles(segs)) < 4; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the demo made %d of its 4 segments in 15 s", len(segmentFiles(segs)))
		}
	}
	run := func(format string) []byte {
		cmd := pulseCmd(t, "graph", "--format", format, "--period", "2s")
		cmd.Env = append(cmd.Env, "ROS_PULSE_DIR="+segs)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("pulse graph --format %s: %v", format, err)
		}
		return out
	}
	var out []byte
	did := graphRates(t, dir, func() { out = run("json") })
	gr, got := graphEdges(t, out)
	// Each edge's rate over pulse graph's one 2 s window, against what the
	// graph did over the command's run (rateAgrees: the window's ends are
	// pulse graph's own).
	for edge, want := range map[string]struct{ transport, truth string }{
		"/camera_driver -> /camera/image":   {"intra", "/camera/image pub"},
		"/camera/image -> /image_proc":      {"intra", "/camera/image recv /image_proc"},
		"/image_proc -> /camera/detections": {"both", "/camera/detections pub"},
		"/cmd_vel -> /odometry":             {"inter", "/cmd_vel recv /odometry"}, // rclpy, counted at rmw_take
		"/odometry -> /odom":                {"inter", "/odom pub"},
		"/lidar_driver -> /scan":            {"inter", "/scan pub"},
	} {
		e, ok := got[edge]
		tr := "inter"
		if want.transport == "intra" {
			tr = "intra"
		}
		hz, _ := e.Hz(tr)
		if !ok || e.Transport != want.transport || !rateAgrees(hz, did[want.truth], 2) || !e.Alive {
			t.Errorf("%s: %+v, want %s at the graph's %.3f Hz", edge, e, want.transport, did[want.truth])
		}
	}
	kinds := map[string]int{}
	for _, e := range gr.Edges {
		kinds[e.Kind]++
	}
	if kinds["pub"]+kinds["sub"] != 12 || kinds["serves"] != 1 || len(gr.Services) != 1 || gr.Services[0].Name != "/controller/reset" {
		t.Errorf("edges by kind %v, services %+v; want the demo's 6 publishers, 6 subscriptions and /controller's reset service", kinds, gr.Services)
	}
	dot := run("dot")
	mmd := run("mermaid")
	// every edge drawn: the 12 topic edges, and a serving edge per service while its server lives
	if !bytes.HasPrefix(mmd, []byte("flowchart LR\n")) || strings.Count(string(mmd), "-->")+strings.Count(string(mmd), "-.->") != 12+strings.Count(string(mmd), "{{") {
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
