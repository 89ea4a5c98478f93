package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needBridge returns pulse, failing the test when pulse-bridge (the DDS part) was not built.
func needBridge(t *testing.T) string {
	t.Helper()
	pulse, _, _ := bin(t)
	if _, err := os.Stat(filepath.Join(filepath.Dir(pulse), "pulse-bridge")); err != nil {
		t.Fatal("pulse-bridge is not built: apt-get install cyclonedds-dev cyclonedds-tools, then make bridge")
	}
	return pulse
}

// loopbackDDS writes a CycloneDDS configuration that keeps discovery on
// loopback: no multicast (lo has none here), the unicast peer 127.0.0.1.
func loopbackDDS(t *testing.T, dir string) string {
	path := filepath.Join(dir, "cyclonedds.xml")
	os.WriteFile(path, []byte(`<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface address="127.0.0.1"/></Interfaces>`+
		`<AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex>`+
		`<MaxAutoParticipantIndex>64</MaxAutoParticipantIndex><Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>`), 0o600)
	return "file://" + path
}

type subMsg struct {
	Topic  string
	Source string
	Metric string
	Unit   string
	Start  [2]int64
	Stop   [2]int64
	Points [][2]*float64
	Raw    string
	Status []struct {
		Level   int
		Name    string
		Message string
		Values  map[string]string
	}
}

// subscribe runs the real CycloneDDS subscriber for d and decodes its lines.
func subscribe(t *testing.T, env []string, d time.Duration, raw bool) []subMsg {
	t.Helper()
	args := []string{fmt.Sprint(d.Seconds())}
	if raw {
		args = append(args, "--raw")
	}
	return runSubscriber(t, env, testBin(t, "dds_sub"), args...)
}

// testBin is the path of a test program that make builds beside simgraph.
func testBin(t *testing.T, name string) string {
	_, sim, _ := bin(t)
	return filepath.Join(filepath.Dir(sim), name)
}

// runSubscriber runs a test subscriber (dds_sub, fastdds_sub; or a command
// that runs one) and decodes its JSON lines.
func runSubscriber(t *testing.T, env []string, name string, args ...string) []subMsg {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	return runLines[subMsg](t, cmd)
}

// runLines runs a test program and decodes each line it prints as JSON.
func runLines[T any](t *testing.T, cmd *exec.Cmd) []T {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s (make bridge builds it): %v\n%s", filepath.Base(cmd.Args[0]), err, stderr.String())
	}
	var msgs []T
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m T
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s line %q: %v", filepath.Base(cmd.Args[0]), sc.Text(), err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// startBridge starts `pulse bridge ARGS` in env (under the command prefix
// wrap, when given), stopped with SIGINT when the test ends, and returns
// its stderr.
func startBridge(t *testing.T, wrap, env []string, args ...string) *bytes.Buffer {
	t.Helper()
	pulse := needBridge(t)
	cmd := append(append(append([]string(nil), wrap...), pulse, "bridge"), args...)
	br := exec.Command(cmd[0], cmd[1:]...)
	br.Env = env
	var stderr bytes.Buffer
	br.Stderr = &stderr
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { br.Process.Signal(os.Interrupt); br.Wait() })
	return &stderr
}

func level(msgs []subMsg, name string) []int {
	var out []int
	for _, m := range msgs {
		for _, s := range m.Status {
			if s.Name == name {
				out = append(out, s.Level)
			}
		}
	}
	return out
}

