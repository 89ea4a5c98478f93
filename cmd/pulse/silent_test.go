package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/simtruth"
)

// pulse doctor says why each staged subscription of silent.graph hears
// nothing, with both sides' values and a fix, names the cross-vendor pair as
// a warning, counts the unmatched ones as problems, and its starved check
// does not repeat them (issue 25).
func TestDoctorSaysWhySilent(t *testing.T) {
	dir := t.TempDir()
	graphFile, _ := filepath.Abs("../../internal/integration/testdata/silent.graph")
	graph, segs := startGraph(t, dir, graphFile, "10")
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()
	if _, err := simtruth.WaitLearnt(segs, graphFile, 15*time.Second); err != nil { // every endpoint created
		t.Fatal(err)
	}
	doc := pulseCmd(t, "doctor")
	doc.Env = append(doc.Env, "ROS_PULSE_DIR="+segs)
	out, err := doc.Output()
	if exitCode(err) != 1 {
		t.Errorf("doctor with unmatched subscriptions: exit %d, want 1", exitCode(err))
	}
	for _, want := range []string{
		`FAIL /listener \(pid \d+\) on /chatter: qos_incompatible \(reliability: publisher best_effort, subscription reliable\); fix: make the subscription best_effort`,
		`its QoS: reliable volatile keep_last\(10\)`,
		`FAIL /listener \(pid \d+\) on /typed: type_mismatch \(publisher std_msgs/msg/String, subscription std_msgs/msg/Int32\)`,
		`FAIL /listener \(pid \d+\) on /robot1/cmd_vel: no_publisher \(published here: /cmd_vel\)`,
		`FAIL /far_listener \(pid \d+\) on /far: other_domain \(publisher on domain 0, subscription on domain 5\); fix: run both with the same ROS_DOMAIN_ID`,
		`FAIL /zen_listener \(pid \d+\) on /zen: other_rmw`,
		`FAIL /hermit \(pid \d+\) on /ok: discovery_range`,
		`FAIL /talker \(pid \d+\) publishes /chatter: qos_incompatible`,
		`WARN /cyclone_listener \(pid \d+\) on /ok: cross_vendor`,
		`ROS environment: ROS_DOMAIN_ID="5"`,
		`ROS environment: RMW_IMPLEMENTATION="rmw_zenoh_cpp"`,
		`ROS environment: ROS_AUTOMATIC_DISCOVERY_RANGE="OFF"`,
	} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("doctor does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "WARN /listener") || strings.Contains(string(out), "receives nothing of /chatter") {
		t.Errorf("doctor repeats an explained subscription as starved, or flags the healthy one:\n%s", out)
	}
	// pulse dump shows what each endpoint is.
	dump := pulseCmd(t, "dump")
	dump.Env = append(dump.Env, "ROS_PULSE_DIR="+segs)
	raw, err := dump.Output()
	if err != nil || !regexp.MustCompile(`"name":"/dl".*?"qos":\{"summary":"reliable volatile keep_last\(10\) deadline 200ms","type":"sim_msgs/msg/Sample","rmw":"rmw_fastrtps_cpp","domain":0\}`).Match(raw) ||
		!strings.Contains(string(raw), `"env":{"flags":1,"ROS_DOMAIN_ID":"5"}`) {
		t.Errorf("dump (%v) lacks the QoS of /dl or the far process's env:\n%s", err, raw)
	}
}

