package main

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/graph"
	"ros2_pulse/internal/segment"
)

// startWeb runs pulse web over segs (extra: more flags) and returns its address.
func startWeb(t testing.TB, segs string, extra ...string) string {
	t.Helper()
	addr := freePort(t)
	cmd := pulseCmd(t, append([]string{"web", "--listen", addr}, extra...)...)
	cmd.Env = append(cmd.Env, "ROS_PULSE_DIR="+segs)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/api/info"); err == nil {
			resp.Body.Close()
			return addr
		}
	}
	t.Fatalf("pulse web did not listen on %s", addr)
	return ""
}

// pageEdge is an edge as the page drew it.
type pageEdge struct {
	From, To, Kind, State string
	Hz                    float64
}

// waitFor evaluates a JavaScript condition until it is true.
func waitFor(t testing.TB, p page, what, cond string, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(100 * time.Millisecond) {
		if ok, err := eval[bool](p, cond); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed %s (%s)", what, cond)
		}
	}
}

const pageEdgesJS = `[...document.querySelectorAll("g.edge")].map(e => ({From: e.dataset.from, To: e.dataset.to, Kind: e.dataset.kind, State: e.dataset.state, Hz: Number(e.dataset.hz)}))`

// pageMatchesGraph compares every pub and sub edge of 20 Hz or more on the
// page with what pulse graph --format json measures over the same window:
// pulse graph is started as the page gets a window, so its sample and the
// page's next window cover the same period (within the time pulse graph
// takes to start), and each must say the other's rate within 5 %. It
// returns how many edges it compared.
func pageMatchesGraph(t *testing.T, p page, segs string, period time.Duration) int {
	t.Helper()
	frames := func() int { n, _ := eval[int](p, `window.__pulse.frames`); return n }
	n0 := frames()
	for deadline := time.Now().Add(3 * period); frames() == n0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the page drew no new window")
		}
	}
	gcmd := pulseCmd(t, "graph", "--format", "json", "--period", period.String())
	gcmd.Env = append(gcmd.Env, "ROS_PULSE_DIR="+segs)
	raw, err := gcmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, "the window pulse graph measured", `window.__pulse.frames >= `+strconv.Itoa(n0+2), 2*period)
	var gr graph.Graph
	if err := json.Unmarshal(raw, &gr); err != nil {
		t.Fatal(err)
	}
	drawn, err := eval[[]pageEdge](p, pageEdgesJS)
	if err != nil {
		t.Fatal(err)
	}
	key := map[string]string{}
	for _, n := range gr.Nodes {
		key[n.ID] = "n:" + n.Name + "@" + strconv.Itoa(n.Pid)
	}
	for _, tp := range gr.Topics {
		key[tp.ID] = "t:" + tp.Name
	}
	compared := 0
	defer func() {
		if compared < 5 {
			t.Logf("pulse graph said: %s", raw)
		}
	}()
	for _, e := range gr.Edges {
		hz, _ := e.Hz("inter")
		intra, _ := e.Hz("intra")
		hz += intra
		if e.Kind != "pub" && e.Kind != "sub" || hz < 20 {
			continue
		}
		found := false
		for _, d := range drawn {
			if d.From == key[e.From] && d.To == key[e.To] && d.Kind == e.Kind {
				found = true
				compared++
				if math.Abs(d.Hz-hz) > 0.05*hz {
					t.Errorf("%s -> %s: the page says %.2f Hz, pulse graph %.2f Hz", d.From, d.To, d.Hz, hz)
				}
			}
		}
		if !found {
			t.Errorf("the page has no edge %s -> %s (%s)", key[e.From], key[e.To], e.Kind)
		}
	}
	return compared
}

// The demo robot in a real browser: the page draws its nodes and topics, and
// every edge of 20 Hz or more carries the rate pulse graph --format json
// measures at the same time, within 5 %; a stalled topic turns STALL and a
// killed node exited within two windows, a new topic appears without a
// reload and without moving what was drawn (issue 27).
func TestWebInBrowser(t *testing.T) { browsers(t, webInBrowser) }

