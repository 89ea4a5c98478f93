package realros

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"ros2_pulse/internal/graphfile"
)

func robotGraph(t *testing.T) *graphfile.Graph {
	t.Helper()
	g, err := graphfile.ReadFile("../../sim/graphs/robot.graph")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// robotRate scales every rate of g by PULSE_ROBOT_RATE (0 < rate ≤ 1; 1 when
// unset): the same endpoints, which are what the reader's cost follows, at
// a fraction of the traffic, so a two-core machine is not saturated by the
// robot it reads (a robot's computer has more cores than this VM).
func robotRate(t *testing.T, g *graphfile.Graph) {
	v := os.Getenv("PULSE_ROBOT_RATE")
	if v == "" {
		return
	}
	r, err := strconv.ParseFloat(v, 64)
	if err != nil || !(r > 0 && r <= 1) {
		t.Fatalf("PULSE_ROBOT_RATE=%q: want a number in (0, 1]", v)
	}
	for _, p := range g.Procs {
		for i := range p.Nodes {
			n := &p.Nodes[i]
			for j := range n.Pubs {
				n.Pubs[j].Hz *= r
			}
			for j := range n.Timers {
				n.Timers[j].Hz *= r
			}
			for j := range n.Clients {
				n.Clients[j].Hz *= r
			}
			for j := range n.ActionCalls {
				n.ActionCalls[j].Hz *= r
			}
		}
	}
	t.Logf("the robot's rates scaled by %g", r)
}

// The robot as real processes keeps its shape: every node once, in the
// process of its container, rclpy's apart, sizes capped.
func TestGraphProcs(t *testing.T) {
	procs := GraphProcs(robotGraph(t), 4096)
	nodes, py, pubs := 0, 0, 0
	for _, p := range procs {
		for i, a := range p.Args {
			switch a {
			case "--node":
				nodes++
				if p.Lang == "py" {
					py++
				}
			case "--pub":
				pubs++
				f := strings.Split(p.Args[i+1], ",")
				if n, err := strconv.Atoi(f[len(f)-1]); len(f) != 3 || err != nil || n > 4096 || n <= 0 {
					t.Errorf("%s: publisher %q not capped at 4096 bytes", p.Name, p.Args[i+1])
				}
			}
		}
	}
	if len(procs) != 24 || nodes != 157 || py != 36 || pubs != 749 {
		t.Fatalf("%d processes, %d nodes (%d rclpy), %d publishers", len(procs), nodes, py, pubs)
	}
	if first := strings.Join(procs[0].Args, " "); procs[0].Name != "lidar_top" || !procs[0].Intra ||
		!strings.HasPrefix(first, "--intra --multi 2 --node /sensing/lidar/top/velodyne_driver --pub ") {
		t.Errorf("first process: %+v", procs[0])
	}
}

// TestRobotShape: the robot stand-in's shape as real ROS 2 processes (24
// processes, 157 nodes, ~600 topics): every subscription's count, and every
// publisher's where its distro fires a tracepoint, equals the node's own;
// and what pulse record costs a window at that size on real nodes.
func TestRobotShape(t *testing.T) {
	l := setup(t)
	r := l.newRun(t)
	g := robotGraph(t)
	robotRate(t, g)
	procs := GraphProcs(g, 4096)
	live := map[string]*proc{}
	for _, np := range procs {
		live[np.Name] = r.node(np.Name, np.Lang, "", append(np.Args, "--duration", "50")...)
	}
	time.Sleep(8 * time.Second) // 24 participants discover each other
	// pulse record beside it: its CPU a window once it has mapped every
	// segment (from its 5th window to its 25th).
	log := filepath.Join(t.TempDir(), "robot.log")
	args := []string{"record", "--period", "1s", "--duration", "28s", "--out", log}
	if prof := os.Getenv("PULSE_ROBOT_CPUPROFILE"); prof != "" { // where record's time goes
		args = append(args, "--cpuprofile", prof)
	}
	rec := r.pulseCmd(args...)
	var recOut bytes.Buffer
	rec.Stdout, rec.Stderr = &recOut, &recOut
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	cpu0, err := cpuSeconds(rec.Process.Pid)
	// The reading alone, phase by phase (scan, window, text), beside it,
	// once the graph has settled: each change of it (a process, an
	// endpoint, a first message) makes the why-silent diagnosis run again,
	// ~50 ms at this size.
	sampleArgs := []string{"bench", "reader-sample", "--phases", "--each", "--settled-from", "10", "--interval", "1s", "--samples", "25", "--dir", r.dir}
	if prof := os.Getenv("PULSE_ROBOT_CPUPROFILE"); prof != "" { // where the reading alone goes
		sampleArgs = append(sampleArgs, "--cpuprofile", prof+".reader")
	}
	phases := r.pulseCmd(sampleArgs...)
	var phaseOut bytes.Buffer
	phases.Stdout, phases.Stderr = &phaseOut, &phaseOut
	if err := phases.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Second)
	cpu1, err1 := cpuSeconds(rec.Process.Pid)
	if keep := os.Getenv("PULSE_ROBOT_KEEP"); keep != "" { // the robot's segments a second apart, to read offline
		for _, at := range []string{"a", "b"} {
			if err := os.CopyFS(filepath.Join(keep, at), os.DirFS(r.dir)); err != nil {
				t.Errorf("PULSE_ROBOT_KEEP: %v", err)
			}
			time.Sleep(time.Second)
		}
	}
	if err := rec.Wait(); err != nil {
		t.Fatalf("pulse record: %v\n%s", err, recOut.String())
	}
	if err := phases.Wait(); err != nil {
		t.Errorf("pulse bench reader-sample: %v\n%s", err, phaseOut.String())
	}
	r.waitAll(90 * time.Second)
	var all tally
	zero, notJudged := 0, 0
	for _, np := range procs {
		p := live[np.Name]
		tr := r.truth(p)
		s := r.scan()
		for i := range tr.Endpoints {
			e := &tr.Endpoints[i]
			if e.Kind != "publisher" && e.Kind != "subscription" {
				continue
			}
			if e.Count == 0 {
				zero++ // a topic no node here publishes: nothing to compare
				continue
			}
			// Humble fires no tracepoint for an intra-process publish: its
			// publishers in intra processes are not judged (their
			// subscriptions are).
			if e.Kind == "publisher" && np.Intra && l.humble() {
				notJudged++
				continue
			}
			f := lookup(s, tr.Pid, e)
			got := f.counts[0] + f.counts[1]
			if e.Kind == "publisher" {
				got = max(f.counts[0], f.counts[1])
			}
			if got != e.Count {
				t.Errorf("%s %s %s of %s: pulse counts %d (inter %d, intra %d), the node %d",
					np.Name, e.Kind, e.Name, e.Node, got, f.counts[0], f.counts[1], e.Count)
			}
			all.add(tally{1, got, e.Count})
		}
	}
	if all.n+notJudged < 900 { // ~990 publishers and subscriptions count something in 40 s
		t.Errorf("%d endpoints judged, %d not (Humble's intra-process publishers), %d counted nothing: the robot did not run",
			all.n, notJudged, zero)
	}
	all.row(t, "topic counts: the robot's shape, 24 processes, 157 nodes")
	data, _ := os.ReadFile(log)
	windows := strings.Count(string(data), "# ts_ns=")
	if err == nil && err1 == nil {
		t.Logf("pulse record on the real robot: %.1f ms of CPU a window (20 windows), %d kB a window of text",
			(cpu1-cpu0)/20*1000, len(data)/max(windows, 1)/1000)
	}
	// Settled (its last line): from the 10th sample on (23 s after the
	// launch), when the graph no longer changes and the why-silent diagnosis
	// has stopped running again; the earlier samples pay for the robot coming up.
	t.Logf("reading the real robot a window (ms; each sample, the mean,SEM of 24, the settled reading of samples 10-24):\n%s",
		strings.TrimSpace(phaseOut.String()))
}

// cpuSeconds is a process's user and system CPU so far.
func cpuSeconds(pid int) (float64, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	st, err := p.Stat()
	if err != nil {
		return 0, err
	}
	return st.CPUTime(), nil
}
