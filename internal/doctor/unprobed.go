package doctor

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"ros2_pulse/internal/cpu"
	"ros2_pulse/internal/segment"
)

// The pitfalls that leave a ROS process of a launch without the probe
// (design note 0034), named from what /proc shows of it.
const (
	whySecure       = "secure"       // set-user-ID or file capabilities: the loader ignores LD_PRELOAD
	whyLoadedNoSeg  = "loaded"       // the probe is mapped, yet no segment here
	whyPrefixLost   = "prefix-lost"  // ros2 launch --launch-prefix did not reach it
	whyEnvReplaced  = "env-replaced" // its launch action set LD_PRELOAD itself
	whyNoPreload    = "no-preload"   // nothing preloads the probe
	whyUnreadable   = "unreadable"   // another user's process
	launchPrefixArg = "--launch-prefix"
)

// NotProbed is a ROS process without a segment: why, and the words for it.
type NotProbed struct {
	Pid         int
	Name        string
	Reason      string
	Words       string
	Problematic bool // a pitfall the user can fix, not a process they chose not to probe
}

// isProbe reports a path that names the probe library.
func isProbe(path string) bool { return strings.HasPrefix(filepath.Base(path), "libros2_pulse") }

func preloadsProbe(ldPreload string) bool {
	for _, p := range strings.FieldsFunc(ldPreload, func(r rune) bool { return r == ':' || r == ' ' }) {
		if isProbe(p) {
			return true
		}
	}
	return false
}

// procOf is pid's entry under the /proc mount at proc, through procfs (as package cpu reads it).
func procOf(proc string, pid int) (procfs.Proc, bool) {
	fs, err := procfs.NewFS(proc)
	if err != nil {
		return procfs.Proc{}, false
	}
	p, err := fs.Proc(pid)
	return p, err == nil
}