func webInBrowser(t *testing.T, p page) {
	dir := t.TempDir()
	graphFile := filepath.Join(dir, "g.graph")
	os.WriteFile(graphFile, []byte(`process sensors
  node /imu_driver
    pub /imu 50 thread stall=14:60
  node /camera
    pub /image 30 thread size=100000
    reuse_pub /first /second 20 16
process control
  node /controller
    sub /imu
    sub /image
    sub /first
    pub /cmd_vel 20
process doomed kill=14
  node /doomed
    pub /doomed_topic 40 thread
  node /doomed_listener
    sub /doomed_topic
`), 0o600)
	// Gaps and latency tracked, for the detail panel; bytes, for the edges' widths.
	graphCmd, segs := startGraph(t, dir, graphFile, "40", "ROS_TOPIC_STATS_JITTER=1", "ROS_TOPIC_STATS_LATENCY=1", "ROS_PULSE_BYTES=1") // the browser is open: the graph's clock starts now
	defer func() { graphCmd.Process.Signal(os.Interrupt); graphCmd.Wait() }()
	// /cmd_vel is published at 20 Hz: below this spec.
	specFile := filepath.Join(dir, "spec.yaml")
	os.WriteFile(specFile, []byte("topics:\n  /cmd_vel: {min_hz: 100}\n"), 0o600)
	addr := startWeb(t, segs, "--period", "2s", "--spec", specFile)
	if err := p.navigate("http://" + addr + "/"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, "the graph's edges", `window.__pulse && window.__pulse.frames >= 2 && document.querySelectorAll("g.edge").length >= 6`, 20*time.Second)
	eval[int](p, `window.__marker = 1`) // a reload would lose it

	// With bytes measured, an edge's width is its bandwidth: the camera's
	// 30 Hz of ~100 kB outweighs the IMU's 50 Hz of 56 B, and its label says MB/s.
	type edgeLook struct {
		Bytes, Width float64
		Label        string
	}
	const lookJS = `(sel => { const e = document.querySelector(sel); return {Bytes: Number(e.dataset.bytes), Width: Number(e.children[0].getAttribute("stroke-width")), Label: e.children[1].textContent}; })`
	waitFor(t, p, "the camera's bytes", `Number(document.querySelector('g.edge[data-from^="n:/camera@"][data-to="t:/image"]').dataset.bytes) > 0`, 10*time.Second)
	img, err1 := eval[edgeLook](p, lookJS+`('g.edge[data-from^="n:/camera@"][data-to="t:/image"]')`)
	imu, err2 := eval[edgeLook](p, lookJS+`('g.edge[data-from^="n:/imu_driver@"][data-to="t:/imu"]')`)
	if err1 != nil || err2 != nil || img.Bytes < 1e6 || imu.Bytes <= 0 || img.Width <= imu.Width || !strings.Contains(img.Label, "MB/s") {
		t.Errorf("bytes on the edges: /image %+v, /imu %+v (%v %v)", img, imu, err1, err2)
	}

	compared := pageMatchesGraph(t, p, segs, 2*time.Second)
	if compared < 5 {
		t.Errorf("only %d edges of 20 Hz or more compared", compared)
	}

	// Positions before the faults and the new topic.
	const positions = `Object.fromEntries([...document.querySelectorAll("g.entity")].map(e => [e.dataset.key, e.getAttribute("transform")]))`
	before, _ := eval[map[string]string](p, positions)
	// At 14 s /imu stalls and /doomed's process is killed; at 16 s /second
	// appears. Every frame the page draws is read until /imu is drawn
	// stalled: the first window that counts none of its messages must say
	// so, two windows at most after the last window that counted some.
	type imuFrame struct {
		N      int     `json:"n"`
		TsNs   float64 `json:"ts"`
		Window float64 `json:"w"`
		Pub    float64 `json:"pub"`
		State  string  `json:"st"`
		Drawn  string  `json:"drawn"`
	}
	const imuJS = `(() => { const s = window.__pulse.shape, f = window.__pulse.frame, i = s.topics.findIndex(t => t.name === "/imu");
	  return {n: window.__pulse.frames, ts: f.ts_ns, w: f.window_s, pub: f.topics[i].pub_hz || 0, st: f.topics[i].state,
	    drawn: document.querySelector('g.entity[data-key="t:/imu"]').dataset.state}; })()`
	var lastCounted, stalled *imuFrame
	seen := map[int]bool{}
	for deadline := time.Now().Add(20 * time.Second); stalled == nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("/imu was never drawn stalled (last window that counted it: %+v)", lastCounted)
		}
		f, err := eval[imuFrame](p, imuJS)
		if err != nil || seen[f.N] {
			continue
		}
		seen[f.N] = true
		switch {
		case f.Drawn == "STALL":
			stalled = &f
		case f.Pub > 0:
			lastCounted = &f
		}
	}
	if lastCounted == nil {
		t.Fatal("no window counted /imu before it stalled")
	}
	if late := (stalled.TsNs - lastCounted.TsNs) / 1e9; late > 2*stalled.Window*1.1 {
		t.Errorf("/imu drawn stalled %.1f s after the last window that counted it (windows of %.1f s), want two windows at most", late, stalled.Window)
	}
	t.Logf("/imu drawn stalled %.1f s (%d frames) after the last window that counted it", (stalled.TsNs-lastCounted.TsNs)/1e9, stalled.N-lastCounted.N)
	if stalled.N-lastCounted.N > 2 {
		t.Errorf("/imu drawn stalled %d frames after the last window that counted it, want two at most", stalled.N-lastCounted.N)
	}
	waitFor(t, p, "/doomed exited", `[...document.querySelectorAll("g.entity[data-kind=node]")].some(e => e.dataset.key.startsWith("n:/doomed@") && e.dataset.state === "exited")`, 10*time.Second)
	waitFor(t, p, "the new topic /second", `!!document.querySelector('g.entity[data-key="t:/second"]')`, 15*time.Second)
	after, _ := eval[map[string]string](p, positions)
	for k, v := range before {
		if a, ok := after[k]; ok && a != v {
			t.Errorf("%s moved from %s to %s", k, v, a)
		}
	}
	// A topic below its spec is WARN in the table and on the graph, its edges too.
	waitFor(t, p, "/cmd_vel below its spec", `document.querySelector('g.entity[data-key="t:/cmd_vel"]').dataset.state === "WARN" &&
	  document.querySelector('g.edge[data-to="t:/cmd_vel"]').dataset.state === "warn" &&
	  document.querySelector('#topics tr[data-topic="/cmd_vel"]').cells[5].textContent === "WARN" &&
	  [...document.querySelectorAll("#warnings li")].some(li => li.textContent.includes("/cmd_vel"))`, 10*time.Second)
	if st, _ := eval[string](p, `document.querySelector('g.edge[data-to="t:/image"]').dataset.state`); st == "warn" {
		t.Errorf("/image meets the spec (it names nothing of it) but its edge is drawn below spec")
	}

	// A click on /image shows each endpoint with its process, rate, QoS and
	// callback time, and the topic's gaps and latency; the table its latency.
	eval[bool](p, `(document.querySelector('g.entity[data-key="t:/image"]').dispatchEvent(new MouseEvent("click")), true)`)
	waitFor(t, p, "/image's detail", `[...document.querySelectorAll("#detailtable tr")].length >= 3 && document.getElementById("detailgaps").textContent.includes("latency")`, 10*time.Second)
	type detailRow struct{ Side, Other, Pid, Hz, QoS, Time string }
	rows, err := eval[[]detailRow](p, `[...document.querySelectorAll("#detailtable tr")].slice(1).map(r => ({Side: r.cells[0].textContent, Other: r.cells[1].textContent, Pid: r.cells[2].textContent, Hz: r.cells[3].textContent, QoS: r.cells[5].textContent, Time: r.cells[6].textContent}))`)
	if err != nil {
		t.Fatal(err)
	}
	sides := map[string]detailRow{}
	for _, r := range rows {
		sides[r.Side+" "+r.Other] = r
	}
	if pub, sub := sides["pub /camera"], sides["sub /controller"]; len(rows) != 2 || pub.Pid == "" || sub.Pid == "" || pub.Pid == sub.Pid ||
		!strings.Contains(pub.QoS, "msg/") || !strings.Contains(sub.Time, " / ") {
		t.Errorf("/image's detail: %+v", rows)
	}
	// The detail is of the window drawn: its rate is the edge's (one window may pass between the two reads).
	edgeHz, _ := eval[float64](p, `Number(document.querySelector('g.edge[data-from^="n:/camera@"][data-to="t:/image"]').dataset.hz)`)
	if hz, _ := strconv.ParseFloat(sides["pub /camera"].Hz, 64); edgeHz <= 0 || math.Abs(hz-edgeHz) > 0.1*edgeHz {
		t.Errorf("/image's publisher in the detail: %q Hz, its edge %.2f Hz", sides["pub /camera"].Hz, edgeHz)
	}
	// bytes measured: the detail's last column says the camera's bandwidth and its ~100 kB messages
	if b, _ := eval[string](p, `[...document.querySelectorAll("#detailtable tr")].slice(1).filter(r => r.cells[0].textContent === "pub").map(r => r.cells[8] ? r.cells[8].textContent : "")[0] || ""`); !strings.Contains(b, "MB/s") || !strings.Contains(b, "kB") {
		t.Errorf("/image's publisher bytes in the detail: %q", b)
	}
	if lat, _ := eval[string](p, `document.querySelector('#topics tr[data-topic="/image"]').cells[4].textContent`); lat == "-" || lat == "" {
		t.Errorf("the topic table has no latency for /image: %q", lat)
	}
	if marker, err := eval[int](p, `window.__marker || 0`); err != nil || marker != 1 {
		t.Errorf("the page reloaded (marker %d, %v)", marker, err)
	}
	ms, _ := eval[float64](p, `window.__pulse.lastRenderMs`)
	t.Logf("compared %d edges; the last frame drew in %.1f ms", compared, ms)
}

