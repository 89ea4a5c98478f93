package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"ros2_pulse/internal/segment"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests drive the built binary, as a user would. `make build` first.
func bin(t testing.TB) (pulse, simgraph, simlib string) {
	t.Helper()
	b := os.Getenv("PULSE_BUILD")
	if b == "" {
		b, _ = filepath.Abs("../../build")
	}
	pulse, simgraph, simlib = filepath.Join(b, "bin/pulse"), filepath.Join(b, "bin/simgraph"), filepath.Join(b, "lib/sim/jazzy")
	if _, err := os.Stat(pulse); err != nil {
		t.Fatalf("run `make build` first: %v", err)
	}
	return
}

// pulseCmd runs pulse with a machine-wide segment directory of the test's
// own (runs and demos put their processes there); a later ROS_PULSE_DIR in
// cmd.Env wins.
func pulseCmd(t testing.TB, args ...string) *exec.Cmd {
	p, _, lib := bin(t)
	cmd := exec.Command(p, args...)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib, "ROS_TOPIC_STATS_QUIET=1", "ROS_PULSE_DIR="+t.TempDir())
	return cmd
}

func TestRunRecordsAndSummarises(t *testing.T) {
	_, sim, _ := bin(t)
	log := filepath.Join(t.TempDir(), "run.jsonl")
	cmd := pulseCmd(t, "run", "--period", "1s", "--format", "jsonl", "--record", log, "--", sim, "--duration", "3")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) < 3 {
		t.Fatalf("%d windows", len(lines))
	}
	var w struct {
		Topics []struct {
			Topic      string  `json:"topic"`
			PubInterHz float64 `json:"pub_inter_hz"`
		} `json:"topics"`
		Procs []struct {
			State string `json:"state"`
		} `json:"procs"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &w); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tp := range w.Topics {
		if tp.Topic == "/tf" && tp.PubInterHz > 48 && tp.PubInterHz < 52 {
			found = true
		}
	}
	if !found || len(w.Procs) != 4 || w.Procs[0].State != "alive" {
		t.Errorf("second window: %s", lines[1])
	}
	summary := stderr.String()
	if !strings.Contains(summary, "pulse summary") || !strings.Contains(summary, "/scan") {
		t.Errorf("summary missing:\n%s", summary)
	}
}

// pulse run --bytes: the run's processes measure bytes (found without
// LD_LIBRARY_PATH: the probe looks beside the loaded rosidl), the record has
// BYTES lines, and the summary a bandwidth table, the demo robot's
// variable-size messages marked sampled.
func TestRunBytes(t *testing.T) {
	_, sim, _ := bin(t)
	log := filepath.Join(t.TempDir(), "run.log")
	cmd := pulseCmd(t, "run", "--bytes", "--period", "1s", "--record", log, "--", sim, "--duration", "3")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^BYTES /scan pub how=sampled per_s=[1-9]`).Match(data) {
		t.Errorf("no sampled bytes for /scan in the record:\n%s", data)
	}
	summary := stderr.String()
	if !strings.Contains(summary, "bandwidth") || !regexp.MustCompile(`(?m)^/scan +~[0-9.]+ kB`).MatchString(summary) {
		t.Errorf("no bandwidth table with /scan:\n%s", summary)
	}
}

func TestRunExitStatus(t *testing.T) {
	for _, c := range []struct {
		script string
		code   int
	}{{"exit 0", 0}, {"exit 7", 7}, {"kill -TERM $$", 128 + 15}} {
		cmd := pulseCmd(t, "run", "--no-summary", "--", "sh", "-c", c.script)
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != c.code {
			t.Errorf("%q: exit %d (%v), want %d", c.script, code, err, c.code)
		}
	}
	cmd := pulseCmd(t, "run", "--", "/nonexistent/command")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run()
	if cmd.ProcessState.ExitCode() != 127 || !strings.Contains(stderr.String(), "cannot start") {
		t.Errorf("missing command: exit %d, %s", cmd.ProcessState.ExitCode(), stderr.String())
	}
}

// SIGINT to pulse reaches the command (once), which shuts down cleanly.
func TestRunForwardsSigint(t *testing.T) {
	_, sim, _ := bin(t)
	cmd := pulseCmd(t, "run", "--period", "500ms", "--", sim)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the command did not stop on SIGINT")
	}
	if !strings.Contains(stderr.String(), "/camera/image") {
		t.Errorf("no summary after SIGINT:\n%s", stderr.String())
	}
}

