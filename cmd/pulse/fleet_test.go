//go:build fleet

package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// robot is one robot of the fleet test: a network namespace with a veth
// pair to the host, its own simgraph graph under the probe (its own segment
// directory), its own pulse export and its own Prometheus agent.
type robot struct {
	name, ns        string
	hostIf, robotIf string // the veth ends: in the host namespace, in the robot's
	hostIP, robotIP string
	segs, graphPath string
	procs           map[string]*exec.Cmd // graph, export, agent
	truth           *truthSampler        // the graph's own counts
}

// start runs a command in the robot's namespace, stopped when the test ends.
func (r *robot) start(t *testing.T, key string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", r.ns}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	log, err := os.Create(filepath.Join(filepath.Dir(r.segs), key+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.procs[key] = cmd
	t.Cleanup(func() { stopProc(cmd); log.Close() })
}

func stopProc(cmd *exec.Cmd) {
	if cmd.ProcessState == nil {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
}

// agentScrapes is how many scrapes the robot's agent has made, from its own
// metrics (prometheus_target_interval_length_seconds_count).
func (r *robot) agentScrapes(t *testing.T) float64 {
	t.Helper()
	// Read inside the robot's namespace, as the robot sees its agent, so the
	// link's state does not matter; a loaded machine may be slow to answer:
	// wait for the answer (30 s at most), not for the clock.
	script := "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen('http://" + r.robotIP + ":9090/metrics', timeout=5).read().decode())"
	var last error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		out, err := exec.Command("ip", "netns", "exec", r.ns, "python3", "-c", script).Output()
		if err != nil {
			last = err
			continue
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "prometheus_target_interval_length_seconds_count{") {
				f := strings.Fields(line)
				v, _ := strconv.ParseFloat(f[len(f)-1], 64)
				return v
			}
		}
		t.Fatalf("robot %s's agent exposes no scrape count", r.name)
	}
	t.Fatalf("robot %s's agent did not answer in 30 s: %v", r.name, last)
	return 0
}

