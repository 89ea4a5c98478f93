package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/spf13/cobra"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/logfmt"
	"ros2_pulse/internal/recorder"
	"ros2_pulse/internal/window"
)

// verdict is the exit status of a set of warnings: 0 healthy, 1 violations,
// 2 a declared rule that cannot be judged (a gap rule without gap data).
func verdict(warns []health.Warning) int {
	code := 0
	for _, w := range warns {
		if w.Kind == health.CannotJudge {
			return 2
		}
		code = 1
	}
	return code
}

func statusLine(warns []health.Warning, judged int) string {
	if judged == 0 {
		return "waiting for the first judged window"
	}
	if len(warns) == 0 {
		return "healthy"
	}
	kinds := map[health.Kind]int{}
	for _, w := range warns {
		kinds[w.Kind]++
	}
	var parts []string
	for _, k := range []health.Kind{health.TopicRate, health.TopicGap, health.TopicMissing, health.NodeMissing, health.TimerRate, health.CannotJudge} {
		if kinds[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
		}
	}
	return "unhealthy: " + strings.Join(parts, ", ")
}

func checkCmd() *cobra.Command {
	var f recordFlags
	var live, watchdog bool
	var forD time.Duration
	c := &cobra.Command{
		Use:   "check --spec FILE --live [--for D] [--watchdog]",
		Short: "Judge the live machine against the spec; exit 0 healthy, 1 violations, 2 cannot judge",
		Long: `check samples the segments of this machine every --period, judges every window after the
first against the spec, prints the verdicts (WARN and ALERT lines) as they happen, and exits with
the verdict of the last judged window: 0 healthy, 1 violations, 2 cannot judge (a gap rule
without gap data, or no judged window) or bad input.

--watchdog runs it as a systemd Type=notify service: READY=1 at start, STATUS= with the current
verdict after every window, and WATCHDOG=1 only while healthy (deploy/systemd/pulse-check.service).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !live {
				return errors.New("checking recorded logs is not available yet: use --live")
			}
			if f.specPath == "" {
				return errors.New("--spec (or ROS_TOPIC_STATS_EXPECTED) is required")
			}
			if !cmd.Flags().Changed("period") && os.Getenv("ROS_TOPIC_STATISTICS_PUBLISH_PERIOD") == "" {
				f.period = "1s"
			}
			opt, err := f.options()
			if err != nil {
				return err
			}
			opt.Out = nil
			opt.Retain = -1 // a checker only reads: cleaning up is record's job
			judged, last := 0, []health.Warning(nil)
			notified := false
			notify := func(state string) {
				if !watchdog {
					return
				}
				ok, err := daemon.SdNotify(false, state)
				if err != nil {
					fmt.Fprintf(os.Stderr, "pulse: sd_notify: %v\n", err)
				} else if !ok && !notified {
					fmt.Fprintln(os.Stderr, "pulse: --watchdog: NOTIFY_SOCKET is not set (not running under systemd Type=notify)")
				}
				notified = true
			}
			opt.OnWindow = func(w *window.Window, warns []health.Warning, final bool) {
				if final || w.Seconds < 0.5*opt.Period.Seconds() {
					return // not judged
				}
				judged++
				if judged == 1 {
					return // the evaluator never judges the first window (ramp-up)
				}
				last = warns
				for _, line := range logfmt.WarnLines(warns) {
					fmt.Fprintln(cmd.OutOrStdout(), line)
				}
				status := statusLine(warns, judged-1)
				if verdict(warns) == 0 {
					notify("STATUS=" + status + "\nWATCHDOG=1")
				} else {
					notify("STATUS=" + status)
				}
			}
			rec, err := recorder.New(f.env.Dir, opt)
			if err != nil {
				return err
			}
			defer rec.Close()
			notify("READY=1\nSTATUS=" + statusLine(nil, 0))
			ctx, cancel := signalContext()
			defer cancel()
			if forD > 0 {
				ctx, cancel = context.WithTimeout(ctx, forD)
				defer cancel()
			}
			if err := rec.Run(ctx); err != nil {
				return err
			}
			notify("STOPPING=1")
			if judged < 2 {
				fmt.Fprintln(os.Stderr, "pulse: cannot judge: no complete window was judged (run longer than two periods)")
				return exitError{2}
			}
			fmt.Fprintf(os.Stderr, "pulse check: %s\n", statusLine(last, judged-1))
			if code := verdict(last); code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
	addRecordFlags(c, &f, "out", "unused by check")
	_ = c.Flags().MarkHidden("out")
	c.Flags().BoolVar(&live, "live", false, "judge the segments of this machine as they are now")
	c.Flags().BoolVar(&watchdog, "watchdog", false, "systemd Type=notify: READY, STATUS, and WATCHDOG=1 only while healthy")
	c.Flags().DurationVar(&forD, "for", 0, "stop after this long (default: until SIGINT/SIGTERM)")
	return c
}