// Windows rotate at ROS_TOPIC_STATS_MAX_BYTES; an unwritable log does not stop the run.
func TestRunRotationAndUnwritableLog(t *testing.T) {
	_, sim, _ := bin(t)
	log := filepath.Join(t.TempDir(), "run.log")
	cmd := pulseCmd(t, "run", "--period", "200ms", "--record", log, "--no-summary", "--", sim, "--duration", "1.5")
	cmd.Env = append(cmd.Env, "ROS_TOPIC_STATS_MAX_BYTES=1500")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	for _, p := range []string{log, log + ".1"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !strings.HasPrefix(string(b), "# ts_ns=") || !strings.HasSuffix(string(b), "\n\n") {
			t.Errorf("%s is not whole windows", p)
		}
	}
	cmd = pulseCmd(t, "run", "--period", "200ms", "--record", "/nonexistent/dir/run.log", "--no-summary", "--", sim, "--duration", "0.5")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Count(string(out), "cannot write window") != 1 {
		t.Errorf("unwritable log: %v\n%s", err, out)
	}
}

func TestEnvFormats(t *testing.T) {
	for format, want := range map[string]string{
		"shell":   "export LD_PRELOAD=",
		"envfile": "\nROS_PULSE_DIR=/",
		"systemd": "Environment=\"LD_PRELOAD=",
	} {
		out, err := pulseCmd(t, "env", "--format", format).Output()
		if err != nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), "libros2_pulse.so") {
			t.Errorf("%s: %v\n%s", format, err, out)
		}
	}
	// The shell form really preloads the probe into a shell that evaluates it.
	out, err := exec.Command("sh", "-c", `eval "$(`+strings.Join(pulseCmd(t, "env").Args, " ")+`)"; echo "$LD_PRELOAD"`).Output()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "libros2_pulse.so") {
		t.Errorf("eval: %v %q", err, out)
	}
	if err := pulseCmd(t, "env", "--format", "xml").Run(); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestDoctor(t *testing.T) {
	_, _, lib := bin(t)
	out, err := pulseCmd(t, "doctor", "--tracetools", filepath.Join(lib, "libtracetools.so"), "--dir", t.TempDir()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "loads as a preload") || !strings.Contains(string(out), "iron/jazzy") {
		t.Errorf("%v\n%s", err, out)
	}
	// Humble's libtracetools has no enabled_/do_ functions (Iron-and-later
	// names): a correct Humble machine passes (issue 44).
	humble := filepath.Join(lib, "..", "humble", "libtracetools.so")
	out, err = pulseCmd(t, "doctor", "--tracetools", humble, "--dir", t.TempDir()).CombinedOutput()
	if err != nil || strings.Contains(string(out), "FAIL") || !strings.Contains(string(out), "29 ros_trace_* functions, humble") {
		t.Errorf("doctor on Humble's tracetools: %v\n%s", err, out)
	}
	libc, _ := filepath.Glob("/lib/*-linux-gnu/libc.so.6")
	if len(libc) == 0 {
		t.Fatal("no libc to inspect")
	}
	notTracetools := libc[0]
	out, err = pulseCmd(t, "doctor", "--tracetools", notTracetools, "--dir", t.TempDir()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "FAIL") {
		t.Errorf("a library without tracepoints passed:\n%s", out)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"record", "--period", "0"}, {"record", "--format", "xml"}, {"demo", "--distro", "rolling"}, {"run"},
		{"record", "--detail", "bogus", "--out", "x.zst"}, {"record", "--detail", "10ms"}} {
		cmd := pulseCmd(t, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err == nil || stderr.Len() == 0 || strings.Count(stderr.String(), "\n") > 3 {
			t.Errorf("%v: err=%v stderr=%q", args, err, stderr.String())
		}
	}
}

