package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// verdicts is what one scenario gave: `pulse check --live` while the graph
// ran, and `pulse check LOG` on what `pulse record` wrote beside it.
type verdicts struct {
	liveCode, logCode int
	live, log, logErr string
}

// scenario runs graphText under the probe (gap tracking on when jitter), with
// `pulse check --live` and `pulse record` beside it for the same span, then
// checks the recorded log offline. Both readers stop before the graph does,
// so the graph's own exit is never judged.
func scenario(t *testing.T, graphText, specText, period string, jitter bool, format string) verdicts {
	t.Helper()
	dir := t.TempDir()
	graphPath, specPath, logPath := filepath.Join(dir, "g.graph"), filepath.Join(dir, "spec.yaml"), filepath.Join(dir, "run.log")
	os.WriteFile(graphPath, []byte(graphText), 0o600)
	os.WriteFile(specPath, []byte(specText), 0o600)
	graph, segs := startGraph(t, dir, graphPath, "5", "ROS_TOPIC_STATS_JITTER="+map[bool]string{true: "1", false: "0"}[jitter])
	defer graph.Wait()
	span := "4s"
	live := pulseCmd(t, "check", "--live", "--spec", specPath, "--period", period, "--for", span)
	rec := pulseCmd(t, "record", "--period", period, "--duration", span, "--format", format, "--out", logPath)
	var liveOut bytes.Buffer
	live.Stdout = &liveOut
	for _, c := range []*exec.Cmd{live, rec} {
		c.Env = append(c.Env, "ROS_PULSE_DIR="+segs)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	live.Wait()
	if err := rec.Wait(); err != nil {
		t.Fatalf("record: %v", err)
	}
	var v verdicts
	v.liveCode, v.live = live.ProcessState.ExitCode(), liveOut.String()
	check := pulseCmd(t, "check", "--spec", specPath, "--skip-last", logPath)
	var out, errOut bytes.Buffer
	check.Stdout, check.Stderr = &out, &errOut
	check.Run()
	v.logCode, v.log, v.logErr = check.ProcessState.ExitCode(), out.String(), errOut.String()
	if t.Failed() || testing.Verbose() {
		b, _ := os.ReadFile(logPath)
		t.Logf("log:\n%s", b)
	}
	return v
}

// alerts returns the ALERT kinds of a check's output, in order, deduplicated.
func alerts(out string) []string {
	var kinds []string
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "ALERT" && !seen[f[1]] {
			seen[f[1]] = true
			kinds = append(kinds, f[1])
		}
	}
	return kinds
}

// values returns the first capture of re on every line of out, as numbers.
func values(t *testing.T, out string, re *regexp.Regexp) []float64 {
	var vs []float64
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		if m[1] == "" {
			continue // a line without a value (WARN NODE)
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	return vs
}

// expectFault asserts that both checks exit 1, that every WARN line matches
// warn (its value within [lo, hi]) and at least one is there (warn nil: no
// WARN line at all), and that the ALERT kinds are exactly kinds.
func expectFault(t *testing.T, v verdicts, warn *regexp.Regexp, lo, hi float64, kinds ...string) {
	t.Helper()
	for _, c := range []struct {
		name, out string
		code      int
	}{{"live", v.live, v.liveCode}, {"log", v.log, v.logCode}} {
		if c.code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s%s", c.name, c.code, c.out, v.logErr)
		}
		want := warn
		if want == nil {
			want = regexp.MustCompile(`^WARN ()$`) // never matches a WARN line
		} else if !want.MatchString(c.out) {
			t.Errorf("%s: no line matches %s:\n%s", c.name, want, c.out)
		}
		got := values(t, c.out, want)
		for _, x := range got {
			if x < lo || x > hi {
				t.Errorf("%s: %s measured %g, want [%g, %g]", c.name, want, x, lo, hi)
			}
		}
		for _, line := range strings.Split(c.out, "\n") {
			if strings.HasPrefix(line, "WARN ") && !want.MatchString(line) {
				t.Errorf("%s: unexpected %q", c.name, line)
			}
		}
		if got := strings.Join(alerts(c.out), ","); got != strings.Join(kinds, ",") {
			t.Errorf("%s: ALERT kinds %q, want %q", c.name, got, strings.Join(kinds, ","))
		}
	}
}

// expectHealthy asserts that both checks exit 0 and print nothing on stdout.
func expectHealthy(t *testing.T, v verdicts) {
	t.Helper()
	if v.liveCode != 0 || v.live != "" {
		t.Errorf("live: exit %d, stdout:\n%s", v.liveCode, v.live)
	}
	if v.logCode != 0 || v.log != "" {
		t.Errorf("log: exit %d, stdout:\n%s%s", v.logCode, v.log, v.logErr)
	}
}

// A publisher that sags from 50 to 30 Hz breaks its publish-side bounds.
func TestFaultRateSag(t *testing.T) {
	const graph = "process drivers\n  node /drivers\n    pub /odom 50 thread%s\nprocess consumer\n  node /consumer\n    sub /odom\n"
	const spec = "topics:\n  /odom: {min_hz: 45, max_hz: 55, side: pub}\n"
	expectFault(t, scenario(t, strings.Replace(graph, "%s", " sag=1.5:30", 1), spec, "500ms", false, "text"),
		regexp.MustCompile(`(?m)^WARN TOPIC /odom hz=(\d+\.\d{6}) expected=\[45,55\]$`), 27, 45, "topic_rate")
	expectHealthy(t, scenario(t, strings.Replace(graph, "%s", "", 1), spec, "500ms", false, "text"))
}

