package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// verdictsByWindow reads the window headers and ALERT lines that live
// (pulse run --spec, on stderr) and offline (pulse check, on stdout) print
// for unhealthy windows, keyed by the window's time. An ALERT's age (for_s)
// is left out: live ages count wall time, offline ones window time. Numbers
// are compared to the log's precision. recv_starved is left out: it is a
// machine warning, not a spec verdict, and needs each subscription's
// cumulative count, which a log does not carry (pulse run prints it live).
func verdictsByWindow(out string) map[string][]string {
	num := regexp.MustCompile(`=(\d+\.\d+)`)
	byWin := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "# ts_ns="):
			cur = strings.Fields(line)[1]
		case strings.HasPrefix(line, "ALERT ") && cur != "" && !strings.HasPrefix(line, "ALERT recv_starved "):
			line = regexp.MustCompile(` for_s=\S+`).ReplaceAllString(line, "")
			line = num.ReplaceAllStringFunc(line, func(m string) string {
				v, _ := strconv.ParseFloat(m[1:], 64)
				return "=" + strconv.FormatFloat(v, 'f', 3, 64)
			})
			byWin[cur] = append(byWin[cur], line)
		}
	}
	for _, ls := range byWin {
		sort.Strings(ls)
	}
	return byWin
}

// One evaluator, one answer: for every fault of the fault tests (and a late
// publisher, rclpy timers and a latency rule through a freeze, slow
// callbacks, a late and overrunning timer, a busy node, callbacks rclpy
// cannot time), pulse run
// --spec --check judges the run live and records it; pulse check judges the
// recording offline. Their verdicts are equal window by window, and so are
// their exit codes.
func TestLiveAndOfflineVerdictsAgree(t *testing.T) {
	_, sim, _ := bin(t)
	cases := []struct {
		name, graph, spec string
		jitter            bool
	}{
		{"rate sag", "process drivers\n  node /drivers\n    pub /odom 50 thread sag=1.5:30\nprocess consumer\n  node /consumer\n    sub /odom\n",
			"topics:\n  /odom: {min_hz: 45, max_hz: 55, side: pub}\n", false},
		{"freeze", "process drivers\n  node /drivers\n    pub /scan 50 thread stall=1.6:0.6\nprocess consumer\n  node /consumer\n    sub /scan\n",
			"topics:\n  /scan: {min_hz: 25, max_gap_ms: 200}\n", true},
		{"killed node", "process drivers kill=2\n  node /drivers\n    pub /imu 100 thread\nprocess consumer\n  node /consumer\n    sub /imu\n",
			"nodes: [/drivers, /consumer]\ntopics:\n  /imu: {min_hz: 90}\n", false},
		{"wedged timer", "process sensor\n  node /sensor\n    pub /imu 100 thread\nprocess control\n  node /controller\n    sub /imu\n    timer 100 stall=1.5:1.5\n",
			"topics:\n  /imu: {min_hz: 90}\ntimers:\n  /controller: {min_hz: 90}\n", false},
		{"slow subscriber", "process drivers\n  node /drivers\n    pub /points 50 thread\nprocess consumer\n  node /consumer\n    sub /points cost=40\n",
			"topics:\n  /points:\n    - {min_hz: 45}\n    - {min_hz: 45, max_hz: 55, side: pub}\n", false},
		{"lossy subscriber", "process drivers\n  node /drivers\n    pub /points 100 thread\nprocess consumer\n  node /consumer\n    sub /points drop=0.2\n",
			"topics:\n  /points: {max_loss_pct: 5}\n", false},
		{"late talker", "process listener\n  node /listener\n    sub /chatter\nprocess talker\n  node /talker\n    pub /chatter 20 thread stall=0:2\n",
			"topics:\n  /chatter: {min_hz: 15}\nnodes: [/talker, /listener]\n", false},
		{"rclpy timer and latency", "process py\n  node /py_talker lang=py\n    pub /chatter 20 thread stall=1.5:1\n    timer 10 stall=1.5:1\nprocess l\n  node /listener lang=py\n    sub /chatter delay=5\n",
			"topics:\n  /chatter: {max_latency_ms: 50}\ntimers:\n  /py_talker: {min_hz: 5}\n", false},
		{"slow callbacks and a late timer", "process ctl\n  node /loop\n    timer 100 cost=15:4\nprocess w\n  node /talker\n    pub /in 20 thread\n  node /worker\n    sub /in cost=25\n",
			"callbacks:\n  /in: {max_ms: 20}\ntimers:\n  /loop: {max_late_ms: 2, max_overruns: 0}\nnodes:\n  /worker: {max_busy_pct: 30}\n  /loop:\n", false},
		{"rclpy callbacks not measured", "process t\n  node /talker\n    pub /in 20 thread\nprocess py\n  node /py_worker lang=py\n    sub /in\n",
			"callbacks:\n  /py_worker: {max_ms: 5}\nnodes:\n  /py_worker: {max_busy_pct: 50}\n", false},
		// service calls: a slow server, its client timing out, a lossy server's backlog, a missing server, an rclpy rate
		{"services", "process s\n  node /slow_server lang=py\n    service /slow cost=200\n  node /lossy_server\n    service /lossy drop=4\n" +
			"process c\n  node /slow_caller\n    client /slow 10\n  node /lossy_caller lang=py\n    client /lossy 20\n  node /lonely\n    client /nobody 2\n",
			"services:\n  /slow: {max_response_ms: 100}\n  /lossy: {max_outstanding: 2, side: client}\n  /nobody: {min_hz: 1}\n" +
				"  /fast: {min_hz: 5, side: client}\n", false},
		// an action whose results come later than its rule allows
		{"actions", "process nav\n  node /nav_server lang=py\n    action /navigate accept=2 result=700\nprocess bt\n  node /bt\n    action_client /navigate 2\n",
			"actions:\n  /navigate: {max_accept_ms: 50, max_result_ms: 300}\n", false},
		// the receive rule's verdict carries why, live and from the recording
		{"QoS mismatch", "process t\n  node /talker\n    pub /chatter 20 thread qos=best_effort\nprocess l\n  node /listener\n    sub /chatter qos=reliable\n",
			"topics:\n  /chatter: {min_hz: 15, side: recv}\n", false},
		// an end-to-end path over its bound, and one through a hop nobody links (links on: the spec names paths)
		{"slow path", "process s\n  node /sensor\n    pub /s 20 thread\nprocess a\n  node /n1\n    sub /s cost=3 relay=/m\n" +
			"process b\n  node /n2 lang=py\n    sub /m cost=5 relay=/e\nprocess c\n  node /sink\n    sub /e\n",
			"paths:\n  main: {via: [/s, /m, /e], max_ms: 4}\n  side: {via: [/s, /x], max_ms: 10}\n", false},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			graph, spec, rec := filepath.Join(dir, "g.graph"), filepath.Join(dir, "spec.yaml"), filepath.Join(dir, "run.log")
			os.WriteFile(graph, []byte(c.graph), 0o600)
			os.WriteFile(spec, []byte(c.spec), 0o600)
			args := []string{"run", "--period", "500ms", "--spec", spec, "--check", "--record", rec, "--no-summary"}
			if c.jitter {
				args = append(args, "--jitter")
			}
			live := pulseCmd(t, append(args, "--", sim, "--graph", graph, "--duration", "4")...)
			var liveErr bytes.Buffer
			live.Stderr = &liveErr
			liveCode := exitCode(live.Run())
			offline := pulseCmd(t, "check", "--spec", spec, "--skip-last", rec)
			var offOut, offErr bytes.Buffer
			offline.Stdout, offline.Stderr = &offOut, &offErr
			offCode := exitCode(offline.Run())
			lv, ov := verdictsByWindow(liveErr.String()), verdictsByWindow(offOut.String())
			same := len(lv) == len(ov)
			for ts, ls := range lv {
				same = same && strings.Join(ls, "\n") == strings.Join(ov[ts], "\n")
			}
			if c.name == "services" {
				for _, want := range []string{"ALERT service_slow name=/slow node=/slow_server", "ALERT service_outstanding name=/lossy node=/lossy_caller",
					"ALERT service_missing name=/nobody side=server min_hz=1", "ALERT service_missing name=/fast side=client"} {
					if !strings.Contains(liveErr.String(), want) {
						t.Errorf("live verdicts lack %q", want)
					}
				}
			}
			if c.name == "actions" && (!strings.Contains(liveErr.String(), "ALERT action_slow name=/navigate node=/bt") ||
				strings.Contains(liveErr.String(), "part=accept")) {
				t.Errorf("live verdicts: want late results, no late accepts:\n%s", liveErr.String())
			}
			if c.name == "slow path" && (!strings.Contains(liveErr.String(), "ALERT path_slow name=main p99_ms=") ||
				!strings.Contains(liveErr.String(), `ALERT cannot_judge name=side metric=path max_ms=10 reason=path_not_measured cause=hop\x20/s\x20->\x20/x`)) {
				t.Errorf("live verdicts: want main slow and side not measured:\n%s", liveErr.String())
			}
			if c.name == "QoS mismatch" && !strings.Contains(liveErr.String(), `cause=qos_incompatible\x20(reliability:\x20publisher\x20best_effort,\x20subscription\x20reliable)`) {
				t.Errorf("the receive verdict does not carry its cause:\n%s", liveErr.String())
			}
			if !same || liveCode != offCode || liveCode == 0 {
				b, _ := os.ReadFile(rec)
				t.Errorf("live exit %d, offline exit %d (every case here is unhealthy)\nlive:\n%s\noffline:\n%s%s\nrecording:\n%s",
					liveCode, offCode, liveErr.String(), offOut.String(), offErr.String(), b)
			}
		})
	}
}