// A spec with a gap rule switches gap tracking on for the run, and a wedged
// driver gives exactly the WARN the rule asks for; its healthy twin none.
func TestRunWithSpecWarns(t *testing.T) {
	text, spec := runWithSpec(t, "topics:\n  /wedged: {max_gap_ms: 200}\n  /steady: {max_gap_ms: 200, min_hz: 45}\nnodes: [/drivers, /consumer]\n",
		"stall.graph", "3")
	if !strings.Contains(text, "JITTER /wedged recv max_dt_ms=") {
		t.Fatalf("the gap rule did not switch gap tracking on:\n%s", text)
	}
	if !strings.Contains(text, "WARN TOPIC /wedged max_dt_ms=") || !strings.Contains(text, "ALERT topic_gap topic=/wedged side=recv") {
		t.Errorf("no gap warning for the wedged driver:\n%s", text)
	}
	if strings.Contains(text, "/steady max_dt_ms") || strings.Contains(text, "WARN NODE") {
		t.Errorf("the healthy twin or a live node was warned about:\n%s", text)
	}
	// A bad spec is refused before anything runs.
	os.WriteFile(spec, []byte("topics:\n  /a: {min_hz: 1, mni_hz: 2}\n"), 0o600)
	out, err := pulseCmd(t, "run", "--spec", spec, "--", "true").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `line 2: topic /a: unknown key "mni_hz"`) {
		t.Errorf("bad spec: %v %s", err, out)
	}
}

// runCheck runs `pulse check --live --watchdog` against a running graph with
// NOTIFY_SOCKET pointing at a unix datagram socket of ours, as systemd's.
func runCheck(t *testing.T, specText string) (code int, stdout string, notes []string) {
	dir := t.TempDir()
	specPath := filepath.Join(dir, "spec.yaml")
	os.WriteFile(specPath, []byte(specText), 0o600)
	sock := filepath.Join(dir, "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	done := make(chan []string, 1)
	go func() {
		var got []string
		buf := make([]byte, 4096)
		for {
			conn.SetReadDeadline(time.Now().Add(8 * time.Second))
			n, err := conn.Read(buf)
			if err != nil {
				done <- got
				return
			}
			got = append(got, string(buf[:n]))
			if strings.Contains(string(buf[:n]), "STOPPING=1") {
				done <- got
				return
			}
		}
	}()
	graph, segs := startGraph(t, dir, "", "4")
	defer graph.Wait()
	cmd := pulseCmd(t, "check", "--live", "--watchdog", "--spec", specPath, "--period", "500ms", "--for", "3s")
	cmd.Env = append(cmd.Env, "NOTIFY_SOCKET="+sock, "ROS_PULSE_DIR="+segs)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Run()
	return cmd.ProcessState.ExitCode(), out.String(), <-done
}

// The watchdog pets systemd only while healthy, and the exit code is the verdict.
func TestCheckWatchdog(t *testing.T) {
	code, out, notes := runCheck(t, "topics:\n  /scan: {min_hz: 9, max_hz: 11}\n  /tf: {min_hz: 45, side: pub}\nnodes: [/controller]\n")
	joined := strings.Join(notes, "|")
	if code != 0 || out != "" || !strings.HasPrefix(joined, "READY=1") || !strings.Contains(joined, "WATCHDOG=1") ||
		!strings.Contains(joined, "STATUS=healthy") || !strings.Contains(joined, "STOPPING=1") {
		t.Fatalf("healthy: exit %d, stdout %q, notifications %q", code, out, notes)
	}
	code, out, notes = runCheck(t, "topics:\n  /scan: {min_hz: 20}\nnodes: [/controller, /nobody]\n")
	joined = strings.Join(notes, "|")
	if code != 1 || !strings.Contains(out, "WARN TOPIC /scan hz=") || !strings.Contains(out, "ALERT topic_rate topic=/scan") ||
		strings.Contains(joined, "WATCHDOG=1") || !strings.Contains(joined, "STATUS=unhealthy") {
		t.Fatalf("unhealthy: exit %d, stdout %q, notifications %q", code, out, notes)
	}
	code, _, _ = runCheck(t, "topics:\n  /scan: {max_gap_ms: 500}\n")
	if code != 2 {
		t.Fatalf("a gap rule without gap data must be 'cannot judge' (2), got %d", code)
	}
}

// Offline: every bad input is one clear line and exit 2; a gap rule without
// gap data is "cannot judge" (2) after the measured violations are printed.
func TestCheckLogsVerdictsAndBadInput(t *testing.T) {
	dir := t.TempDir()
	specPath := filepath.Join(dir, "spec.yaml")
	os.WriteFile(specPath, []byte("topics:\n  /a: {min_hz: 45}\n  /b: {max_gap_ms: 100}\n"), 0o600)
	okLog := filepath.Join(dir, "ok.log")
	var b strings.Builder
	for i := 0; i < 4; i++ {
		hz := "50.000000"
		if i == 2 {
			hz = "20.000000"
		}
		fmt.Fprintf(&b, "# ts_ns=%d window_s=1.000\nRECV /a inter=%s intra=0.000000\nRECV /b inter=5.000000 intra=0.000000\n\n", (i+1)*1e9, hz)
	}
	os.WriteFile(okLog, []byte(b.String()), 0o600)
	one := filepath.Join(dir, "one.log")
	os.WriteFile(one, []byte("# ts_ns=1 window_s=1.000\nNODE /n\n\n"), 0o600)
	junk := filepath.Join(dir, "junk.jsonl")
	os.WriteFile(junk, []byte("{\"level\":\"info\"}\n{\"msg\":\"hello\"}\n"), 0o600)

	run := func(stdin string, args ...string) (int, string, string) {
		cmd := pulseCmd(t, append([]string{"check", "--spec", specPath}, args...)...)
		var out, errOut bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errOut
		cmd.Run()
		return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
	}
	code, out, errOut := run("", okLog)
	if code != 2 || !strings.Contains(out, "# ts_ns=3000000000 window_s=1.000\nWARN TOPIC /a hz=20.000000 expected=[45,inf]\n") ||
		!strings.Contains(out, "ALERT cannot_judge topic=/b") || !strings.Contains(errOut, "gap rule for /b cannot be judged from the logs: no gap data") {
		t.Errorf("cannot judge: exit %d\n%s%s", code, out, errOut)
	}
	os.WriteFile(specPath, []byte("topics:\n  /a: {min_hz: 45}\n"), 0o600)
	if code, out, errOut = run("", okLog); code != 1 || strings.Count(out, "WARN ") != 1 || !strings.Contains(errOut, "1 of 3 judged windows unhealthy (1 topic_rate)") {
		t.Errorf("violation: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ = run("", "--skip-last", okLog); code != 1 {
		t.Errorf("--skip-last: exit %d\n%s", code, out)
	}
	data, _ := os.ReadFile(okLog)
	if code, _, _ = run(string(data), "-"); code != 1 {
		t.Errorf("stdin: exit %d", code)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{dir}, "not a log file"},
		{[]string{"/dev/zero"}, "not a log file"},
		{[]string{filepath.Join(dir, "missing.log")}, "no such file"},
		{[]string{junk}, "no probe windows in " + junk + " (0 windows, 2 malformed lines skipped (first: line 1))"},
		{[]string{"--skip-last", one}, "--skip-last needs at least 2 windows"},
		{[]string{one}, "cannot judge: no window was judged"},
		{nil, "give LOG files to check, or --live"},
		{[]string{"--live", okLog}, "--live or LOG files, not both"},
		{[]string{"--live", "--skip-last"}, "--skip-last applies to LOG files"},
		{[]string{"--watchdog", okLog}, "--watchdog and --for need --live"},
	} {
		code, _, errOut := run("", c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, errOut, c.want)
		}
	}
}

