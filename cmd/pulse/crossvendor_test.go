package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// crossVendorGraph: a Cyclone DDS subscription whose only publisher here is
// a Fast DDS node, and that hears nothing ("deaf", as Cyclone DDS from Fast
// DDS did on real Humble); one of /mixed, whose publishers here are one Fast
// DDS and one Cyclone DDS node, deaf too; and a Cyclone DDS subscription of
// /chatter that stops after its first message (the stand-in has no
// subscription that goes deaf: its 8 s callback holds it, as real Humble's
// stopped after 10 messages).
const crossVendorGraph = `process fastdds env=RMW_IMPLEMENTATION=rmw_fastrtps_cpp
  node /talker
    pub /chatter 20 thread
    pub /mixed 20 thread
process cyclone_talker env=RMW_IMPLEMENTATION=rmw_cyclonedds_cpp
  node /cyclone_talker
    pub /mixed 20 thread
process cyclone env=RMW_IMPLEMENTATION=rmw_cyclonedds_cpp
  node /listener
    sub /chatter deaf
    sub /mixed deaf
process stopped env=RMW_IMPLEMENTATION=rmw_cyclonedds_cpp
  node /stopped
    sub /chatter cost=8000
`

// A starving subscription whose only publishers here run another DDS
// vendor's RMW, one that never received or one that stopped, has the
// cross-vendor pair as its likely cause, with the fix, in pulse doctor, pulse
// check, pulse graph and pulse export; where a publisher shares its vendor
// the cause stays not visible (issue 44, defect 3).
func TestStarvedCrossVendorSaid(t *testing.T) {
	dir := t.TempDir()
	graphFile := filepath.Join(dir, "cross.graph")
	os.WriteFile(graphFile, []byte(crossVendorGraph), 0o600)
	graph, segs := startGraph(t, dir, graphFile, "14")
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()
	addr := startExport(t, segs)
	spec := filepath.Join(dir, "spec.yaml")
	os.WriteFile(spec, []byte("nodes: [/talker]\n"), 0o600)
	check := pulseCmd(t, "check", "--live", "--spec", spec, "--period", "500ms", "--for", "4s")
	check.Env = append(check.Env, "ROS_PULSE_DIR="+segs)
	var checkOut strings.Builder
	check.Stdout = &checkOut
	if err := check.Start(); err != nil {
		t.Fatal(err)
	}

	// pulse export: the cause as endpoint_unmatched's reason, beside the starved gauge.
	const listener = `node="/listener"`
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		starved, _ := scrapeCounter(t, addr, "ros2_pulse_subscription_starved", listener, `topic="/chatter"`)
		mixed, _ := scrapeCounter(t, addr, "ros2_pulse_subscription_starved", listener, `topic="/mixed"`)
		if starved == 1 && mixed == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: /chatter starved %v, /mixed starved %v (want 1 each)", starved, mixed)
		}
	}
	if cause, _ := scrapeCounter(t, addr, "ros2_pulse_endpoint_unmatched", listener, `topic="/chatter"`, `side="recv"`, `reason="cross_vendor"`); cause != 1 {
		t.Errorf("/chatter is starved, and endpoint_unmatched{reason=\"cross_vendor\"} is %v, want 1", cause)
	}
	if v, ok := scrapeCounter(t, addr, "ros2_pulse_endpoint_unmatched", listener, `topic="/mixed"`); ok {
		t.Errorf("/mixed has a publisher on its own vendor, yet endpoint_unmatched says %v", v)
	}

	doc := pulseCmd(t, "doctor")
	doc.Env = append(doc.Env, "ROS_PULSE_DIR="+segs)
	out, err := doc.Output()
	if exitCode(err) != 1 {
		t.Errorf("doctor with starved subscriptions: exit %d, want 1", exitCode(err))
	}
	for _, want := range []string{
		`WARN /listener \(pid \d+\) on /chatter: receives nothing of [\d.]+ Hz published here; the likely cause: ` +
			`cross_vendor \(publisher on rmw_fastrtps_cpp, subscription on rmw_cyclonedds_cpp\); ` +
			`fix: run both sides with one RMW_IMPLEMENTATION \(ROS 2 does not guarantee communication between different DDS vendors\)`,
		`WARN /listener \(pid \d+\) on /mixed: receives nothing of [\d.]+ Hz published here; the cause is not visible yet`,
		`WARN /stopped \(pid \d+\) on /chatter: received 1, then nothing of [\d.]+ Hz published here; the likely cause: ` +
			`cross_vendor \(publisher on rmw_fastrtps_cpp, subscription on rmw_cyclonedds_cpp\); fix: run both sides with one RMW_IMPLEMENTATION`,
	} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("doctor does not say %q:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`on /chatter: receives nothing[^\n]*not visible`).Match(out) {
		t.Errorf("doctor says the cause of /chatter is not visible:\n%s", out)
	}

	// pulse graph: the starved edge names its likely cause.
	gr := pulseCmd(t, "graph", "--period", "500ms")
	gr.Env = append(gr.Env, "ROS_PULSE_DIR="+segs)
	dot, err := gr.Output()
	if err != nil || !strings.Contains(string(dot), `label="starved: cross_vendor: publisher on rmw_fastrtps_cpp, subscription on rmw_cyclonedds_cpp", style=bold, color=red`) ||
		!strings.Contains(string(dot), `label="starved: receives nothing", style=bold, color=red`) {
		t.Errorf("graph (%v): want /chatter's starved edge with its cause and /mixed's without:\n%s", err, dot)
	}

	// pulse check: the recv_starved verdict carries the cause (cause=), /mixed's none.
	if err := check.Wait(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	lines := checkOut.String()
	if !regexp.MustCompile(`ALERT recv_starved topic=/chatter side=recv transport=any node=/listener pid=\d+ received=0 pub_hz=[\d.]+ `+
		`cause=cross_vendor\\x20\(publisher\\x20on\\x20rmw_fastrtps_cpp,\\x20subscription\\x20on\\x20rmw_cyclonedds_cpp\) for_s=`).MatchString(lines) ||
		!regexp.MustCompile(`ALERT recv_starved topic=/mixed side=recv transport=any node=/listener pid=\d+ received=0 pub_hz=[\d.]+ for_s=`).MatchString(lines) {
		t.Errorf("check --live: want /chatter's recv_starved with its cross_vendor cause, /mixed's without:\n%s", lines)
	}
}
