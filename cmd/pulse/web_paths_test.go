package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The chain graph with links on, in a real browser (issue 47): the page
// lists its end-to-end paths with their latency (a named one through the
// intra-process hop too, and which hop of a named path links nothing), and each relaying node's publish edge carries its
// hop's latency on the picture and the whole hop in its tooltip.
func TestWebPaths(t *testing.T) { browsers(t, webPaths) }

func webPaths(t *testing.T, p page) {
	dir := t.TempDir()
	graphCmd, segs := startGraph(t, dir, "chain", "30", "ROS_PULSE_LINKS=1")
	defer func() { graphCmd.Process.Signal(os.Interrupt); graphCmd.Wait() }()
	specFile := filepath.Join(dir, "spec.yaml")
	os.WriteFile(specFile, []byte("paths:\n  camera: {via: [/sensing/image, /perception/camera_objects, /perception/camera_tracks], max_ms: 50}\n"+
		"  skips: {via: [/sensing/points, /perception/filtered, /planning/trajectory]}\n"), 0o600)
	addr := startWeb(t, segs, "--period", "1s", "--spec", specFile)
	if err := p.navigate("http://" + addr + "/"); err != nil {
		t.Fatal(err)
	}
	rows := `[...document.querySelectorAll("#paths tbody tr")].map(r => [...r.cells].map(c => c.textContent).join("|"))`
	waitFor(t, p, "the lidar path with its latency", rows+`.some(r => /^\/sensing\/points -> \/control\/cmd_vel\|\d+\.\d\|\d+\.\d\|-\|ok$/.test(r))`, 15*time.Second)
	waitFor(t, p, "the camera path measured through its intra-process hop",
		rows+`.some(r => /^camera\|\d+\.\d\|\d+\.\d\|50\|ok$/.test(r))`, 5*time.Second)
	waitFor(t, p, "a named path that skips a node not measured, at that hop",
		rows+`.some(r => r === "skips|-|-|-|no link: /perception/filtered -> /planning/trajectory")`, 5*time.Second)
	// the planner's publish of /planning/trajectory: its hop's age on the picture, the whole hop in its tooltip
	edge := `[...document.querySelectorAll("g.edge")].find(e => e.dataset.kind === "pub" && e.dataset.from.startsWith("n:/planning/planner@") && e.dataset.to === "t:/planning/trajectory")`
	waitFor(t, p, "the planner's hop latency on its edge", `(() => { const e = `+edge+`; return !!e && /p50 \d+\.\d ms/.test(e.children[1].textContent) && /from \/perception\/objects: age p50 \d+\.\d ms, p99 \d+\.\d ms, own \d+\.\d ms/.test(e.children[2].textContent); })()`, 5*time.Second)
	if v, err := eval[string](p, `(`+edge+`).children[1].textContent`); err == nil {
		t.Logf("planner edge: %q", v)
	}
}