// Every name on the page comes from a segment and is shown as text: a
// hostile node, topic and executable name runs no script, and reads as written.
func TestWebEscapesHostileNames(t *testing.T) { browsers(t, webEscapesHostileNames) }

func webEscapesHostileNames(t *testing.T, p page) {
	segs := t.TempDir()
	hostileNode := `/<img src=x onerror="window.__pwned=1">`
	hostileTopic := `/</text><script>window.__pwned=2</script>`
	err := segment.WriteSynthetic(filepath.Join(segs, "4242.0.pulse"), segment.SyntheticSpec{Pid: 4242, StartMono: 1,
		Exe: `/bin/"><script>window.__pwned=3</script>`, Nodes: []string{hostileNode},
		Endpoints: []segment.SyntheticEndpoint{{Kind: segment.KindPublisher, Name: hostileTopic, Node: 0, Counts: [4]uint64{5}}}})
	if err != nil {
		t.Fatal(err)
	}
	addr := startWeb(t, segs, "--period", "500ms", "--retain", "-1s")
	if err := p.navigate("http://" + addr + "/"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, "the hostile topic", `[...document.querySelectorAll("g.entity text.name")].some(e => e.textContent === `+jsString(hostileTopic)+`)`, 15*time.Second)
	waitFor(t, p, "the hostile node", `[...document.querySelectorAll("g.entity text.name")].some(e => e.textContent === `+jsString(hostileNode)+`)`, 5*time.Second)
	if pwned, err := eval[int](p, `window.__pwned === undefined ? -1 : Number(window.__pwned)`); err != nil || pwned != -1 {
		t.Errorf("a name ran a script: window.__pwned = %v (%v)", pwned, err)
	}
	// Our own scripts only (the vendored layout library, view.js, draw.js, app.js, panel.js), no img.
	const ours = `[...document.querySelectorAll("script")].map(s => new URL(s.src).pathname).concat([...document.querySelectorAll("img")].map(() => "img")).join(" ")`
	if scripts, _ := eval[string](p, ours); scripts != "/vendor/dagre-3.1.3.min.js /view.js /draw.js /app.js /panel.js" {
		t.Errorf("script and img elements on the page: %q, want only ours", scripts)
	}
}

