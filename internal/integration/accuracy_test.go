package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/simtruth"
	"ros2_pulse/internal/window"
)

// demoExpect is sim/graphs/demo.graph as the probe must see it: the topics
// and which of their buckets carry traffic (at the graph's nominal rates).
// Humble has no intra-process publish tracepoint, so its intra publish side
// is not measured there.
// /cmd_vel has a C++ and an rclpy subscriber (counted at rmw_take): 2 x 20 Hz.
func demoExpect(distro string) map[string]expect {
	intra := intraSeen(distro, 30)
	return map[string]expect{
		"/scan":              {pubInter: 10, recvInter: 10},
		"/camera/image":      {pubIntra: intra, recvIntra: 30},
		"/camera/detections": {pubInter: 30, pubIntra: intra, recvInter: 30},
		"/cmd_vel":           {pubInter: 20, recvInter: 40},
		"/odom":              {pubInter: 50, recvInter: 50},
		"/tf":                {pubInter: 50},
	}
}

func stressExpect(distro string) map[string]expect {
	m := map[string]expect{}
	for i := 0; i < 30; i++ {
		m[fmt.Sprintf("/light_%d", i)] = expect{pubInter: 100, recvInter: 100}
	}
	for i := 0; i < 8; i++ {
		m[fmt.Sprintf("/heavy_%d", i)] = expect{pubInter: 50, recvInter: 50}
	}
	intra := intraSeen(distro, 100)
	for i := 0; i < 15; i++ {
		m[fmt.Sprintf("/intra_%d", i)] = expect{pubIntra: intra, recvIntra: 100}
	}
	return m
}

// intraSeen is an intra-process publish rate as the probe can see it: none
// on Humble, whose rclcpp fires no tracepoint for it.
func intraSeen(distro string, hz float64) float64 {
	if distro == "humble" {
		return 0
	}
	return hz
}

// accuracy runs a graph for duration with windows of period and judges
// pulse against what the graph really did (truth_test.go), never against
// nominal rate x time: every window, the first and the exit sliver included,
// to the message around its scans, and every total exactly. want names the
// topics judged; the graph must have made each of them, with traffic in every
// bucket want gives a rate for (the rates themselves are the graph's business:
// a loaded machine really skips timer periods). On Humble, rclcpp's
// intra-process publishes fire no tracepoint: they must read as not measured.
func accuracy(t *testing.T, graphName, distro string, period, duration time.Duration, want map[string]expect) {
	bad := runAccuracy(t, graphName, distro, period, duration, want)
	for i, p := range bad {
		if i == 20 {
			t.Errorf("... and %d more", len(bad)-i)
			break
		}
		t.Error(p)
	}
}

// runAccuracy runs the graph under the probe (env may replace it) and
// returns every problem accuracyProblems finds.
func runAccuracy(t *testing.T, graphName, distro string, period, duration time.Duration, want map[string]expect, env ...string) []string {
	g := sim(t, graphName, distro, duration, env...)
	rec := newRecorder(t, g.dir, period, window.Options{})
	ws := record(t, g, rec, period)
	g.wait()
	if len(ws) < 3 {
		t.Fatalf("only %d windows", len(ws))
	}
	return accuracyProblems(t, g, ws, want)
}

// accuracyProblems lists every way pulse's windows and totals differ from
// what the graph did, and every expected topic the graph did not make.
func accuracyProblems(t *testing.T, g *graph, ws []*window.Window, want map[string]expect) []string {
	final := scan(t, g.dir)
	truth := g.truth()
	distros := distrosOf(final)
	bad := judgeWindows(ws, g.brackets, distros, topicsOf(want))
	bad = append(bad, judgeTotals(final, truth, 0)...)
	for node := range starvedIn(ws) { // no healthy subscription is ever called starved
		bad = append(bad, fmt.Sprintf("%s was called starved", node))
	}
	// The graph made the traffic the expectation names, and what a distro
	// cannot see reads as not measured.
	last := ws[len(ws)-2] // the last complete window
	for _, name := range topicsOf(want) {
		e := want[name]
		var pubInter, pubIntra, recvInter, recvIntra uint64
		for k, c := range truth.Counts {
			if k.Topic != name {
				continue
			}
			switch k.Kind {
			case "pub":
				pubInter += c[simtruth.PubInter]
				pubIntra += c[simtruth.PubIntra]
			case "sub":
				recvInter += c[simtruth.SubInter]
				recvIntra += c[simtruth.SubIntra]
			}
		}
		for _, c := range []struct {
			what    string
			nominal float64
			did     uint64
		}{{"pub inter", e.pubInter, pubInter}, {"pub intra", e.pubIntra, pubIntra}, {"recv inter", e.recvInter, recvInter}, {"recv intra", e.recvIntra, recvIntra}} {
			if (c.nominal > 0) != (c.did > 0) && !(c.what == "pub intra" && c.did > 0) {
				bad = append(bad, fmt.Sprintf("%s %s: the graph did %d, the expectation says %.0f Hz", name, c.what, c.did, c.nominal))
			}
		}
		tp := last.Topic(name)
		if tp == nil {
			bad = append(bad, fmt.Sprintf("%s: missing from the last complete window", name))
			continue
		}
		// Hidden: a publisher's own process delivers the topic intra-process
		// on a distro without the intra publish tracepoint (design note 0002).
		// The truth is the whole run's, so is the probe's view: the topic is
		// hidden in some window, the final one included (under emulation a
		// starved intra-process subscription may deliver its first message
		// only after the last complete window).
		hidden := false
		for k, c := range truth.Counts {
			if k.Kind == "sub" && k.Topic == name && c[simtruth.SubIntra] > 0 && !window.IntraPublishVisible(distros[k.Pid]) {
				hidden = true
			}
		}
		seenHidden := false
		for _, w := range ws {
			if wt := w.Topic(name); wt != nil && wt.PubHidden {
				seenHidden = true
			}
		}
		if seenHidden != hidden {
			bad = append(bad, fmt.Sprintf("%s: PubHidden in some window %v, want %v", name, seenHidden, hidden))
		}
	}
	return bad
}