// A 400 ms freeze in 1 s windows leaves at least 30 messages: a 25 Hz bound
// cannot see it, the gap rule can.
func TestFaultFreezeCaughtByGapRule(t *testing.T) {
	const graph = "process drivers\n  node /drivers\n    pub /scan 50 thread%s\nprocess consumer\n  node /consumer\n    sub /scan\n"
	const spec = "topics:\n  /scan: {min_hz: 25, max_gap_ms: 200}\n"
	warn := regexp.MustCompile(`(?m)^WARN TOPIC /scan max_dt_ms=(\d+\.\d{3}) expected_max_gap_ms=200$`)
	v := scenario(t, strings.Replace(graph, "%s", " stall=1.6:0.4", 1), spec, "1s", true, "jsonl")
	// While it lasts the open gap is reported; once closed, the whole 400 ms
	// (a bucket's upper bound: at most 6.25 % above).
	expectFault(t, v, warn, 200, 470, "topic_gap")
	for _, out := range []string{v.live, v.log} {
		if got := values(t, out, warn); len(got) == 0 || slices.Max(got) < 400 {
			t.Errorf("the closed 400 ms gap was not reported: %v", got)
		}
	}
	expectHealthy(t, scenario(t, strings.Replace(graph, "%s", "", 1), spec, "1s", true, "jsonl"))
}

// A node whose process is killed is missing from the next window on.
func TestFaultKilledNode(t *testing.T) {
	const graph = "process drivers%s\n  node /drivers\n    pub /imu 100 thread\nprocess consumer\n  node /consumer\n    sub /imu\n"
	const spec = "nodes: [/drivers, /consumer]\n"
	v := scenario(t, strings.Replace(graph, "%s", " kill=2", 1), spec, "500ms", false, "text")
	expectFault(t, v, regexp.MustCompile(`(?m)^WARN NODE /drivers missing()$`), 0, 0, "node_missing")
	expectHealthy(t, scenario(t, strings.Replace(graph, "%s", "", 1), spec, "500ms", false, "text"))
}

// A wedged control loop: its subscription drains, its timer does not fire.
// Upstream had no timer verdict, so there is no WARN line: ALERT only.
func TestFaultWedgedTimer(t *testing.T) {
	const graph = "process sensor\n  node /sensor\n    pub /imu 100 thread\nprocess control\n  node /controller\n    sub /imu\n    timer 100%s\n"
	const spec = "topics:\n  /imu: {min_hz: 90}\ntimers:\n  /controller: {min_hz: 90}\n"
	v := scenario(t, strings.Replace(graph, "%s", " stall=1.5:1.5", 1), spec, "500ms", false, "jsonl")
	expectFault(t, v, nil, 0, 0, "timer_rate")
	for _, out := range []string{v.live, v.log} {
		// Logs carry no pid for timers; live verdicts name the process.
		if !regexp.MustCompile(`(?m)^ALERT timer_rate node=/controller( pid=\d+)? timer=0 hz=0\.000000 min_hz=90 max_hz=inf for_s=`).MatchString(out) {
			t.Errorf("no timer ALERT naming the node, its pid and the timer:\n%s", out)
		}
	}
	expectHealthy(t, scenario(t, strings.Replace(graph, "%s", "", 1), spec, "500ms", false, "jsonl"))
}

// A subscriber whose callback takes 40 ms receives 25 of the 50 messages a
// second; the rest are dropped by its queue, as a KEEP_LAST reader drops them.
func TestFaultSlowSubscriber(t *testing.T) {
	const graph = "process drivers\n  node /drivers\n    pub /points 50 thread\nprocess consumer\n  node /consumer\n    sub /points cost=%s\n"
	const spec = "topics:\n  /points:\n    - {min_hz: 45}\n    - {min_hz: 45, max_hz: 55, side: pub}\n"
	v := scenario(t, strings.Replace(graph, "%s", "40", 1), spec, "500ms", false, "text")
	expectFault(t, v, regexp.MustCompile(`(?m)^WARN TOPIC /points hz=(\d+\.\d{6}) expected=\[45,inf\]$`), 20, 30, "topic_rate")
	// Live, the verdict also names the slow subscription's node and process.
	if !regexp.MustCompile(`(?m)^ALERT topic_rate topic=/points side=recv transport=any node=/consumer pid=\d+ hz=`).MatchString(v.live) {
		t.Errorf("live: no per-subscription ALERT:\n%s", v.live)
	}
	expectHealthy(t, scenario(t, strings.Replace(graph, "%s", "2", 1), spec, "500ms", false, "text"))
}

// A best-effort subscriber that loses a fifth of /points breaks a 5 % loss
// bound; the ALERT names it. Upstream's grammar has no loss WARN line.
func TestFaultLossySubscriber(t *testing.T) {
	const graph = "process drivers\n  node /drivers\n    pub /points 100 thread\nprocess consumer\n  node /consumer\n    sub /points drop=%s\n"
	const spec = "topics:\n  /points: {max_loss_pct: 5}\n"
	v := scenario(t, strings.Replace(graph, "%s", "0.2", 1), spec, "1s", false, "text")
	expectFault(t, v, nil, 0, 0, "topic_loss")
	re := regexp.MustCompile(`(?m)^ALERT topic_loss topic=/points side=recv transport=any node=/consumer pid=\d+ loss_pct=(\d+\.\d{3}) max_loss_pct=5 for_s=`)
	for name, out := range map[string]string{"live": v.live, "log": v.log} {
		got := values(t, out, re)
		if len(got) == 0 {
			t.Errorf("%s: no loss ALERT naming the subscription:\n%s", name, out)
		}
		for _, x := range got {
			if x < 18 || x > 22 {
				t.Errorf("%s: loss %.3f %%, injected 20 %%", name, x)
			}
		}
	}
	expectHealthy(t, scenario(t, strings.Replace(graph, "%s", "0.01", 1), spec, "1s", false, "jsonl"))
}