// A fleet, end to end (make test-fleet): three robots, each in a network
// namespace of its own with its graph, pulse export and a Prometheus agent
// configured from deploy/fleet/agent.yml, remote-writing to one central
// Prometheus configured from deploy/fleet/central.yml with the shipped
// rules. Robot a loses its link for 60 s and has its exporter restarted;
// robot b's /scan stalls; robot c loses a node.
func TestFleet(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root: the fleet test makes one per robot")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip (iproute2): network namespaces cannot be made here")
	}
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus is needed (apt-get install prometheus; make test does)")
	}
	pulse, sim, _ := bin(t)
	build := filepath.Dir(filepath.Dir(sim))
	dir := t.TempDir()
	tag := claim(t, "fleet-subnet", 0, 249, nil) // no other fleet test on this machine holds it
	subnet := fmt.Sprintf("10.213.%d", tag)

	demo, err := os.ReadFile("../../sim/graphs/demo.graph")
	if err != nil {
		t.Fatal(err)
	}
	graphs := map[string]string{
		"a": string(demo),
		// b: /scan goes silent 40 s in, for the rest of the test.
		"b": strings.Replace(string(demo), "pub /scan 10 thread size=8000", "pub /scan 10 thread size=8000 stall=40:1000", 1),
		// c: a node with a timer (no topic of its own) dies by SIGKILL 40 s in.
		"c": string(demo) + "\nprocess doomed kill=40\n  node /doomed\n    timer 5\n",
	}

	// The central server, in the host namespace, on an address every robot reaches.
	centralPort := strings.TrimPrefix(freePort(t), "127.0.0.1:")
	central := "127.0.0.1:" + centralPort
	rules, _ := filepath.Abs("../../deploy/prometheus/ros2_pulse.rules.yml")
	centralCfg, err := os.ReadFile("../../deploy/fleet/central.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(centralCfg), "evaluation_interval: 15s", "evaluation_interval: 2s", 1)
	cfg = strings.Replace(cfg, "../prometheus/ros2_pulse.rules.yml", rules, 1)
	os.WriteFile(filepath.Join(dir, "central.yml"), []byte(cfg), 0o644)
	cp := exec.Command(prom, "--config.file="+filepath.Join(dir, "central.yml"), "--web.enable-remote-write-receiver",
		"--web.listen-address=0.0.0.0:"+centralPort, "--storage.tsdb.path="+filepath.Join(dir, "central-data"))
	cpLog, _ := os.Create(filepath.Join(dir, "central.log"))
	cp.Stdout, cp.Stderr = cpLog, cpLog
	if err := cp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopProc(cp); cpLog.Close() })

	agentCfg, err := os.ReadFile("../../deploy/fleet/agent.yml")
	if err != nil {
		t.Fatal(err)
	}
	robots := map[string]*robot{}
	for i, name := range []string{"a", "b", "c"} {
		r := &robot{name: name, ns: fmt.Sprintf("pulse-fleet-%d-%s", tag, name),
			hostIf: fmt.Sprintf("pf%d%sh", tag, name), robotIf: fmt.Sprintf("pf%d%sr", tag, name),
			hostIP: fmt.Sprintf("%s.%d", subnet, 4*i+1), robotIP: fmt.Sprintf("%s.%d", subnet, 4*i+2),
			procs: map[string]*exec.Cmd{}}
		robots[name] = r
		// Leftovers of a run that was killed would make the names collide.
		exec.Command("ip", "netns", "del", r.ns).Run()
		exec.Command("ip", "link", "del", r.hostIf).Run()
		mustRun(t, "ip", "netns", "add", r.ns)
		t.Cleanup(func() {
			exec.Command("ip", "netns", "del", r.ns).Run() // takes the robot's veth end, and so the pair
			exec.Command("ip", "link", "del", r.hostIf).Run()
		})
		mustRun(t, "ip", "link", "add", r.hostIf, "type", "veth", "peer", "name", r.robotIf)
		mustRun(t, "ip", "link", "set", r.robotIf, "netns", r.ns)
		mustRun(t, "ip", "addr", "add", r.hostIP+"/30", "dev", r.hostIf)
		mustRun(t, "ip", "link", "set", r.hostIf, "up")
		mustRun(t, "ip", "-n", r.ns, "addr", "add", r.robotIP+"/30", "dev", r.robotIf)
		mustRun(t, "ip", "-n", r.ns, "link", "set", r.robotIf, "up")
		mustRun(t, "ip", "-n", r.ns, "link", "set", "lo", "up")

		rdir := filepath.Join(dir, name)
		r.segs = filepath.Join(rdir, "segs")
		os.MkdirAll(r.segs, 0o700)
		os.MkdirAll(filepath.Join(rdir, "truth"), 0o700)
		r.graphPath = filepath.Join(rdir, "robot.graph")
		os.WriteFile(r.graphPath, []byte(graphs[name]), 0o644)
		r.start(t, "graph", []string{"LD_PRELOAD=" + filepath.Join(build, "lib/libros2_pulse.so"),
			"LD_LIBRARY_PATH=" + filepath.Join(build, "lib/sim/jazzy"), "ROS_PULSE_DIR=" + r.segs, "ROS_TOPIC_STATS_QUIET=1"},
			sim, "--graph", r.graphPath, "--duration", "600", "--truth", filepath.Join(rdir, "truth"))
		r.truth = sampleTruth(t, rdir) // what the robot's graph really did, for its rates
		r.start(t, "export", []string{"ROS_PULSE_DIR=" + r.segs}, pulse, "export", "--listen", "127.0.0.1:9464", "--period", "1s")

		a := strings.Replace(string(agentCfg), "robot: robot-01", "robot: "+name, 1)
		a = strings.Replace(a, "http://central.example:9090/api/v1/write", "http://"+r.hostIP+":"+centralPort+"/api/v1/write", 1)
		a = strings.Replace(a, "scrape_interval: 15s", "scrape_interval: 2s", 1)
		if a == string(agentCfg) {
			t.Fatal("deploy/fleet/agent.yml no longer has the values this test fills in")
		}
		os.WriteFile(filepath.Join(rdir, "agent.yml"), []byte(a), 0o644)
		r.start(t, "agent", nil, prom, "--enable-feature=agent", "--config.file="+filepath.Join(rdir, "agent.yml"),
			"--storage.agent.path="+filepath.Join(rdir, "wal"), "--web.listen-address="+r.robotIP+":9090")
	}
	t0 := time.Now()
	defer func() {
		if t.Failed() {
			for _, f := range []string{"central.log", "a/agent.log", "a/export.log", "b/agent.log", "c/agent.log"} {
				b, _ := os.ReadFile(filepath.Join(dir, f))
				t.Logf("%s (last 2000 bytes):\n%s", f, b[max(0, len(b)-2000):])
			}
		}
	}()

	// Every robot's samples reach the central server. A loaded machine may
	// take seconds to open the central server's port: ask it only once it
	// says it is ready (a query before that is refused, not answered).
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Second) {
		n := -1
		if promReady(central) {
			n = len(promQuery(t, central, `count by (robot) (ros2_pulse_build_info)`))
		}
		if n == 3 {
			break
		} else if time.Now().After(deadline) {
			if n < 0 {
				t.Fatalf("after 60 s the central server is not ready")
			}
			t.Fatalf("after 60 s the central server has samples of %d robots", n)
		}
	}

	// Robot a loses its link for 60 s (its end of the veth pair, in the
	// host, goes down); its agent keeps scraping into its WAL.
	time.Sleep(time.Until(t0.Add(20 * time.Second)))
	a := robots["a"]
	before := a.agentScrapes(t)
	tDown := time.Now()
	mustRun(t, "ip", "link", "set", a.hostIf, "down")
	time.Sleep(60 * time.Second)
	scrapes := a.agentScrapes(t) - before // read inside its namespace, just before the link is back (±1 scrape)
	tUp := time.Now()
	mustRun(t, "ip", "link", "set", a.hostIf, "up")

	// Robot a's exporter restarts: a reader, not a counter, restarts.
	time.Sleep(10 * time.Second)
	tStop := time.Now()
	stopProc(a.procs["export"])
	a.start(t, "export2", []string{"ROS_PULSE_DIR=" + a.segs}, pulse, "export", "--listen", "127.0.0.1:9464", "--period", "1s")
	tRestart := time.Now()
	// How long the exporter was away: until the new one answers (a loaded
	// machine starts it slowly); the agent's scrapes then go unanswered.
	probe := "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9464/metrics', timeout=2).read()"
	for deadline := time.Now().Add(60 * time.Second); exec.Command("ip", "netns", "exec", a.ns, "python3", "-c", probe).Run() != nil; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("robot a's restarted exporter did not answer in 60 s")
		}
	}
	away := time.Since(tStop)

	// The agent replays its WAL: the gap fills in, sample for sample.
	gap := fmt.Sprintf("%ds", int(tUp.Sub(tDown).Seconds()))
	var got float64
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(2 * time.Second) {
		if r := promQueryAt(t, central, `count_over_time(ros2_pulse_messages_total{robot="a",topic="/odom",side="pub"}[`+gap+`])`, tUp); len(r) == 1 {
			if got = sampleValue(r[0].Value); got >= scrapes-1 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("2 min after the link came back, the central server holds %v samples of robot a over the %s gap; its agent scraped %v times", got, gap, scrapes)
		}
	}
	if math.Abs(got-scrapes) > 1 {
		t.Errorf("lost link: %v samples over the %s gap in central, the agent scraped %v times", got, gap, scrapes)
	}
	// Over the gap, the rates are the graph's, and the exporter answered every scrape.
	// (rateAgrees: rate() extrapolates from the scrapes inside its range, whose ends are not the graph's.)
	gapSecs := float64(int(tUp.Sub(tDown).Seconds()))
	did := a.truth.rates(tUp.Add(-time.Duration(gapSecs)*time.Second), tUp)["/odom"]
	if r := promQueryAt(t, central, `sum(rate(ros2_pulse_messages_total{robot="a",topic="/odom",side="pub"}[`+gap+`]))`, tUp); len(r) != 1 ||
		!rateAgrees(sampleValue(r[0].Value), did, gapSecs) {
		t.Errorf("robot a's /odom over the gap: %v, the graph published %.3f Hz", r, did)
	}
	if r := promQueryAt(t, central, `min_over_time(up{robot="a"}[`+gap+`])`, tUp); len(r) != 1 || sampleValue(r[0].Value) != 1 {
		t.Errorf("robot a's exporter missed a scrape during the gap: min(up) = %v", r)
	}
	t.Logf("lost link: %s down, %v scrapes by the agent, %v samples in central", gap, scrapes, got)

	// The alerts: b's stall, c's node, nothing of a. Wait until they fire.
	type alert struct{ name, robot, detail string }
	var firing []alert
	for deadline := t0.Add(240 * time.Second); ; time.Sleep(2 * time.Second) {
		firing = nil
		for _, s := range promQuery(t, central, `ALERTS{alertstate="firing"}`) {
			firing = append(firing, alert{s.Metric["alertname"], s.Metric["robot"], s.Metric["topic"] + s.Metric["node"] + " " + s.Metric["side"]})
		}
		var stallB, downC bool
		for _, f := range firing {
			stallB = stallB || f.name == "Ros2TopicStalled" && f.robot == "b"
			downC = downC || f.name == "Ros2NodeDown" && f.robot == "c"
		}
		if stallB && downC && time.Since(tRestart) > 45*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v after the start, firing: %+v (want a stall on b and a node down on c)", time.Since(t0).Round(time.Second), firing)
		}
	}
	for _, f := range firing {
		switch {
		case f.name == "Ros2TopicStalled" && f.robot == "b" && strings.HasPrefix(f.detail, "/scan "):
		case f.name == "Ros2NodeDown" && f.robot == "c" && strings.HasPrefix(f.detail, "/doomed"):
		default:
			t.Errorf("unexpected alert %+v (firing: %+v)", f, firing)
		}
	}

	// Each robot's rates in central over the minute around a's exporter
	// restart are what its graph did (its own counts over that minute), within
	// max(2 %, one message). That minute ended 15 s ago or
	// more, so every sample of it has arrived (rate() extrapolates less when
	// the newest samples are still on their way).
	tEval := tRestart.Add(30 * time.Second)
	for name, r := range robots {
		did := r.truth.rates(tEval.Add(-60*time.Second), tEval)
		rates := map[string]float64{}
		for _, s := range promQueryAt(t, central, `sum by (topic) (rate(ros2_pulse_messages_total{robot="`+name+`",side="pub",transport="inter"}[60s]))`, tEval) {
			rates[s.Metric["topic"]] = sampleValue(s.Value)
		}
		for _, topic := range []string{"/odom", "/tf", "/cmd_vel", "/camera/detections", "/scan"} {
			if !rateAgrees(rates[topic], did[topic], 60) {
				t.Errorf("robot %s %s: %.3f Hz in central, %.3f Hz by its graph's own counts", name, topic, rates[topic], did[topic])
			}
		}
		if name == "b" && did["/scan"] != 0 {
			t.Errorf("robot b's /scan should be stalled by then: its graph published %.3f Hz", did["/scan"])
		}
	}
	// Nothing of robot a was lost at all: every scrape its agent made, link
	// loss and exporter restart included, is one sample of up and one of
	// each counter in central (read after the last batch had time to arrive).
	tEnd := time.Now()
	total := a.agentScrapes(t)
	time.Sleep(8 * time.Second)
	count := func(q string) float64 {
		r := promQueryAt(t, central, q, tEnd)
		if len(r) != 1 {
			t.Fatalf("%s: %v", q, r)
		}
		return sampleValue(r[0].Value)
	}
	ups, answered := count(`count_over_time(up{robot="a"}[10m])`), count(`sum_over_time(up{robot="a"}[10m])`)
	odom := count(`count_over_time(ros2_pulse_messages_total{robot="a",topic="/odom",side="pub"}[10m])`)
	// Scrapes the exporter could not answer (while it restarted) have an up
	// of 0 and no counters: at most one a scrape interval (2 s) it was away, and one more.
	if math.Abs(ups-total) > 1 || math.Abs(odom-answered) > 1 || total-answered > math.Ceil(away.Seconds()/2)+1 {
		t.Errorf("robot a: its agent scraped %v times; central holds %v samples of up, %v of them answered, and %v of /odom's counter (the exporter was away %v)",
			total, ups, answered, odom, away.Round(100*time.Millisecond))
	}
	t.Logf("fleet: %v in all; robot a: %v scrapes, all in central; firing at the end: %+v", time.Since(t0).Round(time.Second), total, firing)
}
