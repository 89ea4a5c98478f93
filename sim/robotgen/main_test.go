package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// The committed robot.graph is what this program writes, and it has the
// shape issue 46 asks of a robot-sized graph.
func TestRobotGraph(t *testing.T) {
	var got bytes.Buffer
	if err := write(&got); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile("../graphs/robot.graph")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), file) {
		t.Fatal("sim/graphs/robot.graph is not what sim/robotgen writes: run 'go run ./sim/robotgen > sim/graphs/robot.graph'")
	}
	procs, nodes, py := 0, 0, 0
	topics, published, subscribed := map[string]bool{}, map[string]bool{}, map[string]bool{}
	namespaces := map[string]bool{}
	var actions, services int
	perProc := map[int]int{}
	for _, line := range strings.Split(string(file), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch f[0] {
		case "process":
			procs++
		case "node":
			nodes++
			perProc[procs]++
			if strings.Contains(line, "lang=py") {
				py++
			}
			namespaces["/"+strings.Split(f[1], "/")[1]] = true
		case "pub":
			topics[f[1]], published[f[1]] = true, true
		case "sub":
			topics[f[1]], subscribed[f[1]] = true, true
		case "service":
			services++
		case "action":
			actions++
		}
	}
	if procs < 20 || nodes < 150 || len(topics) < 500 {
		t.Errorf("%d processes, %d nodes, %d topics; want at least 20, 150, 500", procs, nodes, len(topics))
	}
	if share := float64(py) / float64(nodes); share < 0.15 || share > 0.25 {
		t.Errorf("%d of %d nodes are rclpy (%.0f %%); want about 20 %%", py, nodes, share*100)
	}
	containers := 0
	for _, n := range perProc {
		if n >= 5 && n <= 15 {
			containers++
		}
	}
	if containers < 15 {
		t.Errorf("%d processes hold 5 to 15 nodes; want most of them containers", containers)
	}
	for _, ns := range []string{"/sensing", "/localization", "/perception", "/planning", "/control", "/system"} {
		if !namespaces[ns] {
			t.Errorf("no node in %s", ns)
		}
	}
	for topic := range subscribed {
		if !published[topic] {
			t.Errorf("%s is subscribed to and never published", topic)
		}
	}
	if services < 5 || actions < 1 {
		t.Errorf("%d services and %d actions; want the API's services and an action", services, actions)
	}
}