// pulse bridge publishes to a real CycloneDDS subscriber over loopback: the
// rates match the demo graph within 2 %, a stall raises /scan's diagnostics
// level, the bridge outlives its subscriber going away and coming back, and a
// bad ROS_DOMAIN_ID is one clear error.
func TestBridgeOverRealDDS(t *testing.T) {
	pulse := needBridge(t)
	dir := t.TempDir()
	domain := testDomain(t)
	ddsEnv := append(os.Environ(), "CYCLONEDDS_URI="+loopbackDDS(t, dir), fmt.Sprintf("ROS_DOMAIN_ID=%d", domain))

	demo, err := os.ReadFile("../../sim/graphs/demo.graph")
	if err != nil {
		t.Fatal(err)
	}
	graphPath := filepath.Join(dir, "g.graph")
	os.WriteFile(graphPath, []byte(strings.Replace(string(demo), "pub /scan 10 thread size=8000", "pub /scan 10 thread size=8000 stall=8:100", 1)), 0o600)
	specPath := filepath.Join(dir, "spec.yaml")
	os.WriteFile(specPath, []byte("topics:\n  /scan: {min_hz: 9, max_hz: 11}\nnodes: [/controller]\n"), 0o600)
	graph, segs := startGraph(t, dir, graphPath, "30")
	truth := sampleTruth(t, dir)
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()

	br := exec.Command(pulse, "bridge", "--spec", specPath, "--period", "1s")
	br.Env = append(ddsEnv, "ROS_PULSE_DIR="+segs)
	var brErr bytes.Buffer
	br.Stderr = &brErr
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- br.Wait() }()
	defer func() { br.Process.Signal(os.Interrupt); <-exited }()

	// First subscriber: the healthy robot.
	first := subscribe(t, ddsEnv, 6*time.Second, false)
	// every 1 s window received, to the message, against what the graph did in it
	for _, p := range truth.judgeStatistics(first, []string{"/scan", "/camera/image", "/camera/detections", "/cmd_vel", "/tf", "/odom"}, 3) {
		t.Error(p)
	}
	if lv := level(first, "/scan"); len(lv) == 0 || lv[len(lv)-1] != 0 {
		t.Errorf("/scan diagnostics levels before the fault: %v", lv)
	}
	if lv := level(first, "/controller"); len(lv) == 0 || lv[len(lv)-1] != 0 {
		t.Errorf("/controller diagnostics levels: %v", lv)
	}

	// The subscriber goes away for a while and comes back; /scan stalls at 8 s.
	time.Sleep(2 * time.Second)
	second := subscribe(t, ddsEnv, 6*time.Second, false)
	if len(second) == 0 {
		t.Fatalf("nothing received after the subscriber came back; bridge stderr:\n%s", brErr.String())
	}
	lv := level(second, "/scan")
	if len(lv) == 0 || lv[len(lv)-1] != 2 {
		t.Errorf("/scan diagnostics levels after its stall: %v, want ERROR (2) at the end", lv)
	}
	select {
	case err := <-exited:
		t.Fatalf("the bridge exited: %v\n%s", err, brErr.String())
	default:
	}

	// A bad ROS_DOMAIN_ID is one clear error.
	bad := exec.Command(pulse, "bridge")
	bad.Env = append(os.Environ(), "ROS_DOMAIN_ID=twelve")
	out, err := bad.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `ROS_DOMAIN_ID="twelve": must be a whole number from 0 to 232`) {
		t.Errorf("bad ROS_DOMAIN_ID: %v\n%s", err, out)
	}
}

// The CDR bytes of one message of each type, as CycloneDDS puts them on the
// wire, equal the hand-checked encodings in bridge/testdata.
func TestBridgeGoldenCDR(t *testing.T) {
	pulse, _, _ := bin(t)
	dir := t.TempDir()
	env := append(os.Environ(), "CYCLONEDDS_URI="+loopbackDDS(t, dir), fmt.Sprintf("ROS_DOMAIN_ID=%d", testDomain(t)))
	br := exec.Command(pulse, "bridge", "--golden", "--for", "5s")
	br.Env = env
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { br.Process.Signal(os.Interrupt); br.Wait() }()
	got := map[string]string{}
	for _, m := range subscribe(t, env, 3*time.Second, true) {
		got[m.Topic] = m.Raw
	}
	for topic, file := range map[string]string{"statistics": "metrics.cdr.txt", "diagnostics": "diagnostics.cdr.txt"} {
		if want := goldenHex(t, file); got[topic] != want {
			t.Errorf("%s on the wire:\n got %s\nwant %s", topic, got[topic], want)
		}
	}
}
