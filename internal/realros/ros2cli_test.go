package realros

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needROS2 skips where the prefix has no ros2 command (a core built without ros2cli).
func (l *lane) needROS2(t *testing.T) string {
	t.Helper()
	ros2 := filepath.Join(l.prefix, "bin/ros2")
	if _, err := os.Stat(ros2); err != nil {
		t.Skipf("%s has no bin/ros2 (ros2cli not built): ros2 pulse and ros2 launch are not tried", l.prefix)
	}
	return ros2
}

// ros2 is a `ros2 ...` command of this run: the lane's environment (the
// prefix and the test workspace sourced, ros2pulse in it), this run's
// domain and segment directory, nothing preloaded, PULSE_BIN the build's pulse.
func (r *run) ros2(args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(r.l.prefix, "bin/ros2"), args...)
	cmd.Env = append(r.env("", nil), "LD_PRELOAD=", "PULSE_BIN="+r.l.pulse())
	return cmd
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// ros2 pulse <verb> (ros/ros2pulse, built by colcon in the test workspace):
// its help lists every verb the binary has; check's exit status is pulse
// check's (0 healthy, 1 violations, 2 cannot judge) with its output; top
// runs in a real terminal and shows the run's topic; argcomplete completes
// verbs and flags as ros2cli does; without a pulse binary it says so in
// one line and exits 127.
func TestROS2Pulse(t *testing.T) {
	l := setup(t)
	l.needROS2(t)
	r := l.newRun(t)

	out, err := r.ros2("pulse", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("ros2 pulse --help: %v\n%s", err, out)
	}
	doc, err := exec.Command(l.pulse(), "gen-docs", "--ros2cli", "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	var verbs struct {
		Verbs map[string]struct{ Short string }
	}
	if err := json.Unmarshal(doc, &verbs); err != nil {
		t.Fatal(err)
	}
	for v, d := range verbs.Verbs {
		if !strings.Contains(string(out), v+"  ") || !strings.Contains(string(out), d.Short[:20]) {
			t.Errorf("ros2 pulse --help does not list %s (%q):\n%s", v, d.Short, out)
		}
	}

	talker := r.node("talker", "cpp", "", "--pub", "/ros2pulse/chatter,50", "--duration", "12")
	spec := func(name, text string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	time.Sleep(2 * time.Second)
	for _, c := range []struct {
		spec string
		code int
	}{
		{spec("healthy.yaml", "topics:\n  /ros2pulse/chatter: {min_hz: 10, side: pub}\n"), 0},
		{spec("slow.yaml", "topics:\n  /ros2pulse/chatter: {min_hz: 1000, side: pub}\n"), 1},
		{"/nonexistent/spec.yaml", 2},
	} {
		args := []string{"check", "--spec", c.spec, "--live", "--for", "2s", "--period", "1s", "--dir", r.dir}
		ours := r.ros2(append([]string{"pulse"}, args...)...)
		ourOut, ourErr := ours.CombinedOutput()
		direct := r.pulseCmd(args...)
		directOut, directErr := direct.CombinedOutput()
		if exitCode(ourErr) != c.code || exitCode(directErr) != c.code {
			t.Errorf("%s: ros2 pulse check exit %d, pulse check exit %d, want %d\nros2 pulse:\n%s\npulse:\n%s", c.spec,
				exitCode(ourErr), exitCode(directErr), c.code, ourOut, directOut)
		}
		table(t, fmt.Sprintf("ros2 pulse check: exit status (%s)", filepath.Base(c.spec)), fmt.Sprint(exitCode(ourErr)), fmt.Sprint(exitCode(directErr)))
	}

	// top in a real terminal
	sock := fmt.Sprintf("pulse-ros2-%d", os.Getpid())
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	envArgs := []string{"env", "-i"}
	envArgs = append(envArgs, r.ros2().Env...)
	line := append(envArgs, filepath.Join(l.prefix, "bin/ros2"), "pulse", "top", "--period", "1s", "--dir", r.dir)
	tmux(append([]string{"new-session", "-d", "-s", "top", "-x", "160", "-y", "40"}, line...)...)
	defer exec.Command("tmux", "-L", sock, "kill-server").Run()
	var screen string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if screen = tmux("capture-pane", "-p", "-t", "top"); strings.Contains(screen, "/ros2pulse/chatter") && strings.Contains(screen, "/talker") {
			break
		}
	}
	if !strings.Contains(screen, "/ros2pulse/chatter") {
		t.Errorf("ros2 pulse top's screen has no /ros2pulse/chatter:\n%s", screen)
	}
	table(t, "ros2 pulse top in tmux: the run's topic on screen", fmt.Sprint(strings.Contains(screen, "/ros2pulse/chatter")), "true")
	tmux("send-keys", "-t", "top", "q")

	// argcomplete, as bash's completion of ros2 asks it (fd 8 gets the words)
	complete := func(line string) []string {
		rd, wr, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		null, _ := os.Open(os.DevNull)
		defer null.Close()
		cmd := r.ros2()
		cmd.Env = append(cmd.Env, "_ARGCOMPLETE=1", "_ARGCOMPLETE_IFS=\v", "COMP_LINE="+line, fmt.Sprintf("COMP_POINT=%d", len(line)), "_ARGCOMPLETE_SUPPRESS_SPACE=1")
		cmd.ExtraFiles = []*os.File{null, null, null, null, null, wr, null} // fd 8: the completions; fd 9: argcomplete's debug
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wr.Close()
		b, _ := io.ReadAll(rd)
		rd.Close()
		_ = cmd.Wait()
		words := strings.Split(strings.TrimSpace(string(b)), "\v")
		sort.Strings(words)
		return words
	}
	if got := complete("ros2 pulse to"); fmt.Sprint(got) != "[top]" && fmt.Sprint(got) != "[top ]" {
		t.Errorf("completion of 'ros2 pulse to': %q (is python3-argcomplete installed?)", got)
	}
	if got := complete("ros2 pulse top --per"); len(got) != 1 || !strings.HasPrefix(got[0], "--period") {
		t.Errorf("completion of 'ros2 pulse top --per': %q", got)
	}
	table(t, "ros2 pulse: argcomplete of 'ros2 pulse to', 'ros2 pulse top --per'",
		strings.Join(complete("ros2 pulse to"), " ")+", "+strings.Join(complete("ros2 pulse top --per"), " "), "top, --period")

	// The ros2cli daemon, started from a shell that preloads the probe (eval
	// "$(pulse env)"), is no probed node: neither `ros2 daemon start` nor the
	// process it daemonizes.
	daemon := r.ros2("daemon", "start")
	daemon.Env = append(daemon.Env, "LD_PRELOAD="+l.probe())
	if out, err := daemon.CombinedOutput(); err != nil {
		t.Errorf("ros2 daemon start: %v\n%s", err, out)
	}
	time.Sleep(2 * time.Second)
	tooling := 0
	for _, s := range r.scan().Snapshots {
		for _, n := range s.Nodes {
			if strings.Contains(n.Name, "_ros2cli_daemon") || strings.Contains(n.Name, "launch_ros") {
				tooling++
				t.Errorf("ROS tooling probed: %s (pid %d, %q)", n.Name, s.Pid, s.Cmdline)
			}
		}
	}
	if out, err := r.ros2("daemon", "status").CombinedOutput(); err != nil || !strings.Contains(string(out), "running") {
		t.Errorf("the daemon is not running, so the test shows nothing: %v\n%s", err, out)
	}
	table(t, "the ros2cli daemon started with the probe preloaded: its nodes probed", fmt.Sprint(tooling), "0")
	_ = r.ros2("daemon", "stop").Run()

	// no pulse binary: one line, 127
	cmd := r.ros2("pulse", "top")
	cmd.Env = append(cmd.Env, "PULSE_BIN=/nonexistent/pulse")
	out, err = cmd.CombinedOutput()
	if exitCode(err) != 127 || len(strings.Split(strings.TrimSpace(string(out)), "\n")) != 1 || !strings.Contains(string(out), "no pulse binary found") {
		t.Errorf("ros2 pulse top without pulse: exit %d:\n%s", exitCode(err), out)
	}
	_ = talker.cmd.Process.Signal(syscall.SIGINT)
	r.waitAll(20 * time.Second)
}
