// Package runner implements `pulse run`: it preloads the probe into a
// command and all its children, gives the run its own directory inside the
// machine-wide segment directory (where every other view reads it), records
// the run's own processes while the command runs, forwards
// SIGINT/SIGTERM/SIGHUP, and returns the command's exit status.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/recorder"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// Options configure a run.
type Options struct {
	Lib      string        // the probe library
	Dir      string        // the machine-wide segment directory; the run gets a run-* directory inside it
	Retain   time.Duration // how long ended runs' directories stay (swept at start; negative: never)
	Recorder recorder.Options
	Env      []string  // extra environment for the command
	Summary  io.Writer // end-of-run table; nil: none
	Stdout   io.Writer
	Stderr   io.Writer
	NoStdin  bool // the command reads /dev/null, not our terminal (pulse demo's dashboard owns it)
}

// PreloadEnv returns env with the probe added in front of any LD_PRELOAD and
// ROS_PULSE_DIR set to dir.
func PreloadEnv(env []string, lib, dir string) []string {
	out := make([]string, 0, len(env)+2)
	preload := lib
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "LD_PRELOAD="):
			if old := strings.TrimPrefix(kv, "LD_PRELOAD="); old != "" {
				preload = lib + ":" + old
			}
		case strings.HasPrefix(kv, "ROS_PULSE_DIR="):
		default:
			out = append(out, kv)
		}
	}
	return append(out, "LD_PRELOAD="+preload, "ROS_PULSE_DIR="+dir)
}

// EmptyGrace is how many empty scans Run lets pass, unless told otherwise,
// before it says its command has no probed process.
const EmptyGrace = 5

// Run runs argv under the probe and returns its exit code (128+N for signal N).
func Run(ctx context.Context, argv []string, opt Options) (int, error) {
	if len(argv) == 0 {
		return 2, errors.New("no command given (usage: pulse run [flags] -- CMD...)")
	}
	if opt.Dir == "" {
		return 2, errors.New("no segment directory given")
	}
	// What earlier runs left behind goes first (a run never sweeps its own).
	if _, err := segment.SweepRuns(opt.Dir, opt.Retain); err != nil && opt.Stderr != nil {
		fmt.Fprintf(opt.Stderr, "pulse: cannot clean up ended runs in %s: %v\n", opt.Dir, err)
	}
	run, err := segment.MakeRunDir(opt.Dir)
	if err != nil {
		return 1, err
	}
	defer run.Close()
	dir := run.Path
	summary := recorder.Summary{Period: opt.Recorder.Period.Seconds()}
	if opt.Recorder.Spec != nil {
		summary.PathRules = opt.Recorder.Spec.Paths
	}
	userOnWindow := opt.Recorder.OnWindow
	opt.Recorder.OnWindow = func(w *window.Window, warns []health.Warning, final bool) {
		summary.Add(w)
		if userOnWindow != nil {
			userOnWindow(w, warns, final)
		}
	}
	if opt.Recorder.Spec != nil && opt.Recorder.Spec.NeedsGaps() {
		opt.Env = append(opt.Env, "ROS_TOPIC_STATS_JITTER=1") // a declared gap rule is never left unchecked
	}
	if opt.Recorder.Spec != nil && opt.Recorder.Spec.NeedsLatency() {
		opt.Env = append(opt.Env, "ROS_TOPIC_STATS_LATENCY=1") // nor a latency rule
	}
	if opt.Recorder.Spec != nil && opt.Recorder.Spec.NeedsLinks() {
		opt.Env = append(opt.Env, "ROS_PULSE_LINKS=1") // nor a path
	}
	if opt.Recorder.Spec != nil && opt.Recorder.Spec.NeedsBytes() {
		opt.Env = append(opt.Env, "ROS_PULSE_BYTES=1") // nor a bytes bound
	}
	// The run's own record keeps every process it started, to the summary; the
	// other views age them out, and sweep the run's directory once it ended.
	opt.Recorder.Retain = -1
	if opt.Recorder.EmptyGrace == 0 {
		// The baseline scan comes before the command has started, and a launch
		// (or the demo's graph) takes a while to start its first node: say "no
		// probed process" only after the baseline and four windows without one.
		opt.Recorder.EmptyGrace = EmptyGrace
	}
	rec, err := recorder.New(dir, opt.Recorder)
	if err != nil {
		return 1, err
	}
	defer rec.Close()

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = PreloadEnv(append(os.Environ(), opt.Env...), opt.Lib, dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, opt.Stdout, opt.Stderr
	if opt.NoStdin {
		cmd.Stdin = nil
	}
	// Its own process group, so one forwarded signal reaches CMD and all its children exactly once.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		code := 126
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return code, fmt.Errorf("cannot start %s: %w", argv[0], err)
	}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	recCtx, stopRec := context.WithCancel(context.Background())
	recDone := make(chan error, 1)
	go func() { recDone <- rec.Run(recCtx) }()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	var waitErr error
loop:
	for {
		select {
		case s := <-sigs:
			_ = syscall.Kill(-cmd.Process.Pid, s.(syscall.Signal))
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			ctx = context.Background()
		case waitErr = <-waitDone:
			break loop
		}
	}
	stopRec()
	recErr := <-recDone
	if opt.Summary != nil {
		summary.Print(opt.Summary)
	}
	code := exitCode(cmd.ProcessState, waitErr)
	if recErr != nil {
		return code, fmt.Errorf("recording: %w", recErr)
	}
	return code, nil
}

func exitCode(ps *os.ProcessState, err error) int {
	if ps == nil {
		if err != nil {
			return 1
		}
		return 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
