package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"ros2_pulse/internal/cpu"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/simtruth"
	"ros2_pulse/internal/window"
)

// container is one simgraph run in namespaces of its own, as a container
// runs it without an image: unshare(1) gives it a mount namespace (and,
// with pidNS, a PID namespace whose init is simgraph), in which the host's
// segment directory is bind-mounted at a path of its own.
type container struct {
	cmd      *exec.Cmd
	done     chan error
	truthDir string
	stderr   bytes.Buffer
}

// unshareArgs: as root, unshare itself; otherwise inside a user namespace of
// our own (root there), which Debian allows unprivileged users.
func unshareArgs(ns ...string) []string {
	args := []string{"unshare"}
	if os.Geteuid() != 0 {
		args = append(args, "--user", "--map-root-user")
	}
	return append(args, ns...)
}

func startContainer(t *testing.T, segDir, graphText string, pidNS bool, duration time.Duration) *container {
	t.Helper()
	b := buildDir(t)
	file := filepath.Join(t.TempDir(), "c.graph")
	if err := os.WriteFile(file, []byte(graphText), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "ct") // simgraph's sockets: a short path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	mnt := t.TempDir() // the container's own path of the segment directory
	c := &container{truthDir: t.TempDir(), done: make(chan error, 1)}
	ns := []string{"--mount", "--propagation", "private"}
	if pidNS {
		ns = append(ns, "--pid", "--fork", "--mount-proc")
	}
	args := append(unshareArgs(ns...), "sh", "-c", `mount --bind "$1" "$2" && shift 2 && exec "$@"`, "sh", segDir, mnt,
		filepath.Join(b, "bin/simgraph"), "--graph", file, "--duration", fmt.Sprint(duration.Seconds()), "--truth", c.truthDir)
	c.cmd = exec.Command(args[0], args[1:]...)
	c.cmd.Env = append(os.Environ(),
		"LD_PRELOAD="+filepath.Join(b, "lib/libros2_pulse.so"),
		"LD_LIBRARY_PATH="+filepath.Join(b, "lib/sim/jazzy"),
		"ROS_PULSE_DIR="+mnt, "ROS_TOPIC_STATS_QUIET=1", "TMPDIR="+tmp)
	c.cmd.Stderr = &c.stderr
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
			<-c.done
		}
	})
	return c
}

func (c *container) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("container: %v\n%s", err, c.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("container did not exit")
	}
}

// containerGraph is a talker and a listener in two processes, its names prefixed.
func containerGraph(p string) string {
	return fmt.Sprintf("process talker\n  node /%s_talker\n    pub /%s/chatter 100\n    timer 20\nprocess listener\n  node /%s_listener\n    sub /%s/chatter\n", p, p, p, p)
}

// of keeps the snapshots whose nodes are the container's (prefix), each as
// the container sees itself: its own pid, as its truth is keyed.
func of(scan *segment.Scan, prefix string) *segment.Scan {
	out := &segment.Scan{}
	for _, s := range scan.Snapshots {
		if len(s.Nodes) > 0 && strings.HasPrefix(s.Nodes[0].Name, "/"+prefix+"_") {
			c := *s
			if c.OwnPid != 0 {
				c.Pid = c.OwnPid
			}
			out.Snapshots = append(out.Snapshots, &c)
		}
	}
	return out
}

// innermost is a host process's pid in its own PID namespace (the last NSpid).
func innermost(t *testing.T, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("pid %d: %v", pid, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "NSpid:" {
			n, _ := strconv.Atoi(f[len(f)-1])
			return n
		}
	}
	return 0
}

