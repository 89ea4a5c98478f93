package graphfile

import (
	"strings"
	"testing"
)

// The robot stand-in reads as robotgen describes it (issue 46: 157 nodes in
// 24 processes, 36 of them rclpy's).
func TestReadRobot(t *testing.T) {
	g, err := ReadFile("../../sim/graphs/robot.graph")
	if err != nil {
		t.Fatal(err)
	}
	c := g.Count()
	if c.Procs != 24 || c.Nodes != 157 || c.Py != 36 || c.Pubs != 749 || c.Subs != 244 || c.Services != 13 || c.Clients != 5 {
		t.Fatalf("%+v", c)
	}
	top := g.Procs[0]
	if top.Name != "lidar_top" || top.Threads != 2 || top.Nodes[0].FQN == "" {
		t.Fatalf("%+v", top)
	}
}

// Every demo graph reads; bad input says its line.
func TestReadGraphsAndBadInput(t *testing.T) {
	for _, name := range []string{"demo", "stress"} {
		if _, err := ReadFile("../../sim/graphs/" + name + ".graph"); err != nil {
			t.Error(err)
		}
	}
	if _, err := ReadFile("../../sim/graphs/missing.graph"); err == nil {
		t.Error("a missing graph file read")
	}
	for in, want := range map[string]string{
		"node /a\n":                                  "line 1: node before any process",
		"process p\n  pub /t 10\n":                   "line 2: pub before any node",
		"process p\n  node a\n":                      "line 2: node needs a fully qualified name",
		"process p\n  node /a\n  pub /t\n":           "line 3: pub needs 2 values",
		"process p\n  node /a\n  pub /t -1\n":        "line 3: rate \"-1\"",
		"process p\n  node /a\n  sub /t cost=x\n":    "line 3: cost=\"x\"",
		"process p\n  node /a\n  frobnicate\n":       "line 3: unknown directive",
		"process p threads=0\n":                      "line 1: threads=\"0\"",
		"process p\n  node /a\n  pub /t 1 size=-3\n": "line 3: size=\"-3\"",
	} {
		if _, err := Read(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// FuzzRead: any input is read or refused, never a panic.
func FuzzRead(f *testing.F) {
	f.Add("process p threads=2\n  node /a lang=py intra loop\n    pub /t 10 size=5\n    sub /u cost=1:3\n    timer 2 cost=4\n    service /s cost=1\n    client /s 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		g, err := Read(strings.NewReader(in))
		if err == nil {
			for _, p := range g.Procs {
				if p.Threads < 1 {
					t.Fatal(p)
				}
			}
		}
	})
}
