package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// tmuxPane drives a real terminal: a detached tmux server of our own.
type tmuxPane struct {
	t      *testing.T
	socket string
}

func (p *tmuxPane) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (p *tmuxPane) capture() string { return p.run("capture-pane", "-p", "-t", "top") }

func (p *tmuxPane) keys(k ...string) { p.run(append([]string{"send-keys", "-t", "top"}, k...)...) }

// waitFor polls the screen until cond holds; the deadline is an event bound,
// not a timing assertion.
func (p *tmuxPane) waitFor(what string, d time.Duration, cond func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(d)
	var screen string
	for time.Now().Before(deadline) {
		screen = p.capture()
		if cond(screen) {
			return screen
		}
		time.Sleep(150 * time.Millisecond)
	}
	p.t.Fatalf("waiting for %s; the screen is:\n%s", what, screen)
	return ""
}

// row returns the screen line of a table row that starts with name.
func row(screen, name string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " ›"), name+" ") {
			return l
		}
	}
	return ""
}

// pulse top in a real terminal against a running graph: a topic that stalls
// after a fault turns STALL with its silence, a killed process's node turns
// exited and is warned about, and the keys filter, focus, help and quit.
func TestTopInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed for the real-terminal test of pulse top (apt-get install tmux)")
	}
	pulse, _, _ := bin(t)
	dir := t.TempDir()
	graphPath, specPath := filepath.Join(dir, "g.graph"), filepath.Join(dir, "spec.yaml")
	os.WriteFile(graphPath, []byte(`process drivers
  node /lidar
    pub /scan 10 thread
  node /imu_driver
    pub /imu 50 thread stall=4:100
process doomed kill=6
  node /doomed
    pub /heartbeat 5 thread
process consumer
  node /consumer
    sub /scan
    sub /imu
    sub /heartbeat
`), 0o600)
	os.WriteFile(specPath, []byte("topics:\n  /imu: {min_hz: 45}\nnodes: [/doomed, /consumer]\n"), 0o600)
	graph, segs := startGraph(t, dir, graphPath, "20", "ROS_TOPIC_STATS_JITTER=1")
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()

	p := &tmuxPane{t: t, socket: fmt.Sprintf("pulse-test-%d", os.Getpid())}
	defer exec.Command("tmux", "-L", p.socket, "kill-server").Run()
	shell := fmt.Sprintf("ROS_PULSE_DIR=%s %s top --spec %s --period 500ms; echo PULSE-EXIT=$?; sleep 60", segs, pulse, specPath)
	p.run("new-session", "-d", "-s", "top", "-x", "100", "-y", "30", shell)

	s := p.waitFor("/imu flowing", 4*time.Second, func(s string) bool { return strings.HasSuffix(strings.TrimSpace(row(s, "/imu")), "ok") })
	if !strings.Contains(s, "pulse top — live 500ms") || row(s, "/consumer") == "" || !strings.Contains(row(s, "/doomed"), "alive") {
		t.Errorf("first screen:\n%s", s)
	}
	// The fault: /imu's driver wedges at 4 s. Its row turns STALL with a silence.
	s = p.waitFor("/imu stalled", 6*time.Second, func(s string) bool { return strings.HasSuffix(strings.TrimSpace(row(s, "/imu")), "STALL") })
	if !regexp.MustCompile(`\d+(ms|\.\ds)\s+\S*\s+STALL$`).MatchString(strings.TrimSpace(row(s, "/imu"))) {
		t.Errorf("no silence age on the stalled row: %q", row(s, "/imu"))
	}
	if !strings.Contains(s, "topic_rate") || !strings.Contains(s, "/imu recv 0.0 Hz, expected ≥ 45") {
		t.Errorf("no warning for the stalled topic:\n%s", s)
	}
	// The process of /doomed is killed at 6 s: its node turns exited, and is missing.
	s = p.waitFor("/doomed exited", 6*time.Second, func(s string) bool { return strings.Contains(row(s, "/doomed"), "exited") })
	s = p.waitFor("the node_missing warning", 2*time.Second, func(s string) bool { return strings.Contains(s, "/doomed missing") })

	// Filter: only the /imu rows remain; esc clears.
	p.keys("/", "imu", "Enter")
	s = p.waitFor("the filter", 2*time.Second, func(s string) bool { return strings.Contains(s, "filter: imu") })
	if row(s, "/imu") == "" || row(s, "/scan") != "" || row(s, "/imu_driver") == "" || row(s, "/consumer") != "" {
		t.Errorf("filtered screen:\n%s", s)
	}
	p.keys("Escape")
	p.waitFor("the filter cleared", 2*time.Second, func(s string) bool { return row(s, "/scan") != "" })
	// Focus a node: its endpoints per process.
	// The node cursor stayed on /imu_driver, the one row the filter left: up to /consumer.
	p.keys("Tab", "Up", "Enter")
	s = p.waitFor("the node focus", 2*time.Second, func(s string) bool { return strings.Contains(s, "its endpoints (esc: back)") })
	if !strings.Contains(s, "Node /consumer") || !strings.Contains(s, " sub  /imu") {
		t.Errorf("node focus:\n%s", s)
	}
	// Escape alone: a key right after it would read as Alt+key.
	p.keys("Escape")
	p.waitFor("the tables again", 2*time.Second, func(s string) bool { return strings.Contains(s, "Warnings (") })
	p.keys("?")
	p.waitFor("help", 2*time.Second, func(s string) bool { return strings.Contains(s, "Topic status: ok, WARN") })
	p.keys("?", "q")
	p.waitFor("exit 0", 3*time.Second, func(s string) bool { return strings.Contains(s, "PULSE-EXIT=0") })
}

