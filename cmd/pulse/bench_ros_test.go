package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The real-ROS benchmarks say in one line what they miss: the test nodes'
// workspace, a ROS environment, a paired comparison's second trial, the
// older probe build a baseline names.
func TestBenchROSSaysWhatIsMissing(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "lib", "pulse_testnodes"), 0o755)
	os.WriteFile(filepath.Join(ws, "lib", "pulse_testnodes", "pulse_node"), []byte("#!/bin/sh\n"), 0o755)
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"bench", "ros-farm", "--ws", filepath.Join(ws, "nope")}, "", "no lib/pulse_testnodes/pulse_node there"},
		{[]string{"bench", "ros-instructions", "--ws", filepath.Join(ws, "nope")}, "", "no lib/pulse_testnodes/pulse_node there"},
		{[]string{"bench", "ros-farm", "--ws", ws}, "", "no ROS environment"},
		{[]string{"bench", "ros-farm", "--ws", ws, "--trials", "1"}, "", "needs at least 2"},
		{[]string{"bench", "ros-farm", "--ws", ws, "--arms", "probe"}, "AMENT_PREFIX_PATH=/opt/x", "the arms must include none"},
		{[]string{"bench", "ros-farm"}, "", `required flag(s) "ws" not set`},
		{[]string{"bench", "ros-farm", "--ws", ws, "--baseline", filepath.Join(ws, "nope.so")}, "AMENT_PREFIX_PATH=/opt/x", "--baseline: stat"},
	} {
		cmd := pulseCmd(t, c.args...)
		cmd.Env = append(os.Environ(), "AMENT_PREFIX_PATH=")
		if c.env != "" {
			cmd.Env = append(cmd.Env, c.env)
		}
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) || strings.Count(strings.TrimSpace(string(out)), "\n") > 0 {
			t.Errorf("pulse %s: %v, %q; want one line saying %q", strings.Join(c.args, " "), err, out, c.want)
		}
	}
}
