package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// pulse export serves latency links and paths (issue 47): each link's age
// and own-share histograms from the probe's buckets, each path's last
// judged window as a summary, a named path's bound and its spec rule, for
// the chain graph run with links on.
func TestExportPaths(t *testing.T) {
	_, sim, _ := bin(t)
	dir := t.TempDir()
	segs := filepath.Join(dir, "segs")
	spec := filepath.Join(dir, "spec.yaml")
	os.WriteFile(spec, []byte("paths:\n  lidar_to_cmd: {via: [/sensing/points, /perception/filtered, /perception/objects, /planning/trajectory, /control/cmd_vel], max_ms: 5}\n"), 0o600)
	addr := freePort(t)
	exp := pulseCmd(t, "export", "--listen", addr, "--spec", spec, "--period", "1s")
	exp.Env = append(exp.Env, "ROS_PULSE_DIR="+segs)
	if err := exp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { exp.Process.Signal(os.Interrupt); exp.Wait() }()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			resp.Body.Close()
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("pulse export does not serve: %v", err)
		}
	}
	run := pulseCmd(t, "run", "--links", "--no-summary", "--", sim, "--graph", "chain", "--duration", "8")
	run.Env = append(run.Env, "ROS_PULSE_DIR="+segs)
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Wait()
	wants := []*regexp.Regexp{
		regexp.MustCompile(`ros2_pulse_link_age_seconds_count\{from="/perception/objects",node="/planning/planner",pid="\d+",to="/planning/trajectory"\} ([1-9]\d*)`),
		regexp.MustCompile(`ros2_pulse_link_own_seconds_bucket\{from="/sensing/points",node="/perception/filter",pid="\d+",to="/perception/filtered",le="\+Inf"\} ([1-9]\d*)`),
		regexp.MustCompile(`ros2_pulse_path_latency_seconds\{named="true",path="lidar_to_cmd",quantile="0.99"\} ([0-9.e-]+)`),
		regexp.MustCompile(`ros2_pulse_path_latency_seconds\{named="false",path="/sensing/points -> /control/cmd_vel",quantile="0.5"\} ([0-9.e-]+)`),
		regexp.MustCompile(`ros2_pulse_path_bound_seconds\{path="lidar_to_cmd"\} (0.005)`),
		regexp.MustCompile(`ros2_pulse_spec_rule_ok\{kind="path",node="",side="",timer="",topic="lidar_to_cmd",transport=""\} (0)`),
	}
	var body string
	missing := wants
	for deadline := time.Now().Add(7 * time.Second); time.Now().Before(deadline) && len(missing) > 0; time.Sleep(250 * time.Millisecond) {
		body = scrapeBody(t, addr)
		missing = missing[:0:0]
		for _, re := range wants {
			m := re.FindStringSubmatch(body)
			if m == nil {
				missing = append(missing, re)
				continue
			}
			if _, err := strconv.ParseFloat(m[1], 64); err != nil {
				missing = append(missing, re)
			}
		}
	}
	for _, re := range missing {
		t.Errorf("no series matches %s", re)
	}
	if len(missing) > 0 {
		t.Logf("scrape:\n%s\n%s\n%s", grepLines(body, "_link_"), grepLines(body, "path"), grepLines(body, "processes"))
	}
	// the path's p99 is the chain's work (2 + 3 + 4 + 1 ms and the hops): 10 to 20 ms
	if m := wants[2].FindStringSubmatch(body); m != nil {
		if v, _ := strconv.ParseFloat(m[1], 64); v < 0.010 || v > 0.020 {
			t.Errorf("path p99 %.4f s, want the chain's 10-20 ms", v)
		}
	}
}

// pulse dump prints each process's latency links with their cumulative
// counts (ABI 1.9), by topic and node: the relays of the chain graph.
func TestDumpLinks(t *testing.T) {
	graphCmd, segs := startGraph(t, t.TempDir(), "chain", "3", "ROS_PULSE_LINKS=1")
	defer func() { graphCmd.Process.Signal(os.Interrupt); graphCmd.Wait() }()
	want := `"node":"/planning/planner","from":"/perception/objects","to":"/planning/trajectory","count":`
	var out []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		dump := pulseCmd(t, "dump")
		dump.Env = append(dump.Env, "ROS_PULSE_DIR="+segs)
		var err error
		if out, err = dump.Output(); err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile(regexp.QuoteMeta(want) + `[1-9]`).Match(out) {
			return
		}
	}
	t.Errorf("pulse dump has no counted link %s…:\n%s", want, out)
}