func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }

// A recording replays with a time slider: the page steps to the first and
// the last window and shows each one's graph (issue 27).
func TestWebReplay(t *testing.T) { browsers(t, webReplay) }

func webReplay(t *testing.T, p page) {
	dir := t.TempDir()
	_, sim, _ := bin(t)
	graphFile := filepath.Join(dir, "g.graph")
	os.WriteFile(graphFile, []byte("process p\n  node /talker\n    pub /chatter 20 thread\n  node /listener\n    sub /chatter\n"), 0o600)
	rec := filepath.Join(dir, "run.log")
	run := pulseCmd(t, "run", "--period", "500ms", "--record", rec, "--no-summary", "--", sim, "--graph", graphFile, "--duration", "3")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("pulse run: %v\n%s", err, out)
	}
	addr := startWeb(t, t.TempDir(), "--log", rec)
	if err := p.navigate("http://" + addr + "/"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, "the slider", `!document.getElementById("replay").hidden && Number(document.getElementById("slider").max) >= 4`, 15*time.Second)
	step := func(to string) string {
		if _, err := eval[bool](p, `(() => { const s = document.getElementById("slider"); s.value = `+to+`; s.dispatchEvent(new Event("input")); return true })()`); err != nil {
			t.Fatal(err)
		}
		waitFor(t, p, "window "+to, `window.__pulse.frame && String(window.__pulse.frame.index) === String(`+to+`)`, 5*time.Second)
		text, _ := eval[string](p, `document.getElementById("slidertext").textContent`)
		return text
	}
	first := step("0")
	last := step(`document.getElementById("slider").max`)
	if !strings.HasPrefix(first, "window 1 of ") || first == last {
		t.Errorf("slider: first %q, last %q", first, last)
	}
	if chatter, _ := eval[bool](p, `!!document.querySelector('g.entity[data-key="t:/chatter"]')`); !chatter {
		t.Errorf("the replayed window does not show /chatter")
	}
	// A reader dragging the slider sends many requests at once; their answers
	// may arrive in any order, and the page must end on the last one asked.
	if _, err := eval[bool](p, `(() => { const s = document.getElementById("slider"); for (const v of [s.max, 0, s.max, 2, 0, s.max, 1]) { s.value = v; s.dispatchEvent(new Event("input")); } return true })()`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, "window 1 after a drag", `window.__pulse.frame && window.__pulse.frame.index === 1`, 5*time.Second)
	time.Sleep(500 * time.Millisecond)
	if index, _ := eval[int](p, `window.__pulse.frame.index`); index != 1 {
		t.Errorf("after a drag ending on window 1 the page shows window %d", index)
	}
}

