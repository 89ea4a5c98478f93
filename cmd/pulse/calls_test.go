package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/simtruth"
)

// pulse export carries issue 26's service families for calls.graph: while
// the graph runs, the client of a service nobody serves is said to have no
// server (and its calls stay open), the others have theirs; once the graph
// has exited, every server's and client's requests and responses equal the
// graph's own counts, so do a server's responses refused because their
// client had gone (/leaving's), and each answered call is in the response
// histogram.
func TestExportServiceCalls(t *testing.T) {
	dir := t.TempDir()
	graphFile, _ := filepath.Abs("../../internal/integration/testdata/calls.graph")
	graph, segs := startGraph(t, dir, graphFile, "3")
	done := make(chan error, 1)
	go func() { done <- graph.Wait() }()
	defer func() { graph.Process.Signal(os.Interrupt); <-done }()
	addr := startExport(t, segs)
	// and one judging service rules every 500 ms
	specFile := filepath.Join(dir, "spec.yaml")
	os.WriteFile(specFile, []byte("services:\n  /nobody: {min_hz: 1}\n  /fast: {min_hz: 5, max_response_ms: 100}\n"), 0o600)
	judged := freePort(t)
	exp := pulseCmd(t, "export", "--listen", judged, "--spec", specFile, "--period", "500ms")
	exp.Env = append(exp.Env, "ROS_PULSE_DIR="+segs)
	if err := exp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { exp.Process.Signal(os.Interrupt); exp.Wait() }()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		nobody, ok1 := scrapeCounter(t, judged, "ros2_pulse_spec_rule_ok", `kind="service"`, `topic="/nobody"`, `side="server"`)
		fast, ok2 := scrapeCounter(t, judged, "ros2_pulse_spec_rule_ok", `kind="service"`, `topic="/fast"`, `side="server"`)
		if ok1 && ok2 {
			if nobody != 0 || fast != 1 {
				t.Errorf("spec_rule_ok: /nobody %v (no server: want 0), /fast %v (want 1)", nobody, fast)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no service rule verdicts in 15 s")
		}
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		lonely, ok1 := scrapeCounter(t, addr, "ros2_pulse_service_server_missing", `node="/lonely_caller"`)
		fast, ok2 := scrapeCounter(t, addr, "ros2_pulse_service_server_missing", `node="/fast_caller"`)
		open, ok3 := scrapeCounter(t, addr, "ros2_pulse_service_outstanding", `node="/lonely_caller"`)
		if ok1 && ok2 && ok3 && open > 0 {
			body := scrapeBody(t, addr)
			if lonely != 1 || fast != 0 {
				t.Errorf("server missing: /lonely_caller %v, /fast_caller %v; want 1 and 0", lonely, fast)
			}
			if strings.Contains(body, `service="/fast_server/get_parameters"`) {
				t.Errorf("a parameter service nobody called has series")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no service series with an open call of /lonely_caller in 15 s (%v %v %v %v)", ok1, ok2, ok3, open)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	done <- nil
	truth, err := simtruth.Read(filepath.Join(dir, "truth"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, k := range truth.Keys() {
		side := map[string]string{"service": "server", "client": "client"}[k.Kind]
		if side == "" {
			continue
		}
		checked++
		c := truth.Get(k)
		match := []string{`service="` + k.Topic + `"`, `node="` + k.Node + `"`, `side="` + side + `"`}
		req, _ := scrapeCounter(t, addr, "ros2_pulse_service_requests_total", match...)
		resp, _ := scrapeCounter(t, addr, "ros2_pulse_service_responses_total", match...)
		timed, _ := scrapeCounter(t, addr, "ros2_pulse_service_response_seconds_count", match...)
		if uint64(req) != c[simtruth.Fires] || uint64(resp) != c[simtruth.Answered] || timed != resp {
			t.Errorf("%s: requests %v responses %v timed %v, the graph %d and %d", k, req, resp, timed, c[simtruth.Fires], c[simtruth.Answered])
		}
		// a server's responses refused (its client gone: /leaving's), a series of servers only
		failed, ok := scrapeCounter(t, addr, "ros2_pulse_service_send_failed_total", match...)
		if ok != (side == "server") || uint64(failed) != c[simtruth.SendFailed] || k.Topic == "/leaving" && side == "server" && failed == 0 {
			t.Errorf("%s: send_failed_total %v (series: %v), the graph refused %d", k, failed, ok, c[simtruth.SendFailed])
		}
	}
	if checked != 19 {
		t.Errorf("%d services and clients in the truth, want 19", checked)
	}
}

// A bad service or action rule is one clear line and exit 2, live and offline.
func TestServiceSpecBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ spec, want string }{
		{"services:\n  /add: {min_hz: 1, timeout_ms: 5}\n", `unknown key "timeout_ms"`},
		{"services:\n  /add: {max_response_ms: -5}\n", "max_response_ms must be a finite number >= 0"},
		{"topics:\n  /scan: {min_hz: 5}\nservices:\n  /scan: {max_outstanding: 1}\n", "/scan is a topic (its rule is on line 2), not a service"},
		{"actions:\n  /nav: {max_accept_ms: -1}\n", "max_accept_ms must be a finite number >= 0"},
	} {
		spec := filepath.Join(dir, "spec.yaml")
		os.WriteFile(spec, []byte(c.spec), 0o600)
		for _, args := range [][]string{{"check", "--spec", spec, "--live"}, {"run", "--spec", spec, "--", "true"}} {
			cmd := pulseCmd(t, args...)
			var errOut strings.Builder
			cmd.Stderr = &errOut
			code := exitCode(cmd.Run())
			if code != 2 || !strings.Contains(errOut.String(), c.want) || strings.Count(strings.TrimSpace(errOut.String()), "\n") != 0 {
				t.Errorf("%v with %q: exit %d, stderr %q; want 2 and one line with %q", args, c.spec, code, errOut.String(), c.want)
			}
		}
	}
}

// pulse doctor says plainly which client calls a service nothing here
// serves, and does not name the clients whose servers are here.
func TestDoctorSaysClientHasNoServer(t *testing.T) {
	dir := t.TempDir()
	graphFile, _ := filepath.Abs("../../internal/integration/testdata/calls.graph")
	graph, segs := startGraph(t, dir, graphFile, "10")
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()
	want := regexp.MustCompile(`WARN /lonely_caller \(pid \d+\) calls /nobody, which no process on this machine serves: .*; \d+ calls open, the oldest for \d+\.\d s; fix: start its server`)
	var out []byte
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		doc := pulseCmd(t, "doctor")
		doc.Env = append(doc.Env, "ROS_PULSE_DIR="+segs)
		out, _ = doc.Output()
		if want.Match(out) {
			break
		}
	}
	if !want.Match(out) {
		t.Fatalf("doctor does not name /lonely_caller's missing server:\n%s", out)
	}
	for _, healthy := range []string{"/fast_caller", "/slow_caller calls", "/bt "} {
		if strings.Contains(string(out), "WARN "+healthy) {
			t.Errorf("doctor names %s, whose server is here:\n%s", healthy, out)
		}
	}
}
