package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"ros2_pulse/internal/segment"
)

// labelsJS judges every label the page draws in the graph pane: the ones
// drawn smaller than 11 px on screen, and the pairs whose boxes overlap
// (DOM bounding boxes, by more than a pixel each way).
const labelsJS = `(() => {
  const texts = [...document.querySelectorAll("#viewport text")].filter(t => t.textContent.trim() !== "" && t.getClientRects().length > 0);
  const boxes = texts.map(t => ({t, r: t.getBoundingClientRect(), px: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a}));
  const small = boxes.filter(b => b.px < 10.99).map(b => b.t.textContent + " " + b.px.toFixed(1) + "px");
  const overlaps = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i].r, b = boxes[j].r;
    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left), h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (w > 1 && h > 1) overlaps.push(boxes[i].t.textContent + " / " + boxes[j].t.textContent);
  }
  return {n: boxes.length, small: small.slice(0, 10), overlaps: overlaps.slice(0, 10), nOverlaps: overlaps.length};
})()`

type labelReport struct {
	N         int      `json:"n"`
	Small     []string `json:"small"`
	Overlaps  []string `json:"overlaps"`
	NOverlaps int      `json:"nOverlaps"`
}

// checkLabels fails the test for a label under 11 px or two that overlap.
func checkLabels(t *testing.T, p page, view string) {
	t.Helper()
	r, err := eval[labelReport](p, labelsJS)
	if err != nil {
		t.Fatal(err)
	}
	if r.N < 10 {
		t.Errorf("%s: only %d labels drawn", view, r.N)
	}
	if len(r.Small) > 0 {
		t.Errorf("%s: labels under 11 px: %q", view, r.Small)
	}
	if r.NOverlaps > 0 {
		t.Errorf("%s: %d pairs of labels overlap, e.g. %q", view, r.NOverlaps, r.Overlaps)
	}
	t.Logf("%s: %d labels, none under 11 px, %d overlapping", view, r.N, r.NOverlaps)
}