func TestAccuracyDemoJazzy(t *testing.T) {
	accuracy(t, "demo", "jazzy", 2*time.Second, 12*time.Second, demoExpect("jazzy"))
}

func TestAccuracyDemoHumble(t *testing.T) {
	accuracy(t, "demo", "humble", 2*time.Second, 12*time.Second, demoExpect("humble"))
}

// With callback timing off and gap tracking on, a publish made from a
// callback is named in the hint of the endpoint its thread fetched early
// (design note 0003), rclcpp and rclpy alike: hints only, so every count
// stays exact.
func TestAccuracyDemoUntimedWithGaps(t *testing.T) {
	for _, distro := range []string{"jazzy", "humble"} {
		t.Run(distro, func(t *testing.T) {
			bad := runAccuracy(t, "demo", distro, 2*time.Second, 8*time.Second, demoExpect(distro),
				"ROS_PULSE_TIMING=0", "ROS_TOPIC_STATS_JITTER=1")
			for _, p := range bad {
				t.Error(p)
			}
		})
	}
}

// Accuracy tests run one at a time: on a shared 2-vCPU machine any other
// load turns into scheduling latency. The stress farm uses 3 s windows: on a shared 2-vCPU machine
// a 25 ms steal of the publisher's CPU shifts 2.5 messages at 100 Hz across
// a window boundary, and 1 % of a 3 s window is 3 messages.
func TestAccuracyStressJazzy(t *testing.T) {
	accuracy(t, "stress", "jazzy", 3*time.Second, 10*time.Second, stressExpect("jazzy"))
}

func TestAccuracyStressHumble(t *testing.T) {
	accuracy(t, "stress", "humble", 3*time.Second, 10*time.Second, stressExpect("humble"))
}

// robotExpect is a few of sim/graphs/robot.graph's topics, one of each
// kind: an intra-process chain inside a container, a topic published intra
// and inter at once, one of 50 Hz with a dozen subscribers in other
// processes, /diagnostics from every node (rclpy's too), and an rclpy
// publisher nobody hears. Every other topic is judged by its totals.
func robotExpect(distro string) map[string]expect {
	intra := intraSeen(distro, 10)
	return map[string]expect{
		"/sensing/lidar/top/pointcloud_raw_ex":   {pubIntra: intra, recvIntra: 10},
		"/sensing/lidar/concatenated/pointcloud": {pubInter: 10, pubIntra: intra, recvInter: 30, recvIntra: 10},
		"/localization/kinematic_state":          {pubInter: 50, recvInter: 500},
		"/diagnostics":                           {pubInter: 157, recvInter: 157},
		"/tf":                                    {pubInter: 50, recvInter: 850},
		"/api/vehicle/kinematics":                {pubInter: 10},
	}
}

// The Autoware-shaped robot (issue 46: 157 nodes in 24 processes, ~600
// topics): every endpoint's total exact, every window of the topics above.
func TestAccuracyRobotJazzy(t *testing.T) {
	accuracy(t, "robot", "jazzy", 3*time.Second, 12*time.Second, robotExpect("jazzy"))
}

func TestAccuracyRobotHumble(t *testing.T) {
	accuracy(t, "robot", "humble", 3*time.Second, 12*time.Second, robotExpect("humble"))
}

// The tests' own test: a probe that loses one count in 100 (make's fault
// probe, built with RP_FAULT_DROP_EVERY=100, never shipped) must fail the
// accuracy judgement, on an idle machine and a busy one alike: the totals
// fall short of what the graph did.
func TestAccuracyCatchesALossyProbe(t *testing.T) {
	fault := filepath.Join(buildDir(t), "lib/fault/libros2_pulse.so")
	if _, err := os.Stat(fault); err != nil {
		t.Fatalf("the fault probe is missing (make probe builds it): %v", err)
	}
	bad := runAccuracy(t, "demo", "jazzy", 2*time.Second, 6*time.Second, demoExpect("jazzy"), "LD_PRELOAD="+fault)
	short := 0
	for _, p := range bad {
		if strings.Contains(p, "must be equal") {
			short++
		}
	}
	if short == 0 {
		t.Fatalf("a probe that loses 1 %% of its counts passed the accuracy judgement (%d other problems: %q)", len(bad), bad)
	}
	t.Logf("the lossy probe fails with %d problems, %d of them totals; first: %s", len(bad), short, bad[0])
}
