package realros

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"ros2_pulse/internal/doctor"
)

// launched is one ros2 launch of pulse_testnodes' launch files.
type launched struct {
	r      *run
	cmd    *exec.Cmd
	out    strings.Builder
	truths string
	done   chan error
}

// launch starts cmd (a ros2 launch, or pulse run -- ros2 launch) whose nodes
// write their truth into truths.
func (r *run) launch(cmd *exec.Cmd, truths string) *launched {
	r.t.Helper()
	lc := &launched{r: r, cmd: cmd, truths: truths, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = &lc.out, &lc.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	go func() { lc.done <- cmd.Wait() }()
	r.t.Cleanup(func() {
		select {
		case <-lc.done:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-lc.done
		}
	})
	return lc
}

// finish waits until every COUNT-limited publisher in want has written its
// truth with count messages, lets the deliveries drain, then ends the launch
// with SIGINT, as Ctrl-C does, and waits for it.
func (lc *launched) finish(count uint64, publishers ...string) {
	t := lc.r.t
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		done := 0
		for _, name := range publishers {
			if tr, err := ReadTruth(filepath.Join(lc.truths, name+".json")); err == nil {
				for _, e := range tr.Endpoints {
					if e.Kind == "publisher" && e.Count >= count {
						done++
					}
				}
			}
		}
		if done == len(publishers) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the launch's publishers %v did not all send %d messages in 60 s:\n%s", publishers, count, lc.out.String())
		}
	}
	time.Sleep(time.Second)
	_ = syscall.Kill(-lc.cmd.Process.Pid, syscall.SIGINT)
	select {
	case err := <-lc.done:
		lc.done <- err // for the cleanup, which must not wait again
	case <-time.After(30 * time.Second):
		t.Fatalf("the launch did not end within 30 s of SIGINT:\n%s", lc.out.String())
	}
}

// probedNodes are the nodes with a segment in the run's directory (its run
// directories included), sorted.
func (r *run) probedNodes() []string {
	var nodes []string
	for _, s := range r.scan().Snapshots {
		for _, n := range s.Nodes {
			nodes = append(nodes, n.Name)
		}
	}
	sort.Strings(nodes)
	return nodes
}

// unprobedWhy is pulse doctor's reason and words for the unprobed ROS
// process whose name holds node, once it lists it (within 30 s; "" never).
func (r *run) unprobedWhy(node string) string {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		for _, w := range doctor.Unprobed("/proc", r.scan(), r.dir) {
			if strings.Contains(w.Name, node) {
				return w.Reason + ": " + w.Words
			}
		}
	}
	return ""
}

// judge holds each named node's truth to pulse's counts (judgeCounts).
func (lc *launched) judge(names ...string) {
	for _, name := range names {
		judgeCounts(lc.r, &proc{name: name, truth: filepath.Join(lc.truths, name+".json")}, nil).row(lc.r.t, lc.what()+": "+name+"'s counts")
	}
}

// what names the way in for the lane's table: "ros2 launch (PulseProbe)".
func (lc *launched) what() string {
	_, how, _ := strings.Cut(lc.r.t.Name(), "/")
	return "ros2 launch (" + strings.ReplaceAll(how, "_", " ") + ")"
}

// nodes checks the probed nodes against want, and says so in the table.
func (lc *launched) nodes(want ...string) {
	got := strings.Join(lc.r.probedNodes(), " ")
	if got != strings.Join(want, " ") {
		lc.r.t.Errorf("%s: probed nodes %q, want %q (never /launch_ros_<pid>)\n%s", lc.what(), got, want, lc.out.String())
	}
	table(lc.r.t, lc.what()+": the probed nodes", got, strings.Join(want, " "))
}

