package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/doctor"
)

// launchGraph is what a launch file starts: a node that got the probe
// (through the launch's environment, or the prefix), and one whose launch
// action set LD_PRELOAD itself (additional_env) or dropped the launch
// prefix (its own prefix=): the graph's env= is what such an action gives
// the process.
const launchGraph = `
process talker argv=/opt/ros/jazzy/lib/demo_nodes_cpp/talker,--ros-args,-r,__node:=talker%s
  node /talker
    pub /chatter 20
process listener argv=/opt/ros/jazzy/lib/demo_nodes_cpp/listener,--ros-args,-r,__node:=listener%s
  node /listener
    sub /chatter
`

// pulse doctor names why a node of a ros2 launch has no probe (design note
// 0034): its launch action replaced LD_PRELOAD (the launch preloads the
// probe: PulseProbe, pulse run, an exported pulse env), or it lost ros2
// launch's --launch-prefix (a node with its own prefix=). The launch
// process itself (simgraph shown as ros2 launch) is never probed nor
// listed, and a node that got the probe is probed.
func TestDoctorNamesLaunchPitfalls(t *testing.T) {
	skipProcUnderEmulation(t)
	probe := filepath.Join(buildDir(t), "lib/libros2_pulse.so")
	for _, c := range []struct {
		name, talkerEnv, listenerEnv string
		launch                       []string
		env                          []string
		reason                       string
	}{
		{"additional_env", "", " env=LD_PRELOAD=libm.so.6",
			[]string{"/usr/bin/python3", "/opt/ros/jazzy/bin/ros2", "launch", "robot_bringup", "robot.launch.py"}, nil, "env-replaced"},
		{"own prefix", " env=LD_PRELOAD=" + probe, "",
			[]string{"/usr/bin/python3", "/opt/ros/jazzy/bin/ros2", "launch", "--launch-prefix", "env LD_PRELOAD=" + probe, "robot_bringup", "robot.launch.py"},
			[]string{"LD_PRELOAD="}, "prefix-lost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "launch.graph")
			if err := os.WriteFile(file, []byte(fmt.Sprintf(launchGraph, c.talkerEnv, c.listenerEnv)), 0o644); err != nil {
				t.Fatal(err)
			}
			g := simAs(t, c.launch, file, "jazzy", 4*time.Second, c.env...)
			var got []string
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				s := scan(t, g.dir)
				var nodes []string
				for _, sn := range s.Snapshots {
					for _, n := range sn.Nodes {
						nodes = append(nodes, n.Name)
					}
				}
				got = got[:0]
				for _, w := range doctor.Unprobed("/proc", s, g.dir) {
					if strings.Contains(w.Name, "talker") || strings.Contains(w.Name, "listener") {
						got = append(got, w.Name+" "+w.Reason+": "+w.Words)
					}
				}
				if strings.Join(nodes, ",") == "/talker" && len(got) == 1 && strings.HasPrefix(got[0], "/listener "+c.reason+":") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("probed nodes %v; the doctor's unprobed: %q; want /talker probed and /listener %s", nodes, got, c.reason)
				}
			}
			t.Logf("%s", got[0])
			g.wait()
		})
	}
}

// A node whose executable is set-user-ID (or has file capabilities, as a
// realtime node given cap_sys_nice) runs in secure-execution mode, where the
// loader ignores LD_PRELOAD: pulse doctor says so, and how to fix it.
func TestDoctorNamesSecureExecution(t *testing.T) {
	dir := t.TempDir()
	sh := filepath.Join(dir, "rt_node")
	b, err := os.ReadFile("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sh, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sh, 0o755|os.ModeSetuid); err != nil { // its own file: no privilege needed
		t.Fatal(err)
	}
	// Not preloaded here: as root a set-user-ID root file is no secure
	// execution, and a loaded probe would tell the doctor the loader took it.
	cmd := exec.Command(sh, "-c", "sleep 30; true", "rt_node", "--ros-args", "-r", "__node:=rt_node")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	segs := t.TempDir()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		for _, w := range doctor.Unprobed("/proc", scan(t, segs), segs) {
			if w.Pid == cmd.Process.Pid {
				if w.Reason != "secure" || !strings.Contains(w.Words, "set-user-ID") || !strings.Contains(w.Words, "LimitRTPRIO") {
					t.Fatalf("%+v", w)
				}
				t.Logf("%s", w.Words)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d not among the doctor's unprobed ROS processes", cmd.Process.Pid)
		}
	}
}
