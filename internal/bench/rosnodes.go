package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"ros2_pulse/internal/realros"
)

// nodeRun is one benchmark run of test-node processes (pulse_node), each
// named by its procs entry's first field, writing its truth (and, under
// callgrind, its profile) into dir as <name>.json (<name>.cg).
type nodeRun struct {
	dir   string
	names []string
	cmds  []*exec.Cmd
	logs  []*bytes.Buffer
}

// startNodes starts one process per procs entry ({name, flags...}), in
// dir's fresh segment directory (rosEnv). The last (the publishers) starts
// pause after the others, which run lead longer than its dur so they see
// its last message. wrap puts a tool in front of a command line (valgrind,
// taskset), or is nil.
func startNodes(ctx context.Context, node, dir string, env []string, procs [][]string, dur, lead, pause time.Duration,
	wrap func(i int, name string, argv []string) []string) (*nodeRun, error) {
	r := &nodeRun{dir: dir}
	for i, p := range procs {
		d := dur + lead
		if i == len(procs)-1 {
			time.Sleep(pause)
			d = dur
		}
		truth := filepath.Join(dir, p[0]+".json")
		os.Remove(truth)
		argv := append([]string{node, "--name", p[0], "--duration", strconv.FormatFloat(d.Seconds(), 'f', 3, 64), "--truth", truth}, p[1:]...)
		if wrap != nil {
			argv = wrap(i, p[0], argv)
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = env
		log := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			return r, err
		}
		r.names, r.cmds, r.logs = append(r.names, p[0]), append(r.cmds, cmd), append(r.logs, log)
	}
	return r, nil
}

// wait waits for every process; the first that failed is the error, with
// the end of its output.
func (r *nodeRun) wait(what string) error {
	var first error
	for i, c := range r.cmds {
		if err := c.Wait(); err != nil && first == nil {
			first = fmt.Errorf("%s: %s: %v: %s", what, r.names[i], err, lastLines(r.logs[i].String(), 5))
		}
	}
	return first
}

// truth is process i's document.
func (r *nodeRun) truth(i int) (*realros.Truth, error) {
	return realros.ReadTruth(filepath.Join(r.dir, r.names[i]+".json"))
}

// profile is process i's callgrind profile (written where callgrindArgs said).
func (r *nodeRun) profile(i int) (*Profile, error) {
	f, err := os.Open(filepath.Join(r.dir, r.names[i]+".cg"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := ParseCallgrind(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", r.names[i], err)
	}
	return p, nil
}

// callgrind wraps a command line in valgrind's callgrind, its profile in
// dir/<name>.cg.
func callgrind(valgrind, dir string, extra ...string) func(int, string, []string) []string {
	return func(_ int, name string, argv []string) []string {
		pre := append([]string{valgrind, "--tool=callgrind", "--callgrind-out-file=" + filepath.Join(dir, name+".cg")}, extra...)
		return append(pre, argv...)
	}
}

// rosEnv is a benchmark's ROS nodes' environment: this process's, their own
// domain on this host only, the RMW, the probe's segments in a fresh
// dir/seg, and the arm's variables last.
func rosEnv(rmw string, domain int, dir string, arm []string) ([]string, error) {
	seg := filepath.Join(dir, "seg")
	os.RemoveAll(seg)
	if err := os.MkdirAll(seg, 0o755); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "ROS_DOMAIN_ID="+strconv.Itoa(domain), "RMW_IMPLEMENTATION="+rmw,
		"ROS_LOCALHOST_ONLY=1", "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST", "ROS_PULSE_DIR="+seg, "ROS_TOPIC_STATS_QUIET=1")
	return append(env, arm...), nil
}

// shmTemp makes a temporary directory in /dev/shm (where the probe keeps its
// segments by default), else in the system's temporary directory.
func shmTemp(prefix string) (string, error) {
	dir, err := os.MkdirTemp("/dev/shm", prefix)
	if err != nil {
		return os.MkdirTemp("", prefix)
	}
	return dir, nil
}