// pulse demo on a terminal shows pulse top and still writes --record's
// file (it wrote nothing there before).
func TestDemoTopRecords(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed for the real-terminal test of pulse top (apt-get install tmux)")
	}
	pulse, _, _ := bin(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "demo.log")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("pulse-demo-%d", os.Getpid())}
	defer exec.Command("tmux", "-L", p.socket, "kill-server").Run()
	shell := fmt.Sprintf("ROS_PULSE_DIR=%s %s demo --duration 5s --period 1s --record %s; echo PULSE-EXIT=$?; sleep 60", dir, pulse, log)
	p.run("new-session", "-d", "-s", "top", "-x", "100", "-y", "30", shell)
	p.waitFor("pulse top of the demo", 10*time.Second, func(s string) bool { return strings.Contains(s, "/scan") })
	p.waitFor("the demo's end", 20*time.Second, func(s string) bool { return strings.Contains(s, "source ended") })
	p.keys("q")
	p.waitFor("exit 0", 5*time.Second, func(s string) bool { return strings.Contains(s, "PULSE-EXIT=0") })
	data, err := os.ReadFile(log)
	if err != nil || strings.Count(string(data), "# ts_ns=") < 3 || !strings.Contains(string(data), "TOPIC /scan ") {
		t.Fatalf("--record under pulse top wrote %d bytes (%v):\n%s", len(data), err, data)
	}
}

// A process whose segment is full is said in every window of every view:
// record's FULL line, top's warning, export's counter (with its alert rule,
// promtool-tested in deploy/prometheus).
func TestFullSegmentSaidEverywhere(t *testing.T) {
	pulse, _, _ := bin(t)
	dir := t.TempDir()
	graph, segs := startGraph(t, dir, "demo", "12", "ROS_PULSE_MAX_ENDPOINTS=16")
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()
	view := func(args ...string) *exec.Cmd {
		c := pulseCmd(t, args...)
		c.Env = append(c.Env, "ROS_PULSE_DIR="+segs)
		return c
	}
	time.Sleep(300 * time.Millisecond)
	out, err := view("record", "--period", "1s", "--duration", "3.2s").Output()
	if err != nil {
		t.Fatal(err)
	}
	windows := strings.Count(string(out), "# ts_ns=")
	full := regexp.MustCompile(`(?m)^FULL pid=(\d+) dropped_endpoints=(\d+)$`).FindAllStringSubmatch(string(out), -1)
	if windows < 3 || len(full) < windows {
		t.Fatalf("%d windows, FULL lines %v:\n%s", windows, full, out)
	}
	pid := full[0][1]

	addr := freePort(t)
	exp := view("export", "--listen", addr)
	if err := exp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { exp.Process.Signal(os.Interrupt); exp.Wait() }()
	var dropped float64
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && dropped == 0; time.Sleep(200 * time.Millisecond) {
		dropped, _ = scrapeCounter(t, addr, "ros2_pulse_dropped_endpoints_total", `pid="`+pid+`"`)
	}
	if dropped <= 0 {
		t.Errorf("export: ros2_pulse_dropped_endpoints_total{pid=%q} = %v", pid, dropped)
	}

	p := &tmuxPane{t: t, socket: fmt.Sprintf("pulse-full-%d", os.Getpid())}
	defer exec.Command("tmux", "-L", p.socket, "kill-server").Run()
	p.run("new-session", "-d", "-s", "top", "-x", "120", "-y", "40",
		fmt.Sprintf("ROS_PULSE_DIR=%s %s top --period 500ms; sleep 60", segs, pulse))
	p.waitFor("the full segment in the warnings", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "segment_full") && strings.Contains(s, "pid "+pid+" (") && strings.Contains(s, "endpoints did not fit")
	})
}