// A latency rule switches latency tracking on for `pulse run`: LATENCY lines
// in the log, and the injected 40 ms delay breaks a 37 ms bound, the 25 ms
// one does not. (The margin is the listener's scheduling on a busy machine:
// a 30 ms bound read one /cam message 31.5 ms late under CI's load; a 40 ms
// delay's bucket starts above 39 ms.)
func TestRunWithLatencyRule(t *testing.T) {
	text, _ := runWithSpec(t, "topics:\n  /cam: {max_latency_ms: 37}\n  /imu: {max_latency_ms: 37}\n", "latency.graph", "2.5")
	if !strings.Contains(text, "LATENCY /cam n=") || !strings.Contains(text, "LATENCY /imu n=") {
		t.Fatalf("no LATENCY lines:\n%s", text)
	}
	if !strings.Contains(text, "ALERT topic_latency topic=/imu side=recv transport=any max_ms=4") || strings.Contains(text, "topic_latency topic=/cam") {
		t.Errorf("latency verdicts:\n%s", text)
	}
}

// runWithSpec runs `pulse run --spec` (specText) over simgraph on an
// integration graph for duration seconds, recording 500 ms windows, and
// returns the log's text and the spec's path.
func runWithSpec(t *testing.T, specText, graphFile, duration string) (string, string) {
	t.Helper()
	_, sim, _ := bin(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.yaml")
	os.WriteFile(spec, []byte(specText), 0o600)
	graph, _ := filepath.Abs(filepath.Join("../../internal/integration/testdata", graphFile))
	log := filepath.Join(dir, "run.log")
	cmd := pulseCmd(t, "run", "--spec", spec, "--period", "500ms", "--record", log, "--no-summary", "--", sim, "--graph", graph, "--duration", duration)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	b, _ := os.ReadFile(log)
	return string(b), spec
}

// startGraph starts simgraph (graph "" is its default, the demo robot) for
// duration seconds under the probe, with the Jazzy stand-in tracetools, its
// own segment directory in dir (returned) and extra environment.
func startGraph(t testing.TB, dir, graph, duration string, env ...string) (*exec.Cmd, string) {
	t.Helper()
	_, sim, _ := bin(t)
	segs := filepath.Join(dir, "segs")
	os.Mkdir(segs, 0o700)
	os.Mkdir(filepath.Join(dir, "truth"), 0o700) // what the graph really did (graphRates)
	build := filepath.Dir(filepath.Dir(sim))
	args := []string{"--duration", duration, "--truth", filepath.Join(dir, "truth")}
	if graph != "" {
		args = append([]string{"--graph", graph}, args...)
	}
	cmd := exec.Command(sim, args...)
	cmd.Env = append(append(os.Environ(), "LD_PRELOAD="+filepath.Join(build, "lib/libros2_pulse.so"),
		"LD_LIBRARY_PATH="+filepath.Join(build, "lib/sim/jazzy"), "ROS_PULSE_DIR="+segs, "ROS_TOPIC_STATS_QUIET=1"), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, segs
}

// pulse run --spec says its verdicts where the user looks: each unhealthy
// window's WARN/ALERT lines on stderr with the window's time, and a verdict
// line at the end; --check makes the spec's verdict the exit status (0 met,
// 1 violated), unless the command itself failed.
func TestRunSpecVerdictsOnStderrAndCheck(t *testing.T) {
	_, sim, _ := bin(t)
	dir := t.TempDir()
	graph := filepath.Join(dir, "g.graph")
	os.WriteFile(graph, []byte("process p\n  node /talker\n    pub /chatter 20 thread\n  node /listener\n    sub /chatter\n"), 0o600)
	run := func(specText string, check bool, cmdArgs ...string) (int, string) {
		spec := filepath.Join(dir, "spec.yaml")
		os.WriteFile(spec, []byte(specText), 0o600)
		args := []string{"run", "--spec", spec, "--period", "500ms", "--no-summary"}
		if check {
			args = append(args, "--check")
		}
		cmd := pulseCmd(t, append(append(args, "--"), cmdArgs...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		return exitCode(err), stderr.String()
	}
	graphArgs := []string{sim, "--graph", graph, "--duration", "2.5"}
	bad := "topics:\n  /chatter: {min_hz: 40}\n  /absent: {min_hz: 1}\n"
	code, stderr := run(bad, false, graphArgs...)
	if code != 0 || !regexp.MustCompile(`(?m)^# ts_ns=\d+ window_s=0\.5\d\d\nWARN TOPIC /chatter hz=`).MatchString(stderr) ||
		!strings.Contains(stderr, "ALERT topic_missing topic=/absent") ||
		!regexp.MustCompile(`pulse run: spec: \d of \d judged windows unhealthy \(\d+ topic_rate, \d+ topic_missing\)`).MatchString(stderr) {
		t.Errorf("violated spec without --check: exit %d\n%s", code, stderr)
	}
	if code, stderr = run(bad, true, graphArgs...); code != 1 {
		t.Errorf("violated spec with --check: exit %d, want 1\n%s", code, stderr)
	}
	// Bounds the graph meets however loaded the machine: its thread publisher
	// catches up after a delay, so a 0.5 s window can hold 11 messages (22 Hz),
	// and a loaded machine can slow it (pulse is right to say so either way).
	if code, stderr = run("topics:\n  /chatter: {min_hz: 1, max_hz: 200}\nnodes: [/talker]\n", true, graphArgs...); code != 0 ||
		strings.Contains(stderr, "WARN") || strings.Contains(stderr, "ALERT") || !strings.Contains(stderr, "pulse run: spec: healthy:") {
		t.Errorf("met spec with --check: exit %d\n%s", code, stderr)
	}
	if code, _ = run(bad, true, "sh", "-c", "sleep 1.2; exit 3"); code != 3 {
		t.Errorf("a failing command with --check: exit %d, want the command's 3", code)
	}
	if out, err := pulseCmd(t, "run", "--check", "--", "true").CombinedOutput(); exitCode(err) != 2 || !strings.Contains(string(out), "--check needs a spec") {
		t.Errorf("--check without a spec: %v %s", err, out)
	}
}

// Every bad value prints one line per process, with the variable, the value,
// the rule it broke and the fallback: in pulse, however many commands and
// flags read the environment, and in the probe.
func TestBadValuesSaidOnce(t *testing.T) {
	_, sim, _ := bin(t)
	for _, c := range []struct {
		env  string
		args []string
		want string
	}{
		{"ROS_TOPIC_STATS_FORMAT=json", []string{"record", "--duration", "300ms", "--period", "100ms"},
			"pulse: invalid ROS_TOPIC_STATS_FORMAT 'json' (expected 'text' or 'jsonl'), using text"},
		{"ROS_PULSE_DIR=relative/dir", []string{"env"}, "pulse: invalid ROS_PULSE_DIR 'relative/dir' (expected an absolute path), using /dev/shm/ros2_pulse-"},
		{"ROS_TOPIC_STATISTICS_PUBLISH_PERIOD=10ms", []string{"record", "--duration", "300ms", "--period", "100ms"},
			"pulse: invalid ROS_TOPIC_STATISTICS_PUBLISH_PERIOD '10ms' (expected seconds or a duration, at least 50ms, e.g. 2.0), using 5"},
		{"ROS_PULSE_EMIT_IDLE=yes", []string{"record", "--duration", "300ms", "--period", "100ms"},
			"pulse: invalid ROS_PULSE_EMIT_IDLE 'yes' (expected exactly 1 to switch it on, or 0), using off"},
		{"ROS_TOPIC_STATS_QUIET=true", []string{"run", "--no-summary", "--", sim, "--duration", "0.5"},
			"[ros2_pulse] invalid ROS_TOPIC_STATS_QUIET 'true' (expected exactly 1 to switch it on, or 0), using off"},
		{"ROS_TOPIC_STATS_JITTER=yes", []string{"run", "--no-summary", "--", sim, "--duration", "0.5"},
			"[ros2_pulse] invalid ROS_TOPIC_STATS_JITTER 'yes' (expected exactly 1 to switch it on, or 0), using off"},
	} {
		cmd := pulseCmd(t, c.args...)
		cmd.Env = append(cmd.Env, c.env)
		var stderr bytes.Buffer
		cmd.Stderr, cmd.Stdout = &stderr, io.Discard
		cmd.Run()
		want := 1
		if strings.HasPrefix(c.want, "[ros2_pulse]") {
			want = 4 // the demo robot's four processes, one line each
		}
		if n := strings.Count(stderr.String(), c.want); n != want {
			t.Errorf("%s pulse %s: the line %d times, want %d:\n%s", c.env, strings.Join(c.args, " "), n, want, stderr.String())
		}
	}
	// doctor exits 1 when it finds no libtracetools: the probe would count nothing.
	cmd := pulseCmd(t, "doctor")
	cmd.Env = append(cmd.Env, "LD_LIBRARY_PATH=/nonexistent")
	if out, err := cmd.CombinedOutput(); exitCode(err) != 1 || !strings.Contains(string(out), "FAIL none found") {
		t.Errorf("doctor without libtracetools: %v\n%s", err, out)
	}
}

// A recording knows its runs: a second pulse run --record to the same file
// says that it appends, each run has its own header, and offline check
// judges each run on its own (a violation's age starts again with the
// second run); --truncate starts the file afresh.
func TestRecordingKnowsItsRuns(t *testing.T) {
	_, sim, _ := bin(t)
	dir := t.TempDir()
	graph, log, spec := filepath.Join(dir, "g.graph"), filepath.Join(dir, "run.log"), filepath.Join(dir, "spec.yaml")
	os.WriteFile(graph, []byte("process p\n  node /talker\n    pub /chatter 10 thread\n  node /listener\n    sub /chatter\n"), 0o600)
	os.WriteFile(spec, []byte("topics:\n  /chatter: {min_hz: 15}\n"), 0o600)
	run := func(extra ...string) string {
		cmd := pulseCmd(t, append(append([]string{"run", "--period", "500ms", "--no-summary", "--record", log}, extra...),
			"--", sim, "--graph", graph, "--duration", "2.2")...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		return stderr.String()
	}
	if first := run(); strings.Contains(first, "appending") {
		t.Errorf("a new file is not appended to: %s", first)
	}
	if second := run(); !regexp.MustCompile(`pulse: .*run\.log holds \d+ bytes of earlier runs: appending this run after them \(--truncate starts it afresh\)`).MatchString(second) {
		t.Errorf("the second run did not say it appends: %q", second)
	}
	b, _ := os.ReadFile(log)
	ids := regexp.MustCompile(`(?m)^RUN id=([0-9a-f]{16}) host=\S+ version=\S+ start_ns=\d+$`).FindAllStringSubmatch(string(b), -1)
	if len(ids) != 2 || ids[0][1] == ids[1][1] {
		t.Fatalf("run headers %v in:\n%s", ids, b)
	}
	cmd := pulseCmd(t, "check", "--spec", spec, "--skip-last", log)
	out, err := cmd.Output()
	// Each run's first judged window starts the violation afresh: two for_s=0.0.
	restarts := regexp.MustCompile(`(?m)^ALERT topic_rate topic=/chatter side=recv transport=any hz=\S+ min_hz=15 max_hz=inf for_s=0\.0$`)
	if exitCode(err) != 1 || strings.Count(string(out), "ALERT topic_rate topic=/chatter side=recv transport=any hz=") < 4 ||
		len(restarts.FindAllString(string(out), -1)) != 2 {
		t.Errorf("check of two runs: %v\n%s", err, out)
	}
	if third := run("--truncate"); strings.Contains(third, "appending") {
		t.Errorf("--truncate appended: %s", third)
	}
	b, _ = os.ReadFile(log)
	if n := strings.Count(string(b), "RUN id="); n != 1 {
		t.Errorf("after --truncate the file holds %d runs", n)
	}
}

// pulse run's first scan comes before its command has started: it says "no
// probed process" only when none came in its first windows, and once
// (issue 23, item 4).
func TestRunSaysNothingThereOnlyWhenTrue(t *testing.T) {
	_, sim, _ := bin(t)
	run := func(cmdArgs ...string) string {
		cmd := pulseCmd(t, append([]string{"run", "--period", "200ms", "--"}, cmdArgs...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("pulse run %v: %v\n%s", cmdArgs, err, stderr.String())
		}
		return stderr.String()
	}
	// The graph starts 300 ms after pulse run's first scan.
	if out := run("sh", "-c", "sleep 0.3; exec \"$0\" --duration 1.5", sim); strings.Contains(out, "no probed process") {
		t.Errorf("a command whose graph started within the first windows:\n%s", out)
	}
	if out := run("sleep", "2"); strings.Count(out, "no probed process") != 1 {
		t.Errorf("a command that runs no ROS process: want the notice once:\n%s", out)
	}
}

// A starved subscription without a spec: pulse export's gauge says 1 for
// each deaf one (never matched) and 0 for none of the healthy, and pulse
// doctor names each as a problem (issue 23, item 1).
func TestStarvedSaidByExportAndDoctor(t *testing.T) {
	dir := t.TempDir()
	graphFile, _ := filepath.Abs("../../internal/integration/testdata/starved.graph")
	graph, segs := startGraph(t, dir, graphFile, "12")
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()
	addr := startExport(t, segs)
	// Wait for the starved gauges, not for the clock: the exporter first sees
	// each silent subscription, then the publishers publish.
	want := map[string]float64{"/near_listener": 1, "/far_listener": 1, "/py_listener": 1}
	got := map[string]float64{}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		all := true
		for node := range want {
			v, ok := scrapeCounter(t, addr, "ros2_pulse_subscription_starved", `node="`+node+`"`)
			got[node] = v
			all = all && ok && v == 1
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("starved gauges after 15 s: %v, want %v", got, want)
		}
	}
	if v, ok := scrapeCounter(t, addr, "ros2_pulse_subscription_starved", `node="/listener"`); ok && v != 0 {
		t.Errorf("the healthy listener is starved: %v", v)
	}
	doc := pulseCmd(t, "doctor")
	doc.Env = append(doc.Env, "ROS_PULSE_DIR="+segs)
	out, err := doc.Output()
	if exitCode(err) != 1 {
		t.Errorf("doctor with starved subscriptions: exit %d, want 1", exitCode(err))
	}
	for node := range want {
		if !strings.Contains(string(out), "WARN "+node+" (pid ") || !strings.Contains(string(out), "receives nothing of") {
			t.Errorf("doctor does not name %s:\n%s", node, out)
		}
	}
	if strings.Contains(string(out), "WARN /listener") {
		t.Errorf("doctor names the healthy listener:\n%s", out)
	}
}

// doctor names a thread whose callbacks leave it no time (a 10 ms timer whose
// callback takes 9.8 ms), not a calm one, and says where timing is off.
func TestDoctorNamesASaturatedThread(t *testing.T) {
	dir := t.TempDir()
	graphFile := filepath.Join(dir, "hot.graph")
	os.WriteFile(graphFile, []byte("process hot\n  node /hot\n    timer 100 cost=9.8\nprocess calm\n  node /calm\n    timer 10 cost=1\n"+
		"process pyhot\n  node /pyhot lang=py\n    timer 20 cost=49\n"), 0o600)
	graph, segs := startGraph(t, dir, graphFile, "8")
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()
	for deadline := time.Now().Add(15 * time.Second); len(segmentFiles(segs)) < 3; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no segments in 15 s")
		}
	}
	// Wait for /hot's thread record to show callbacks, and /pyhot's to show
	// waits (the rclpy one has no callback times), not for the clock.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r := segment.NewReader(segs)
		scan, err := r.Scan()
		ran, waited := false, false
		for _, s := range scanSnapshots(scan, err) {
			for _, th := range s.Threads {
				ran = ran || th.Callbacks > 0 && len(s.Nodes) == 1 && s.Nodes[0].Name == "/hot"
				waited = waited || th.Waits > 0 && len(s.Nodes) == 1 && s.Nodes[0].Name == "/pyhot"
			}
		}
		r.Close()
		if ran && waited {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("in 15 s: /hot's thread ran a callback %v, /pyhot's waited %v", ran, waited)
		}
	}
	doc := pulseCmd(t, "doctor")
	doc.Env = append(doc.Env, "ROS_PULSE_DIR="+segs)
	out, err := doc.Output()
	if exitCode(err) != 1 || !strings.Contains(string(out), "executor threads with no time left") ||
		!strings.Contains(string(out), "inside callbacks (node: /hot)") || strings.Contains(string(out), "(node: /calm)") ||
		!strings.Contains(string(out), "outside rcl_wait (node: /pyhot)") {
		t.Errorf("doctor (exit %d) with /hot's thread 98 %% busy and /pyhot's rclpy thread 98 %% outside rcl_wait:\n%s", exitCode(err), out)
	}
	if strings.Contains(string(out), "callback timing off") {
		t.Errorf("doctor says timing is off where it is on:\n%s", out)
	}

	dir2 := t.TempDir()
	graph2, segs2 := startGraph(t, dir2, graphFile, "6", "ROS_PULSE_TIMING=0")
	defer func() { graph2.Process.Signal(os.Interrupt); graph2.Wait() }()
	for deadline := time.Now().Add(15 * time.Second); len(segmentFiles(segs2)) < 3; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no segments in 15 s")
		}
	}
	doc2 := pulseCmd(t, "doctor")
	doc2.Env = append(doc2.Env, "ROS_PULSE_DIR="+segs2)
	out2, _ := doc2.Output()
	if strings.Count(string(out2), "callback timing off (ROS_PULSE_TIMING=0") != 3 || strings.Contains(string(out2), "no time left") {
		t.Errorf("doctor with timing off:\n%s", out2)
	}
}

// startExport runs pulse export on segs at a free port, stopped when the test
// ends, and returns its address.
func startExport(t *testing.T, segs string) string {
	t.Helper()
	addr := freePort(t)
	exp := pulseCmd(t, "export", "--listen", addr)
	exp.Env = append(exp.Env, "ROS_PULSE_DIR="+segs)
	if err := exp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exp.Process.Signal(os.Interrupt); exp.Wait() })
	return addr
}

// scanSnapshots is a scan's snapshots, none when the scan failed.
func scanSnapshots(scan *segment.Scan, err error) []*segment.Snapshot {
	if err != nil {
		return nil
	}
	return scan.Snapshots
}