// The Autoware-shaped robot (sim/graphs/robot.graph, 157 nodes, ~600
// topics) in chromium, read as a person reads it (issue 46): the first view
// has its namespaces closed into boxes with their traffic, no label under
// 11 px and none over another; a namespace opens in place; a focus draws one
// node's neighbourhood; every node is reached by the search box and drawn
// in the pane; hostile, very long and unicode names beside it read as
// written. PULSE_SCREENSHOTS=DIR writes the three views to DIR.
func TestWebRobot(t *testing.T) {
	dir := t.TempDir()
	g, segs := startGraph(t, dir, "robot", "120")
	defer func() { g.Process.Signal(os.Interrupt); g.Wait() }()
	hostile := []string{`/<img src=x onerror="window.__pwned=1">`, "/ünïcødé/名前_ノード", "/" + strings.Repeat("very_long_name_", 12) + "node"}
	err := segment.WriteSynthetic(filepath.Join(segs, "4242.0.pulse"), segment.SyntheticSpec{Pid: 4242, StartMono: 1,
		Exe: "/bin/strange", Nodes: hostile,
		Endpoints: []segment.SyntheticEndpoint{{Kind: segment.KindPublisher, Name: "/</text><script>window.__pwned=2</script>", Node: 0, Counts: [4]uint64{5}},
			{Kind: segment.KindSubscription, Name: "/</text><script>window.__pwned=2</script>", Node: 1, Counts: [4]uint64{5}}}})
	if err != nil {
		t.Fatal(err)
	}
	addr := startWeb(t, segs, "--period", "1s", "--retain", "-1s")
	p := chromium(t)
	if _, err := chromedp.Run(p.ctx, chromedp.EmulateViewport(1600, 1000)); err != nil {
		t.Fatal(err)
	}
	if err := p.navigate("http://" + addr + "/"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, "the whole robot", `window.__pulse.shape && window.__pulse.shape.nodes.length >= 160 && window.__pulse.frames >= 3`, 60*time.Second)
	shot := func(name string) {
		out := os.Getenv("PULSE_SCREENSHOTS")
		if out == "" {
			return
		}
		png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The overview: the namespaces closed, each with its traffic.
	boxes, _ := eval[[]string](p, `[...document.querySelectorAll("g.entity.namespace")].map(e => e.dataset.name + " " + e.querySelector("text.traffic").textContent)`)
	for _, ns := range []string{"/sensing", "/localization", "/perception", "/planning", "/control", "/system"} {
		found := false
		for _, b := range boxes {
			if strings.HasPrefix(b, ns+" ") && strings.Contains(b, "msg/s") && !strings.HasPrefix(b, ns+" 0.0 msg/s") {
				found = true
			}
		}
		if !found {
			t.Errorf("no closed %s box with its traffic in %q", ns, boxes)
		}
	}
	if n, _ := eval[int](p, `document.querySelectorAll("g.entity").length`); n > 40 {
		t.Errorf("the overview draws %d entities, want the namespaces closed", n)
	}
	checkLabels(t, p, "overview")
	shot("robot-overview.png")

	// One namespace opened in place: its nodes and sub-namespaces inside a frame.
	eval[bool](p, `(document.querySelector('g.entity[data-key="ns:/perception"]').dispatchEvent(new MouseEvent("click")), true)`)
	waitFor(t, p, "/perception open", `!!document.querySelector('g.cluster[data-key="c:/perception"]') && !document.querySelector('g.entity[data-key="ns:/perception"]')`, 5*time.Second)
	checkLabels(t, p, "/perception open")
	shot("robot-perception.png")

	// A focus: the controller's neighbourhood, two hops up and down.
	var ctrl string
	if ctrl, err = eval[string](p, `window.__pulse.shape.nodes.filter(n => n.name === "/control/trajectory_follower/controller_node_exe").map(n => "n:" + n.name + "@" + n.pid)[0]`); err != nil || ctrl == "" {
		t.Fatalf("no controller node: %v", err)
	}
	eval[bool](p, `(document.getElementById("search").value = "/control/trajectory_follower/controller_node_exe", document.getElementById("search").dispatchEvent(new Event("change")), document.getElementById("focus").click(), true)`)
	waitFor(t, p, "the controller's neighbourhood", `!document.getElementById("unfocus").hidden && !!document.querySelector('g.entity[data-key="`+ctrl+`"]') && !!document.querySelector('g.entity[data-key="t:/planning/scenario_planning/trajectory"]')`, 5*time.Second)
	if n, _ := eval[int](p, `document.querySelectorAll("g.entity").length`); n < 5 || n > 80 {
		t.Errorf("the focus draws %d entities", n)
	}
	checkLabels(t, p, "focus on the controller")
	shot("robot-focus.png")
	eval[bool](p, `(document.getElementById("unfocus").click(), true)`)

	// Every node by the search box: drawn, and inside the pane.
	type miss struct{ Name, Why string }
	misses, err := eval[[]miss](p, `(() => {
	  const pane = document.getElementById("graph").getBoundingClientRect(), out = [];
	  for (const n of window.__pulse.shape.nodes) {
	    const box = document.getElementById("search");
	    box.value = n.name;
	    box.dispatchEvent(new Event("change"));
	    const e = document.querySelector('g.entity[data-key="' + CSS.escape("n:" + n.name + "@" + n.pid) + '"]');
	    if (!e) { out.push({Name: n.name, Why: "not drawn"}); continue; }
	    const r = e.getBoundingClientRect();
	    if (e.classList.contains("hidden") || r.right < pane.left || r.left > pane.right || r.bottom < pane.top || r.top > pane.bottom)
	      out.push({Name: n.name, Why: "outside the pane"});
	  }
	  return out;
	})()`)
	if err != nil {
		t.Fatal(err)
	}
	if len(misses) > 0 {
		t.Errorf("%d nodes not reached by search, e.g. %+v", len(misses), misses[0])
	}
	for _, name := range hostile {
		if ok, _ := eval[bool](p, `[...document.querySelectorAll("g.entity text.name")].some(e => e.textContent === `+jsString(name)+`) || [...document.querySelectorAll("g.entity title")].some(e => e.textContent === `+jsString(name)+`)`); !ok {
			t.Errorf("%q is not shown as written", name)
		}
	}
	if pwned, err := eval[int](p, `window.__pwned === undefined ? -1 : Number(window.__pwned)`); err != nil || pwned != -1 {
		t.Errorf("a name ran a script: window.__pwned = %v (%v)", pwned, err)
	}
	ms, _ := eval[float64](p, `window.__pulse.lastRenderMs`)
	lay, _ := eval[float64](p, `window.__pulse.lastLayoutMs`)
	t.Logf("the last window drew in %.1f ms, the last layout took %.0f ms", ms, lay)
}
