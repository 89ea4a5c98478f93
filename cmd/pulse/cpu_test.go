package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"ros2_pulse/internal/segment"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// pulse cpu agrees with /proc over 10 s for a simgraph process that burns a
// known share of a core, names it by its node, finds an unprobed ROS process
// by its __node:= remap, and --summary reads its own CSV back.
func TestCPUAgreesWithProc(t *testing.T) {
	dir := t.TempDir()
	graphPath, csvPath := filepath.Join(dir, "burn.graph"), filepath.Join(dir, "cpu.csv")
	os.WriteFile(graphPath, []byte("process burner burn=0.3\n  node /burner\n    pub /heartbeat 10\n"), 0o600)
	graph, segs := startGraph(t, dir, graphPath, "14")
	defer graph.Wait()
	py := exec.Command("python3", "-c", "import time\nwhile True: time.sleep(0.2)", "--ros-args", "-r", "__node:=py_sleeper")
	if err := py.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { py.Process.Kill(); py.Wait() }()

	// Wait for the graph's node (its segment), at most 15 s, not for the clock.
	for deadline := time.Now().Add(15 * time.Second); len(segmentFiles(segs)) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the burner graph made no segment in 15 s")
		}
	}
	cmd := pulseCmd(t, "cpu", "--period", "1s", "--duration", "10.5s", "--out", csvPath)
	cmd.Env = append(cmd.Env, "ROS_PULSE_DIR="+segs)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Our own /proc reading of the burner over the same span.
	fs, _ := procfs.NewFS("/proc")
	var pid int
	var cpu0 float64
	t0 := time.Now()
	for pid == 0 && time.Since(t0) < 10*time.Second {
		time.Sleep(200 * time.Millisecond)
		pid = burnerPid(t, csvPath)
	}
	if pid == 0 {
		cmd.Wait()
		b, _ := os.ReadFile(csvPath)
		t.Fatalf("no /burner row:\n%s", b)
	}
	if p, err := fs.Proc(pid); err == nil {
		st, _ := p.Stat()
		cpu0, t0 = st.CPUTime(), time.Now()
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pulse cpu: %v", err)
	}
	p, _ := fs.Proc(pid)
	st, err := p.Stat()
	if err != nil {
		t.Fatal(err)
	}
	procPct := 100 * (st.CPUTime() - cpu0) / time.Since(t0).Seconds()

	f, _ := os.Open(csvPath)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	n, sawPy := 0, false
	for _, r := range rows[1:] {
		if r[4] == "/py_sleeper" {
			sawPy = true
		}
		if r[4] == "/burner" {
			v, _ := strconv.ParseFloat(r[6], 64)
			sum += v
			n++
		}
	}
	if n < 8 {
		t.Fatalf("%d samples of /burner over 10 s", n)
	}
	mean := sum / float64(n)
	t.Logf("pulse cpu %.2f %% over %d samples; /proc %.2f %%", mean, n, procPct)
	if math.Abs(mean-procPct) > 0.05*procPct {
		t.Errorf("pulse cpu says %.2f %%, /proc %.2f %%: more than 5 %% apart", mean, procPct)
	}
	// /proc is the truth: the burner aims at 30 % of a core, but a loaded
	// machine gives it what it gives it. It must have burnt something.
	if procPct < 1 {
		t.Errorf("the burner burnt %.2f %% of a core: the graph did not run", procPct)
	}
	if !sawPy {
		t.Errorf("the unprobed process with __node:=py_sleeper was not sampled")
	}
	var out bytes.Buffer
	sum2 := pulseCmd(t, "cpu", "--summary", csvPath)
	sum2.Stdout = &out
	if err := sum2.Run(); err != nil || !strings.Contains(out.String(), "/burner") || !strings.Contains(out.String(), "median %") {
		t.Errorf("--summary: %v\n%s", err, out.String())
	}
}

// segmentFiles lists the segments a graph made in dir.
func segmentFiles(dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, "*", "*"+segment.Suffix))
	n, _ := filepath.Glob(filepath.Join(dir, "*"+segment.Suffix))
	return append(m, n...)
}

func burnerPid(t *testing.T, path string) int {
	b, _ := os.ReadFile(path)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ",")
		if len(f) > 4 && f[4] == "/burner" {
			pid, _ := strconv.Atoi(f[2])
			return pid
		}
	}
	return 0
}