// The page takes export's TLS and basic-auth configuration (exporter-toolkit):
// without the password nothing is served, the page and its stream included.
func TestWebTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	webCfg, client := tlsAndPassword(t, dir, "viewer", "s3cret")
	addr := freePort(t)
	cmd := pulseCmd(t, "web", "--listen", addr, "--web.config.file", webCfg)
	cmd.Env = append(cmd.Env, "ROS_PULSE_DIR="+filepath.Join(dir, "segs"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	get := func(path, user, pass string) int {
		req, _ := http.NewRequest("GET", "https://"+addr+path, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	code := 0
	for deadline := time.Now().Add(5 * time.Second); code == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		code = get("/", "viewer", "s3cret")
	}
	if code != 200 {
		t.Fatalf("the page with TLS and the password: %d", code)
	}
	for _, path := range []string{"/", "/app.js", "/api/info"} {
		if c := get(path, "", ""); c != 401 {
			t.Errorf("%s without credentials: %d, want 401", path, c)
		}
		if c := get(path, "viewer", "wrong"); c != 401 {
			t.Errorf("%s with a wrong password: %d, want 401", path, c)
		}
	}
}

// pulse demo --web shows the demo robot in the browser at the address it prints.
func TestDemoWeb(t *testing.T) {
	addr := freePort(t)
	demo := pulseCmd(t, "demo", "--no-top", "--duration", "12s", "--web", "--listen", addr)
	var stderr strings.Builder
	demo.Stderr, demo.Stdout = &stderr, io.Discard
	if err := demo.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { demo.Process.Signal(os.Interrupt); demo.Wait() }()
	p := chromium(t)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), "http://"+addr+"/"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("demo --web did not print its page's address:\n%s", stderr.String())
		}
	}
	if err := p.navigate("http://" + addr + "/"); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			got, err := eval[string](p, `JSON.stringify({frames: window.__pulse && window.__pulse.frames, nodes: document.querySelectorAll("g.entity[data-kind=node]").length, edges: document.querySelectorAll("g.edge").length, status: document.getElementById("status").textContent})`)
			t.Logf("the page: %s %v\ndemo:\n%s", got, err, stderr.String())
		}
	}()
	waitFor(t, p, "the demo robot's nodes and edges", `document.querySelectorAll("g.entity[data-kind=node]").length >= 6 && [...document.querySelectorAll("g.edge")].some(e => Number(e.dataset.hz) > 0)`, 20*time.Second)
}
