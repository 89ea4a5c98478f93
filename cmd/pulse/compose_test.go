package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"ros2_pulse/internal/simtruth"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scrapeCounter sums the samples of a metric family whose labels contain
// every one of match, from one scrape of a pulse export.
func scrapeCounter(t *testing.T, addr, family string, match ...string) (float64, bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	sum, found := 0.0, false
	line := regexp.MustCompile(`^` + regexp.QuoteMeta(family) + `\{([^}]*)\} (\S+)`)
	for _, l := range strings.Split(string(body), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		ok := true
		for _, want := range match {
			ok = ok && strings.Contains(m[1], want)
		}
		if v, err := strconv.ParseFloat(m[2], 64); ok && err == nil {
			sum, found = sum+v, true
		}
	}
	return sum, found
}

// Two `pulse run`s in one terminal each, and every view in another one with
// no flag but the shared ROS_PULSE_DIR: top (in tmux), export, check --live,
// graph and doctor all see both runs' processes and topics; each run's
// summary covers its own processes only; once both have ended, the running
// exporter removes what they left after its --retain.
func TestViewsSeeConcurrentRuns(t *testing.T) {
	pulse, sim, _ := bin(t)
	dir := t.TempDir()
	machine := filepath.Join(dir, "machine") // not made by the test: the first run makes it, as on a fresh robot
	truthDir := filepath.Join(dir, "truth")  // both graphs' own counts
	os.Mkdir(truthDir, 0o700)
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	graphA := write("a.graph", "process alpha\n  node /alpha\n    pub /alpha_topic 50 thread\nprocess alpha_sink\n  node /alpha_sink\n    sub /alpha_topic\n")
	graphB := write("b.graph", "process beta\n  node /beta\n    pub /beta_topic 20 thread\n")
	view := func(args ...string) *exec.Cmd {
		c := pulseCmd(t, args...)
		c.Env = append(c.Env, "ROS_PULSE_DIR="+machine)
		return c
	}
	start := func(graphPath, seconds string) (*exec.Cmd, *bytes.Buffer) {
		c := view("run", "--period", "1s", "--", sim, "--graph", graphPath, "--duration", seconds, "--truth", truthDir)
		var stderr bytes.Buffer
		c.Stderr = &stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		return c, &stderr
	}
	runA, summaryA := start(graphA, "13")
	runB, summaryB := start(graphB, "11")
	defer func() { runA.Process.Kill(); runB.Process.Kill() }()

	exportAddr := freePort(t)
	exp := view("export", "--listen", exportAddr, "--retain", "1s")
	var expErr bytes.Buffer
	exp.Stderr = &expErr
	if err := exp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { exp.Process.Signal(os.Interrupt); exp.Wait() }()

	tm := &tmuxPane{t: t, socket: fmt.Sprintf("pulse-compose-%d", os.Getpid())}
	defer exec.Command("tmux", "-L", tm.socket, "kill-server").Run()
	tm.run("new-session", "-d", "-s", "top", "-x", "100", "-y", "30",
		fmt.Sprintf("ROS_PULSE_DIR=%s %s top --period 500ms; sleep 60", machine, pulse))

	// doctor lists the three processes, in two run directories.
	var doc []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		doc, _ = view("doctor").Output()
		if strings.Count(string(doc), "alive  pid") == 3 {
			break
		}
	}
	runs := regexp.MustCompile(`\((run-\d+-\d+)\)`).FindAllStringSubmatch(string(doc), -1)
	distinct := map[string]bool{}
	for _, r := range runs {
		distinct[r[1]] = true
	}
	if strings.Count(string(doc), "alive  pid") != 3 || len(distinct) != 2 || !strings.Contains(string(doc), "nodes: /alpha  (run-") ||
		!strings.Contains(string(doc), "nodes: /beta  (run-") {
		t.Fatalf("pulse doctor beside two runs:\n%s", doc)
	}

	// export: the counters grow as the graphs publish. A scrape scans the
	// segments, so the graphs' own counts read just before and just after it
	// bracket what it read (design note 0016).
	pubOn := func(s *simtruth.Snapshot, topic string) float64 { return float64(published(s)[topic]) }
	before1 := readTruth(t, truthDir)
	c1, ok1 := scrapeCounter(t, exportAddr, "ros2_pulse_messages_total", `topic="/alpha_topic"`, `side="pub"`)
	b1, _ := scrapeCounter(t, exportAddr, "ros2_pulse_messages_total", `topic="/beta_topic"`, `side="pub"`)
	after1 := readTruth(t, truthDir)

	// graph: an edge from each run's publisher, at the rate its graph
	// published over the command's run (rateAgrees: one 1 s window of its own).
	gBefore, g0 := readTruth(t, truthDir), time.Now()
	out, err := view("graph", "--format", "json").Output()
	if err != nil {
		t.Fatalf("pulse graph: %v", err)
	}
	gAfter, gSecs := readTruth(t, truthDir), time.Since(g0).Seconds()
	did := func(topic string) float64 { return (pubOn(gAfter, topic) - pubOn(gBefore, topic)) / gSecs }
	_, byName := graphEdges(t, out)
	edges := map[string]float64{}
	for name, e := range byName {
		edges[name], _ = e.Hz("inter")
	}
	for edge, topic := range map[string]string{"/alpha -> /alpha_topic": "/alpha_topic", "/alpha_topic -> /alpha_sink": "/alpha_topic", "/beta -> /beta_topic": "/beta_topic"} {
		if !rateAgrees(edges[edge], did(topic), 1) {
			t.Errorf("graph edge %s: %.2f Hz, its graph published %.2f Hz (edges %v)", edge, edges[edge], did(topic), edges)
		}
	}

	// check --live: 0 for a spec both runs meet, 1 for one they violate.
	met := write("met.yaml", "topics:\n  /alpha_topic: {min_hz: 45, max_hz: 55}\n  /beta_topic: {min_hz: 18, max_hz: 22, side: pub}\nnodes: [/alpha, /alpha_sink, /beta]\n")
	violated := write("violated.yaml", "topics:\n  /alpha_topic: {min_hz: 80}\n  /beta_topic: {min_hz: 18, side: pub}\n")
	checkMet, checkViolated := view("check", "--live", "--spec", met, "--for", "3s", "--period", "1s"),
		view("check", "--live", "--spec", violated, "--for", "3s", "--period", "1s")
	var metOut, violatedOut bytes.Buffer
	checkMet.Stdout, checkMet.Stderr = &metOut, &metOut
	checkViolated.Stdout, checkViolated.Stderr = &violatedOut, &violatedOut
	checkMet.Start()
	checkViolated.Start()
	if err := checkMet.Wait(); err != nil {
		t.Errorf("check --live of a met spec: %v\n%s", err, metOut.String())
	}
	if err := checkViolated.Wait(); exitCode(err) != 1 || !strings.Contains(violatedOut.String(), "/alpha_topic") {
		t.Errorf("check --live of a violated spec: %v (want exit 1)\n%s", err, violatedOut.String())
	}

	before2 := readTruth(t, truthDir)
	c2, ok2 := scrapeCounter(t, exportAddr, "ros2_pulse_messages_total", `topic="/alpha_topic"`, `side="pub"`)
	b2, _ := scrapeCounter(t, exportAddr, "ros2_pulse_messages_total", `topic="/beta_topic"`, `side="pub"`)
	after2 := readTruth(t, truthDir)
	for _, c := range []struct {
		topic  string
		c1, c2 float64
	}{{"/alpha_topic", c1, c2}, {"/beta_topic", b1, b2}} {
		lo := pubOn(before2, c.topic) - pubOn(after1, c.topic) - 1
		hi := pubOn(after2, c.topic) - pubOn(before1, c.topic) + 1
		if !ok1 || !ok2 || c.c2-c.c1 < lo || c.c2-c.c1 > hi || hi < 10 {
			t.Errorf("export counter of %s: %.0f -> %.0f, the graph published %.0f..%.0f in between\n%s", c.topic, c.c1, c.c2, max(lo, 0), hi, expErr.String())
		}
	}

	// top: both runs' topics and nodes on one screen.
	s := tm.waitFor("both runs in top", 5*time.Second, func(s string) bool {
		return strings.HasSuffix(strings.TrimSpace(row(s, "/alpha_topic")), "ok") && strings.HasSuffix(strings.TrimSpace(row(s, "/beta_topic")), "ok")
	})
	if row(s, "/alpha_sink") == "" || row(s, "/beta") == "" {
		t.Errorf("top beside two runs:\n%s", s)
	}

	// Each run's summary is its own.
	if err := runB.Wait(); err != nil {
		t.Fatalf("run B: %v\n%s", err, summaryB.String())
	}
	if err := runA.Wait(); err != nil {
		t.Fatalf("run A: %v\n%s", err, summaryA.String())
	}
	if a := summaryA.String(); !strings.Contains(a, "/alpha_topic") || strings.Contains(a, "/beta_topic") {
		t.Errorf("run A's summary:\n%s", a)
	}
	if b := summaryB.String(); !strings.Contains(b, "/beta_topic") || strings.Contains(b, "/alpha") {
		t.Errorf("run B's summary:\n%s", b)
	}

	// Past the exporter's retention, nothing of either run is left.
	var left []string
	for deadline := time.Now().Add(8 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		scrapeCounter(t, exportAddr, "ros2_pulse_processes") // a scrape is when the exporter cleans up
		left, _ = filepath.Glob(filepath.Join(machine, "*"))
		if len(left) == 0 {
			break
		}
	}
	if len(left) != 0 {
		t.Errorf("left behind past the retention: %v", left)
	}
}

// exitCode is a finished command's exit status (0 for success).
func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