// Containers without images (design note 0034): two "containers" each run
// a graph in a mount and a PID namespace of their own, so their processes
// have the same pids (simgraph is each one's init, pid 1), and write their
// segments into one host directory bind-mounted into each. pulse on the
// host: every count equals each graph's own, every process has its host
// pid (learnt from the lock it holds: unique, and its /proc entry) beside
// its own, its CPU is measured there, and a killed container's processes
// are exited while the other's live. pulse in a PID namespace of its own
// (a sibling container): counts and liveness the same, CPU and memory
// absent, never another process's. A container that shares the host's PID
// namespace (mount namespace only): its pids are the host's, CPU present.
func TestContainers(t *testing.T) {
	skipProcUnderEmulation(t)
	if out, err := exec.Command(unshareArgs("--mount", "--pid", "--fork", "--mount-proc", "true")[0],
		unshareArgs("--mount", "--pid", "--fork", "--mount-proc", "true")[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("unshare cannot make mount and PID namespaces here (root, or unprivileged user namespaces, needed): %v: %s", err, out)
	}
	segDir := t.TempDir()
	a := startContainer(t, segDir, containerGraph("a"), true, 6*time.Second)
	bc := startContainer(t, segDir, containerGraph("b"), true, 30*time.Second)
	shared := startContainer(t, segDir, containerGraph("s"), false, 6*time.Second)

	r := segment.NewReader(segDir)
	defer r.Close()
	scanNow := func() *segment.Scan {
		s, err := r.Scan()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// Wait for all six processes, then look at them alive.
	var live *segment.Scan
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		live = scanNow()
		n := 0
		for _, s := range live.Snapshots {
			if s.Alive && len(s.Nodes) > 0 {
				n++
			}
		}
		if n == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 6 processes with nodes after 20 s", n)
		}
	}
	pids, own := map[int]bool{}, map[string][]int{}
	for _, s := range live.Snapshots {
		prefix := strings.SplitN(strings.TrimPrefix(s.Nodes[0].Name, "/"), "_", 2)[0]
		if pids[s.Pid] {
			t.Errorf("pid %d twice", s.Pid)
		}
		pids[s.Pid] = true
		switch {
		case prefix == "s" && s.OwnPid != 0:
			t.Errorf("%s in the host's PID namespace: own pid %d beside %d", s.Nodes[0].Name, s.OwnPid, s.Pid)
		case prefix != "s" && (s.OwnPid == 0 || s.OwnPid == s.Pid || innermost(t, s.Pid) != s.OwnPid):
			t.Errorf("%s in a PID namespace of its own: pid %d, own pid %d (its host pid's NSpid says %d)", s.Nodes[0].Name, s.Pid, s.OwnPid, innermost(t, s.Pid))
		}
		if s.OwnPid != 0 {
			own[prefix] = append(own[prefix], s.OwnPid)
		}
	}
	if fmt.Sprint(own["a"]) != fmt.Sprint(own["b"]) { // the case this is about: the same pids in two containers
		t.Errorf("the containers' own pids differ (%v, %v): the test shows nothing", own["a"], own["b"])
	}

	// CPU from the host: every process's, at its host pid.
	procs := window.Procs(live)
	sampler, err := cpu.New("", false)
	if err != nil {
		t.Fatal(err)
	}
	defer sampler.Close()
	targets := cpu.Targets(procs, false, "")
	sampler.Sample(targets)
	time.Sleep(300 * time.Millisecond)
	sampled := map[string]int{}
	for _, smp := range sampler.Sample(targets) {
		sampled[smp.Name] = smp.Pid
	}
	for _, p := range procs {
		if sampled[p.NodeNames()] != p.Pid {
			t.Errorf("%s (pid %d): no CPU sample at its pid from the host: %v", p.NodeNames(), p.Pid, sampled)
		}
	}

	// pulse in a sibling PID namespace: the same processes alive, no CPU for any.
	pulse := filepath.Join(buildDir(t), "bin/pulse")
	args := append(unshareArgs("--pid", "--fork", "--mount-proc"), pulse, "dump", "--dir", segDir)
	out, err := exec.Command(args[0], args[1:]...).Output()
	if err != nil {
		t.Fatalf("pulse dump in a PID namespace of its own: %v", err)
	}
	aliveThere := 0
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		var d struct {
			Pid    int
			OwnPid int `json:"own_pid"`
			Alive  bool
			Nodes  []string
		}
		if json.Unmarshal(sc.Bytes(), &d) == nil && d.Alive && len(d.Nodes) > 0 {
			aliveThere++
			if d.OwnPid != 0 {
				t.Errorf("pulse in a sibling namespace cannot see the holder, yet gives own pid %d: %s", d.OwnPid, sc.Text())
			}
		}
	}
	if aliveThere != 6 {
		t.Errorf("pulse in a PID namespace of its own sees %d of 6 processes alive:\n%s", aliveThere, out)
	}
	args = append(unshareArgs("--pid", "--fork", "--mount-proc"), pulse, "cpu", "--dir", segDir, "--probed-only", "--period", "300ms", "--duration", "1s")
	cmd := exec.Command(args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("pulse cpu in a PID namespace of its own: %v\n%s", err, stderr.String())
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
		if strings.Contains(l, "_talker") || strings.Contains(l, "_listener") {
			t.Errorf("pulse cpu in a sibling PID namespace measured a process it cannot see: %s", l)
		}
	}

	// Kill container b: its processes are exited, the others alive.
	_ = syscall.Kill(-bc.cmd.Process.Pid, syscall.SIGKILL)
	<-bc.done
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		bad := ""
		for _, s := range scanNow().Snapshots {
			if len(s.Nodes) == 0 {
				continue
			}
			if wantAlive := !strings.HasPrefix(s.Nodes[0].Name, "/b_"); s.Alive != wantAlive {
				bad += fmt.Sprintf(" %s alive=%v", s.Nodes[0].Name, s.Alive)
			}
		}
		if bad == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after container b was killed:%s", bad)
		}
	}

	// Counts: each finished container's equal to its graph's own, by its own pids.
	a.wait(t)
	shared.wait(t)
	final := scanNow()
	for _, c := range []struct {
		prefix string
		truth  string
	}{{"a", a.truthDir}, {"s", shared.truthDir}} {
		truth, err := simtruth.Read(c.truth)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range judgeTotals(of(final, c.prefix), truth, 0) {
			t.Errorf("container %s: %s", c.prefix, p)
		}
	}
	for _, s := range of(final, "a").Snapshots {
		if s.Alive {
			t.Errorf("%s alive after its container ended", s.Nodes[0].Name)
		}
	}
}