// procEnv is a process's environment, nil when it cannot be read.
func procEnv(proc string, pid int) map[string]string {
	p, ok := procOf(proc, pid)
	if !ok {
		return nil
	}
	vars, err := p.Environ()
	if err != nil {
		return nil
	}
	env := map[string]string{}
	for _, kv := range vars {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

func procCmdline(proc string, pid int) []string {
	p, ok := procOf(proc, pid)
	if !ok {
		return nil
	}
	argv, _ := p.CmdLine()
	return argv
}

func procPpid(proc string, pid int) int {
	p, ok := procOf(proc, pid)
	if !ok {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	return st.PPID
}

// isLaunch reports `ros2 launch` (ros2, or python3 .../ros2, then launch).
func isLaunch(argv []string) bool {
	for i := 0; i < 2 && i < len(argv); i++ {
		if filepath.Base(argv[i]) == "ros2" {
			for _, a := range argv[i+1:] {
				if !strings.HasPrefix(a, "-") {
					return a == "launch"
				}
			}
		}
	}
	return false
}

// launchAncestor is the nearest `ros2 launch` above pid (0: none within a few generations).
func launchAncestor(proc string, pid int) int {
	for i, p := 0, procPpid(proc, pid); i < 6 && p > 1; i, p = i+1, procPpid(proc, p) {
		if isLaunch(procCmdline(proc, p)) {
			return p
		}
	}
	return 0
}

// launchPreloads reports a ros2 launch that gives its nodes the probe: in
// its own environment (pulse run, an exported pulse env), or in a child's
// (PulseProbe sets it inside the launch process, where /proc/<pid>/environ,
// the environment it started with, does not show it).
func launchPreloads(proc string, launch int) bool {
	if env := procEnv(proc, launch); env != nil && preloadsProbe(env["LD_PRELOAD"]) {
		return true
	}
	fs, err := procfs.NewFS(proc)
	if err != nil {
		return false
	}
	all, err := fs.AllProcs()
	if err != nil {
		return false
	}
	for _, p := range all {
		if st, err := p.Stat(); err != nil || st.PPID != launch {
			continue
		}
		if env := procEnv(proc, p.PID); env != nil && preloadsProbe(env["LD_PRELOAD"]) {
			return true
		}
	}
	return false
}

// secureExec names what makes the loader ignore LD_PRELOAD for exe: its
// set-user-ID or set-group-ID bit, or file capabilities ("" for none).
func secureExec(exe string) string {
	var st unix.Stat_t
	if unix.Stat(exe, &st) != nil {
		return ""
	}
	switch {
	case st.Mode&unix.S_ISUID != 0:
		return "set-user-ID"
	case st.Mode&unix.S_ISGID != 0:
		return "set-group-ID"
	}
	if n, err := unix.Getxattr(exe, "security.capability", nil); err == nil && n > 0 {
		return "file capabilities (setcap, e.g. cap_sys_nice for realtime)"
	}
	return ""
}

// explainUnprobed says why a ROS process has no segment in dir. launches
// keeps launchPreloads' answer per launch: a launch's nodes share it, and
// each answer walks /proc (a robot's launch has a hundred nodes or more).
func explainUnprobed(proc string, t cpu.Target, dir string, launches map[int]bool) NotProbed {
	w := NotProbed{Pid: t.Pid, Name: t.Name}
	pidDir := filepath.Join(proc, strconv.Itoa(t.Pid))
	if maps, err := os.ReadFile(filepath.Join(pidDir, "maps")); err == nil && bytes.Contains(maps, []byte("libros2_pulse")) {
		w.Reason, w.Problematic = whyLoadedNoSeg, true
		w.Words = "the probe is loaded in it but its segment is not in " + dir
		if env := procEnv(proc, t.Pid); env != nil && env["ROS_PULSE_DIR"] != "" && filepath.Clean(env["ROS_PULSE_DIR"]) != filepath.Clean(dir) {
			w.Words += ": it writes to ROS_PULSE_DIR=" + env["ROS_PULSE_DIR"] + " (read that with --dir)"
		} else {
			w.Words += " (it has not initialised ROS yet, or another user's directory is meant: --dir)"
		}
		return w
	}
	if how := secureExec(filepath.Join(pidDir, "exe")); how != "" {
		w.Reason, w.Problematic = whySecure, true
		w.Words = "its executable has " + how + ": the loader runs it in secure-execution mode and ignores LD_PRELOAD; " +
			"fix: run it without them (realtime priority without cap_sys_nice: systemd LimitRTPRIO=, or rtprio in /etc/security/limits.conf)"
		return w // (not loaded: had it been, the loader was not in secure mode)
	}
	env := procEnv(proc, t.Pid)
	if env == nil {
		w.Reason, w.Words = whyUnreadable, "its environment cannot be read (another user's process)"
		return w
	}
	w.Reason, w.Words = whyNoPreload, "nothing preloads the probe in it (see pulse env)"
	if preloadsProbe(env["LD_PRELOAD"]) {
		return w // preloaded, not loaded: the loader would have said why on its stderr
	}
	launch := launchAncestor(proc, t.Pid)
	if launch == 0 {
		return w
	}
	argv := procCmdline(proc, launch)
	for i, a := range argv {
		if (a == launchPrefixArg && i+1 < len(argv) && strings.Contains(argv[i+1], "libros2_pulse")) ||
			strings.HasPrefix(a, launchPrefixArg+"=") && strings.Contains(a, "libros2_pulse") {
			w.Reason, w.Problematic = whyPrefixLost, true
			w.Words = fmt.Sprintf("ros2 launch (pid %d) has --launch-prefix with the probe, which did not reach it: a node with its own prefix= "+
				"(gdb, valgrind, xterm) loses the launch prefix, and --launch-prefix-filter may leave it out; "+
				"fix: put the probe in its prefix ('env LD_PRELOAD=… gdb …'), or use ros2pulse's PulseProbe in the launch file", launch)
			return w
		}
	}
	preloads, known := launches[launch]
	if !known {
		preloads = launchPreloads(proc, launch)
		launches[launch] = preloads
	}
	if preloads {
		w.Reason, w.Problematic = whyEnvReplaced, true
		w.Words = fmt.Sprintf("ros2 launch (pid %d) gives its nodes the probe, yet this node's LD_PRELOAD is %q: its launch action sets "+
			"LD_PRELOAD itself (additional_env= or env=), replacing the probe; fix: put the probe first in that value", launch, env["LD_PRELOAD"])
	}
	return w
}

// Unprobed lists the ROS processes here without a segment in scan, each with why.
func Unprobed(proc string, scan *segment.Scan, dir string) []NotProbed {
	probed := map[int]bool{}
	for _, s := range scan.Snapshots {
		probed[s.Pid] = probed[s.Pid] || s.Alive
	}
	var out []NotProbed
	launches := map[int]bool{}
	for _, t := range cpu.Unprobed(proc, probed) {
		out = append(out, explainUnprobed(proc, t, dir, launches))
	}
	return out
}

// reportUnprobed prints the ROS processes without the probe and why.
func reportUnprobed(out io.Writer, scan *segment.Scan, dir string) {
	all := Unprobed("/proc", scan, dir)
	if len(all) == 0 {
		return
	}
	fmt.Fprintf(out, "ROS processes without the probe (found by their command line)\n")
	for _, w := range all {
		level := "--  "
		if w.Problematic {
			level = "WARN"
		}
		fmt.Fprintf(out, "  %s %s (pid %d): %s\n", level, w.Name, w.Pid, w.Words)
	}
}
