package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/locate"
	"ros2_pulse/internal/logfmt"
	"ros2_pulse/internal/runner"
	"ros2_pulse/internal/window"
)

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func demoCmd() *cobra.Command {
	var f recordFlags
	var graph, distro string
	var duration time.Duration
	var jitter bool
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run the built-in simulated robot under the probe and show its windows live",
		Long: `demo starts simgraph, the stand-in ROS 2 graph, with the stand-in libtracetools of --distro,
preloads the probe, prints every window, and ends with the per-topic summary.
Without a terminal it stops after --duration (default 15s); on a terminal it runs until Ctrl-C
unless --duration is given.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("period") && os.Getenv("ROS_TOPIC_STATISTICS_PUBLISH_PERIOD") == "" {
				f.period = "1s" // a demo wants to be watched
			}
			opt, err := f.options()
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("duration") && !isTerminal(os.Stdout) {
				duration = 15 * time.Second
			}
			lib, err := locate.ProbeLib()
			if err != nil {
				return err
			}
			sim, err := locate.Simgraph()
			if err != nil {
				return err
			}
			tt, err := locate.SimTracetoolsDir(distro)
			if err != nil {
				return err
			}
			var file io.Writer = opt.Out
			live := opt.Format
			opt.Out = nil
			opt.OnWindow = func(w *window.Window, warns []health.Warning, final bool) {
				lo := opt.Log
				lo.Warns = warns
				b := logfmt.Render(live, w, lo)
				os.Stdout.Write(b)
				if file != nil {
					if _, err := file.Write(b); err != nil {
						fmt.Fprintf(os.Stderr, "pulse: cannot write %s: %v\n", f.out, err)
					}
				}
			}
			args := []string{sim, "--graph", graph, "--duration", strconv.FormatFloat(duration.Seconds(), 'f', 3, 64)}
			fmt.Fprintf(os.Stderr, "pulse demo: graph %s, %s tracetools stand-in, window %v\n", graph, distro, opt.Period)
			ro := runner.Options{Lib: lib, Recorder: opt, Env: []string{"LD_LIBRARY_PATH=" + tt}, Summary: os.Stderr,
				Stdout: os.Stderr, Stderr: os.Stderr}
			if jitter {
				ro.Env = append(ro.Env, "ROS_TOPIC_STATS_JITTER=1")
			}
			code, err := runner.Run(cmd.Context(), args, ro)
			if err != nil {
				return err
			}
			if code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
	addRecordFlags(c, &f, "record", "also write the windows to this file")
	c.Flags().StringVar(&graph, "graph", "demo", "demo, stress, or a graph file (syntax: sim/graphs/demo.graph)")
	c.Flags().StringVar(&distro, "distro", "jazzy", "stand-in libtracetools: humble, jazzy or kilted")
	c.Flags().DurationVar(&duration, "duration", 0, "stop after this long (default 15s without a terminal)")
	c.Flags().BoolVar(&jitter, "jitter", false, "gap tracking in the simulated processes: JITTER and PERIOD lines")
	return c
}
