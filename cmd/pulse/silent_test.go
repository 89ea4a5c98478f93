package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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
	for deadline := time.Now().Add(15 * time.Second); len(segmentFiles(segs)) < 6; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("fewer than 6 segments in 15 s")
		}
	}
	time.Sleep(500 * time.Millisecond) // every endpoint created (they are, before the graph's start instant)
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
	} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("doctor does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "WARN /listener") || strings.Contains(string(out), "receives nothing of /chatter") {
		t.Errorf("doctor repeats an explained subscription as starved, or flags the healthy one:\n%s", out)
	}
}
