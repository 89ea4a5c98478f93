package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/locate"
	"ros2_pulse/internal/runner"
	"ros2_pulse/internal/window"
)

func runCmd() *cobra.Command {
	var f recordFlags
	var noSummary, jitter, links, bytesOn, check bool
	c := &cobra.Command{
		Use:   "run [flags] -- CMD [ARGS...]",
		Short: "Run a command (e.g. ros2 launch) with the probe preloaded, record it, summarise it",
		Long: `run preloads libros2_pulse.so into CMD and every process it starts and puts their segments
in a run directory (run-<pid>-…) inside the machine-wide segment directory (--dir, else
ROS_PULSE_DIR, else /dev/shm/ros2_pulse-<uid>), where pulse top, export, check --live, graph,
doctor and bridge see them. It records the run's own processes while CMD runs (to --record),
forwards SIGINT/SIGTERM/SIGHUP to CMD's process group, prints a per-topic summary of the run's
own processes on stderr and exits with CMD's status. With --spec, every unhealthy window's
WARN/ALERT lines go to stderr as they happen (with the window's time) and a verdict line ends
the run; --check makes the spec's verdict the exit status when CMD itself succeeded. The segments stay after the run, so the
other views see its final counts; ended runs are removed after --retain by the next run, or
by any reader of the owner (record, export, top, check, graph, cpu, bridge).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt, err := f.options()
			if err != nil {
				return err
			}
			lib, err := locate.ProbeLib()
			if err != nil {
				return err
			}
			ro := runner.Options{Lib: lib, Recorder: opt, Stdout: os.Stdout, Stderr: os.Stderr}
			if jitter {
				ro.Env = append(ro.Env, "ROS_TOPIC_STATS_JITTER=1")
			}
			if bytesOn {
				ro.Env = append(ro.Env, "ROS_PULSE_BYTES=1")
			}
			if links {
				ro.Env = append(ro.Env, "ROS_PULSE_LINKS=1")
			}
			ro.Dir, ro.Retain = f.env.Dir, f.retain
			if !noSummary {
				ro.Summary = os.Stderr
			}
			var judge *liveJudge
			if opt.Spec != nil { // the verdicts go where the user looks, as they happen
				judge = &liveJudge{out: os.Stderr, period: opt.Period}
				ro.Recorder.OnWindow = func(w *window.Window, warns []health.Warning, final bool) { judge.observe(w, warns, final) }
			} else if check {
				return errors.New("--check needs a spec (--spec or ROS_TOPIC_STATS_EXPECTED)")
			}
			code, err := runner.Run(cmd.Context(), args, ro)
			if err != nil {
				fmt.Fprintf(os.Stderr, "pulse: %v\n", err)
			}
			var verdict error
			if judge != nil {
				verdict = judge.t.verdictAs("pulse run: spec", "no complete window was judged (the run was shorter than two periods)")
			}
			switch {
			case code != 0: // the command failed: its status wins
				return exitError{code}
			case check && verdict != nil:
				return verdict
			}
			return nil
		},
	}
	addRecordFlags(c, &f, "record", "write windows to this file, '-' for stdout (env ROS_TOPIC_STATS_OUTPUT_FILE)")
	c.Flags().BoolVar(&noSummary, "no-summary", false, "do not print the per-topic summary at the end")
	c.Flags().BoolVar(&check, "check", false, "exit with the spec's verdict (0 healthy, 1 violations, 2 cannot judge) when CMD succeeds")
	c.Flags().BoolVar(&jitter, "jitter", false, "gap tracking in CMD's processes (ROS_TOPIC_STATS_JITTER=1): JITTER and PERIOD lines")
	c.Flags().BoolVar(&bytesOn, "bytes", false, "bandwidth in CMD's processes (ROS_PULSE_BYTES=1): bytes per topic and endpoint, a bandwidth table in the summary (on when the spec bounds bytes)")
	c.Flags().BoolVar(&links, "links", false, "latency links in CMD's processes (ROS_PULSE_LINKS=1): LINK and PATH lines, end-to-end paths (on when the spec names a path)")
	return c
}
