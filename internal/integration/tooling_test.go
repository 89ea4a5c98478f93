package integration

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// toolingGraph is what a launch-wide LD_PRELOAD reaches (design note 0034):
// `ros2 launch` itself with its /launch_ros_<pid> node, the ros2cli daemon
// (as `ros2 daemon start` and as the process ros2cli daemonizes), beside a
// node, `ros2 bag play` and a `ros2 topic echo`, which are probed. Each
// shows the command line the real one has (simgraph's argv=).
const toolingGraph = `
process launcher argv=/usr/bin/python3,/opt/ros/jazzy/bin/ros2,launch,robot_bringup,robot.launch.py
  node /launch_ros_4242 lang=py
    pub /launch_events 5
process daemonized argv=/usr/bin/python3,-c,from_ros2cli.daemon.daemonize_import_main
  node /_ros2cli_daemon_0_1f2e lang=py
process daemon argv=ros2,daemon,start
  node /_ros2cli_daemon_0_3d4c lang=py
process talker argv=/opt/ros/jazzy/lib/demo_nodes_cpp/talker,--ros-args,-r,__node:=talker
  node /talker
    pub /chatter 20
process bag argv=/usr/bin/python3,/opt/ros/jazzy/bin/ros2,bag,play,run1
  node /rosbag2_player
    pub /replayed 10
process echo argv=/usr/bin/python3,/opt/ros/jazzy/bin/ros2,--use-python-default-buffering,topic,echo,/chatter
  node /_ros2cli_4243 lang=py
    sub /chatter
`

// ROS's own tooling never gets a segment, whatever it inherits: the nodes
// pulse sees are the robot's and the tools that carry its data.
func TestROSToolingNotProbed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tooling.graph")
	if err := os.WriteFile(file, []byte(toolingGraph), 0o644); err != nil {
		t.Fatal(err)
	}
	g := sim(t, file, "jazzy", 2*time.Second)
	g.wait()
	var nodes []string
	for _, s := range scan(t, g.dir).Snapshots {
		for _, n := range s.Nodes {
			nodes = append(nodes, n.Name)
			if n.Name == "/talker" && (len(s.Cmdline) < 2 || s.Cmdline[0] != "/opt/ros/jazzy/lib/demo_nodes_cpp/talker") {
				t.Errorf("the talker's command line is simgraph's, not the one it shows: %q", s.Cmdline)
			}
		}
	}
	sort.Strings(nodes)
	if got := strings.Join(nodes, " "); got != "/_ros2cli_4243 /rosbag2_player /talker" {
		t.Errorf("probed nodes: %s; want the talker, ros2 bag play's and ros2 topic echo's, and no tooling", got)
	}
	truth := g.truth()
	if len(truth.Procs) != 6 {
		t.Errorf("the graph ran %d processes, not 6: %+v", len(truth.Procs), truth.Procs)
	}
}