// pulse export names every unmatched endpoint of silent.graph with its reason
// (ros2_pulse_endpoint_unmatched) and labels every endpoint with its type,
// rmw, domain and actual QoS (ros2_pulse_endpoint_info); the healthy /ok
// listener is not unmatched.
func TestExportSaysWhySilent(t *testing.T) {
	dir := t.TempDir()
	graphFile, _ := filepath.Abs("../../internal/integration/testdata/silent.graph")
	graph, segs := startGraph(t, dir, graphFile, "10")
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()
	addr := startExport(t, segs)
	cases := []struct{ node, topic, side, reason string }{ // on Jazzy: the hermit's OFF range counts
		{"/listener", "/chatter", "recv", "qos_incompatible"},
		{"/talker", "/chatter", "pub", "qos_incompatible"},
		{"/listener", "/typed", "recv", "type_mismatch"},
		{"/listener", "/robot1/cmd_vel", "recv", "no_publisher"},
		{"/listener", "/latched", "recv", "qos_incompatible"},
		{"/listener", "/dl", "recv", "qos_incompatible"},
		{"/far_listener", "/far", "recv", "other_domain"},
		{"/zen_listener", "/zen", "recv", "other_rmw"},
		{"/hermit", "/ok", "recv", "discovery_range"},
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		missing := ""
		for _, c := range cases {
			if v, ok := scrapeCounter(t, addr, "ros2_pulse_endpoint_unmatched", `topic="`+c.topic+`"`, `node="`+c.node+`"`,
				`side="`+c.side+`"`, `reason="`+c.reason+`"`); !ok || v != 1 {
				missing += " " + c.node + " " + c.topic
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("unmatched series missing after 15 s:%s\n%s", missing, scrapeBody(t, addr))
		}
	}
	body := scrapeBody(t, addr)
	if regexp.MustCompile(`endpoint_unmatched\{node="/(listener|cyclone_listener)",[^}]*topic="/ok"`).MatchString(body) {
		t.Errorf("a healthy /ok listener is unmatched:\n%s", grepLines(body, "endpoint_unmatched"))
	}
	// Labels in client_golang's order: alphabetical.
	if !regexp.MustCompile(`ros2_pulse_endpoint_info\{deadline="200ms",depth="10",domain="0",durability="volatile",history="keep_last",lease="infinite",` +
		`liveliness="automatic",node="/talker",pid="\d+",reliability="reliable",rmw="rmw_fastrtps_cpp",side="pub",topic="/dl",type="sim_msgs/msg/Sample"\} 1`).MatchString(body) {
		t.Errorf("no endpoint_info for /talker's /dl publisher:\n%s", grepLines(body, "endpoint_info"))
	}
	if !regexp.MustCompile(`ros2_pulse_endpoint_info\{[^}]*domain="5"[^}]*node="/far_listener"`).MatchString(body) {
		t.Errorf("no endpoint_info with domain 5 for /far_listener:\n%s", grepLines(body, "endpoint_info"))
	}
}

func grepLines(body, substr string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A subscription whose topic nothing probed publishes, with a ROS process
// here that is not probed: doctor says the publisher may be in it
// (not_probed, a warning), naming the process by its __node remap.
func TestDoctorNamesUnprobedProcesses(t *testing.T) {
	dir := t.TempDir()
	graphFile := filepath.Join(dir, "lonely.graph")
	os.WriteFile(graphFile, []byte("process lonely\n  node /lonely_listener\n    sub /ghost_topic\n"), 0o600)
	// A shell whose command line reads as a ROS node's (argv[0] is ours to choose).
	ghost := &exec.Cmd{Path: "/bin/sh", Args: []string{"ghost_talker", "-c", "sleep 30; true", "ghost", "--ros-args", "-r", "__node:=ghost_talker"}}
	if err := ghost.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { ghost.Process.Kill(); ghost.Wait() }()
	graph, segs := startGraph(t, dir, graphFile, "10")
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()
	if _, err := simtruth.WaitLearnt(segs, graphFile, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	doc := pulseCmd(t, "doctor")
	doc.Env = append(doc.Env, "ROS_PULSE_DIR="+segs)
	out, _ := doc.Output()
	want := regexp.MustCompile(`WARN /lonely_listener \(pid \d+\) on /ghost_topic: not_probed \(nothing probed publishes it; not probed here: [^)]*/ghost_talker \(pid ` +
		strconv.Itoa(ghost.Process.Pid) + `\)`)
	if !want.Match(out) {
		t.Errorf("doctor does not point at the unprobed process:\n%s", out)
	}
}