// Nodes started under timeout, nice and env: pulse cpu weighs the node and
// names it, never the wrapper (timeout stays as the node's parent, with the
// node's arguments on its own command line).
func TestCPUNamesTheNodeUnderWrappers(t *testing.T) {
	var procs []*exec.Cmd
	start := func(argv ...string) {
		c := exec.Command(argv[0], argv[1:]...)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // timeout's child outlives a killed timeout: kill the group
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, c)
	}
	defer func() {
		for _, c := range procs {
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			c.Wait()
		}
	}()
	loop := "import time\nwhile True: time.sleep(0.2)"
	// pulse cpu weighs every process of the machine: names of this test's
	// own (another test binary or clone may run the same test at once).
	tag := fmt.Sprint(os.Getpid())
	start("timeout", "60", "python3", "-c", loop, "--ros-args", "-r", "__node:=under_timeout_"+tag)
	start("nice", "-n", "5", "python3", "-c", loop, "--ros-args", "-r", "__node:=under_nice_"+tag)
	start("env", "ROS_DOMAIN_ID=7", "python3", "-c", loop, "--ros-args", "-r", "__node:=under_env_"+tag)
	start("timeout", "60", "nice", "-n", "3", "env", "A=1", "python3", "-c", loop, "--ros-args", "-r", "__node:=under_all_"+tag)
	// Sample until every node has been sampled (a loaded machine starts
	// four pythons slowly), at most 30 s; then judge the last sampling.
	nodes := []string{"/under_timeout_" + tag, "/under_nice_" + tag, "/under_env_" + tag, "/under_all_" + tag}
	var out []byte
	var pids map[string]map[string]bool // node -> pids it was sampled under
	for deadline := time.Now().Add(30 * time.Second); ; {
		var err error
		out, err = pulseCmd(t, "cpu", "--period", "200ms", "--duration", "700ms").Output()
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		pids = map[string]map[string]bool{}
		for _, r := range rows[1:] {
			if pids[r[4]] == nil {
				pids[r[4]] = map[string]bool{}
			}
			pids[r[4]][r[2]] = true
		}
		var missing []string
		for _, node := range nodes {
			if len(pids[node]) == 0 {
				missing = append(missing, node)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never sampled in 30 s: %v\n%s", missing, out)
		}
	}
	for _, node := range nodes {
		if len(pids[node]) != 1 {
			t.Errorf("%s sampled under pids %v, want exactly one (the node's own)", node, pids[node])
		}
	}
	for name := range pids {
		if name == "timeout" || name == "nice" || name == "env" || name == "python3" {
			t.Errorf("a wrapper was weighed as a node: %q\n%s", name, out)
		}
	}
	// The one pid is the python process itself, not its timeout parent.
	for pid := range pids["/under_timeout_"+tag] {
		cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		if argv0, _, _ := strings.Cut(string(cmdline), "\x00"); !strings.HasPrefix(filepath.Base(argv0), "python3") {
			t.Errorf("/under_timeout was sampled as pid %s: %q", pid, cmdline)
		}
	}
}

// The cost of a wake-up, read off pulse cpu as the seed study had to measure
// it by hand: an rclpy node that burns a known share of a core while its
// timer fires at 10 Hz and its subscription takes 100 messages a second.
// The wake-ups pulse counts in each sample equal what the graph did between
// them (its own counts, read around the run), and --summary's CPU ms per
// wake-up is the process's CPU (/proc) over those wake-ups.
func TestCPUCostPerWakeup(t *testing.T) {
	dir := t.TempDir()
	graphPath, csvPath := filepath.Join(dir, "wake.graph"), filepath.Join(dir, "cpu.csv")
	os.WriteFile(graphPath, []byte("process burner burn=0.2\n  node /burner lang=py\n    pub /heartbeat 10\n    sub /ticks\n"+
		"process ticker\n  node /ticker\n    pub /ticks 100 thread\n"), 0o600)
	graph, segs := startGraph(t, dir, graphPath, "10")
	for deadline := time.Now().Add(15 * time.Second); len(segmentFiles(segs)) < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the graph made no segments in 15 s")
		}
	}
	cmd := pulseCmd(t, "cpu", "--period", "1s", "--duration", "6.5s", "--out", csvPath, "--probed-only")
	cmd.Env = append(cmd.Env, "ROS_PULSE_DIR="+segs)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pulse cpu: %v\n%s", err, out)
	}
	graph.Wait()
	f, _ := os.Open(csvPath)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) < 2 || len(rows[0]) != 12 || rows[0][11] != "wakeups" {
		t.Fatalf("CSV: %v %v", err, rows)
	}
	var wakeups, cpuSec, seconds float64
	last := 0.0
	for _, r := range rows[1:] {
		if r[4] != "/burner" || r[11] == "" {
			continue
		}
		n, _ := strconv.ParseFloat(r[11], 64)
		el, _ := strconv.ParseFloat(r[1], 64)
		pct, _ := strconv.ParseFloat(r[6], 64)
		if last > 0 {
			wakeups += n
			cpuSec += pct / 100 * (el - last)
			seconds += el - last
		}
		last = el
	}
	if seconds < 4 {
		t.Fatalf("%.1f s of /burner rows with wake-ups", seconds)
	}
	// What the graph did per second: 10 timer fires and every /ticks message it took.
	truth := readTruth(t, filepath.Join(dir, "truth"))
	var did, life float64
	for k, c := range truth.Counts {
		if k.Node == "/burner" && (k.Kind == "timer" || k.Kind == "sub") {
			did += float64(c[0])
		}
	}
	life = 10 // the graph's --duration
	hz, graphHz := wakeups/seconds, did/life
	t.Logf("/burner: %.1f wake-ups/s by pulse, %.1f by the graph; %.3f ms of CPU per wake-up", hz, graphHz, cpuSec*1e3/wakeups)
	if math.Abs(hz-graphHz) > 0.05*graphHz {
		t.Errorf("pulse counts %.1f wake-ups/s, the graph made %.1f", hz, graphHz)
	}
	var out bytes.Buffer
	sum := pulseCmd(t, "cpu", "--summary", csvPath)
	sum.Stdout = &out
	if err := sum.Run(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%.3f", cpuSec*1e3/wakeups)
	if !strings.Contains(out.String(), "CPU ms/wake-up") || !strings.Contains(out.String(), want) {
		t.Errorf("--summary does not show /burner's %s ms per wake-up:\n%s", want, out.String())
	}
}