// ros2 launch without surprises (design note 0034): the probe is in every
// node a launch starts and never in ros2 launch itself (its /launch_ros_<pid>
// node, which loads the component container's nodes), whichever way it
// comes: (ros2) pulse run -- ros2 launch; --launch-prefix 'env LD_PRELOAD=…' with a
// --launch-prefix-filter (only the nodes it matches); ros2pulse's PulseProbe
// in a Python launch file and <pulse_probe/> in an XML one. A component
// container holds two composable nodes. Every count equals the nodes' own,
// and pulse doctor names the node whose additional_env replaced the probe.
func TestLaunch(t *testing.T) {
	l := setup(t)
	ros2 := l.needROS2(t)
	if _, err := os.Stat(filepath.Join(l.prefix, "share/launch_ros")); err != nil {
		t.Skipf("%s has no launch_ros", l.prefix)
	}
	components := "false"
	all := []string{"/launch_listener", "/launch_talker"}
	if _, err := os.Stat(filepath.Join(l.ws, "lib/libpulse_component.so")); err == nil {
		components = "true"
		all = []string{"/comp_listener", "/comp_talker", "/launch_listener", "/launch_talker", "/pulse_container"}
	} else {
		t.Logf("no rclcpp_components in %s: the component container is not tried", l.prefix)
	}
	const count = 150
	talkers := []string{"launch_talker"}
	if components == "true" {
		talkers = append(talkers, "comp_talker")
	}
	launchArgs := func(truths string, more ...string) []string {
		return append([]string{"launch", "pulse_testnodes", "pulse_nodes.launch.py", "truth_dir:=" + truths,
			"components:=" + components}, more...)
	}
	judgeAll := func(lc *launched, nodes []string) {
		for _, n := range nodes {
			if n != "/pulse_container" {
				lc.judge(strings.TrimPrefix(n, "/"))
			}
		}
	}

	t.Run("pulse run", func(t *testing.T) { // as ros2 pulse run, which is pulse run
		r := l.newRun(t)
		truths := t.TempDir()
		lc := r.launch(r.ros2(append([]string{"pulse", "run", "--dir", r.dir, "--no-summary", "--", ros2}, launchArgs(truths)...)...), truths)
		lc.finish(count, talkers...)
		lc.nodes(all...)
		judgeAll(lc, all)
	})

	t.Run("launch prefix", func(t *testing.T) {
		r := l.newRun(t)
		truths := t.TempDir()
		cmd := r.ros2(launchArgs(truths)...)
		cmd.Args = append(cmd.Args[:2], append([]string{"--launch-prefix", "env LD_PRELOAD=" + l.probe(), "--launch-prefix-filter", "^pulse_node$"}, cmd.Args[2:]...)...)
		lc := r.launch(cmd, truths)
		why := r.unprobedWhy("launch_listener") // before the end: pulse doctor names the listener the filter left out
		lc.finish(count, talkers...)
		lc.nodes("/launch_talker")
		if !strings.HasPrefix(why, "prefix-lost:") {
			t.Errorf("pulse doctor on the filtered-out listener: %q, want prefix-lost", why)
		}
		table(t, "pulse doctor: a node --launch-prefix-filter left out", strings.SplitN(why, ":", 2)[0], "prefix-lost")
		lc.judge("launch_talker")
	})

	t.Run("PulseProbe", func(t *testing.T) {
		r := l.newRun(t)
		truths := t.TempDir()
		lc := r.launch(r.ros2(launchArgs(truths, "probe:=true")...), truths)
		lc.finish(count, talkers...)
		lc.nodes(all...)
		judgeAll(lc, all)
	})

	t.Run("additional_env", func(t *testing.T) {
		r := l.newRun(t)
		truths := t.TempDir()
		lc := r.launch(r.ros2(launchArgs(truths, "probe:=true", "sabotage:=true")...), truths)
		why := r.unprobedWhy("launch_listener")
		lc.finish(count, talkers...)
		if !strings.HasPrefix(why, "env-replaced:") {
			t.Errorf("pulse doctor on the listener whose additional_env set LD_PRELOAD: %q", why)
		}
		table(t, "pulse doctor: a node whose additional_env replaced LD_PRELOAD", strings.SplitN(why, ":", 2)[0], "env-replaced")
		var rest []string
		for _, n := range all {
			if n != "/launch_listener" {
				rest = append(rest, n)
			}
		}
		lc.nodes(rest...)
	})

	t.Run("XML pulse_probe", func(t *testing.T) {
		r := l.newRun(t)
		truths := t.TempDir()
		lc := r.launch(r.ros2("launch", "pulse_testnodes", "pulse_probe.launch.xml", "truth_dir:="+truths), truths)
		lc.finish(100, "xml_talker")
		lc.nodes("/xml_talker")
		lc.judge("xml_talker")
	})
}
