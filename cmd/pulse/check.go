package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/spf13/cobra"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/logfmt"
	"ros2_pulse/internal/recorder"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// verdict is the exit status of a set of warnings: 0 healthy, 1 violations,
// 2 a declared rule that cannot be judged (a gap rule without gap data). A
// starved subscription and a server's unsent responses are said, but are not
// spec verdicts.
func verdict(warns []health.Warning) int {
	code := 0
	for _, w := range warns {
		switch w.Kind {
		case health.CannotJudge:
			return 2
		case health.RecvStarved, health.ServiceSendFailed:
		default:
			code = 1
		}
	}
	return code
}

// tally keeps the verdict of a whole check: the worst window decides the
// exit status, so a fault in the middle of a run is not forgiven by its end.
type tally struct {
	judged, unhealthy, worst int
	kinds                    map[health.Kind]int
}

func (t *tally) add(warns []health.Warning) {
	t.judged++
	if len(warns) > 0 {
		t.unhealthy++
	}
	t.worst = max(t.worst, verdict(warns))
	if t.kinds == nil {
		t.kinds = map[health.Kind]int{}
	}
	for _, w := range warns {
		t.kinds[w.Kind]++
	}
}

// verdict ends a check: the summary on stderr and the exit status of the
// worst window; nothing judged is "cannot judge" (2), saying why.
func (t *tally) verdict(whyNothing string) error { return t.verdictAs("pulse check", whyNothing) }

// verdictAs is verdict with the summary line's prefix ("pulse check", "pulse run").
func (t *tally) verdictAs(who, whyNothing string) error {
	if t.judged == 0 {
		fmt.Fprintf(os.Stderr, "%s: cannot judge: %s\n", who, whyNothing)
		return exitError{2}
	}
	fmt.Fprintf(os.Stderr, "%s: %s\n", who, t.summary())
	if t.worst != 0 {
		return exitError{t.worst}
	}
	return nil
}

// liveJudge prints live verdicts as check --live and run --spec give them:
// the first window (the evaluator's ramp-up), a final window and a sliver
// shorter than half a period are not judged; an unhealthy window gets the
// window header of the log grammar (its time), then its WARN/ALERT lines.
type liveJudge struct {
	out    io.Writer
	period time.Duration
	seen   int
	t      tally
}

// observe takes one window; it reports whether the window was judged.
func (j *liveJudge) observe(w *window.Window, warns []health.Warning, final bool) bool {
	if final || w.Seconds < 0.5*j.period.Seconds() {
		return false
	}
	if j.seen++; j.seen == 1 {
		return false
	}
	j.t.add(warns)
	if len(warns) > 0 {
		fmt.Fprintf(j.out, "# ts_ns=%d window_s=%.3f\n", w.TsNs, w.Seconds)
		for _, line := range logfmt.WarnLines(warns) {
			fmt.Fprintln(j.out, line)
		}
	}
	return true
}

// summary is the closing line: "2 of 9 judged windows unhealthy (3 topic_rate, 1 node_missing)".
func (t *tally) summary() string {
	if t.unhealthy == 0 {
		return fmt.Sprintf("healthy: %d judged windows", t.judged)
	}
	return fmt.Sprintf("%d of %d judged windows unhealthy (%s)", t.unhealthy, t.judged, kindCounts(t.kinds))
}

var kindOrder = []health.Kind{health.TopicRate, health.TopicGap, health.TopicLatency, health.TopicLoss, health.TopicBytes, health.TopicMissing,
	health.NodeMissing, health.TimerRate, health.CallbackSlow, health.TimerLate, health.TimerOverrun, health.NodeBusy,
	health.ServiceRate, health.ServiceSlow, health.ServiceTimeout, health.ServiceBacklog, health.ServiceMissing, health.ActionSlow,
	health.ServiceSendFailed, health.CannotJudge}

func kindCounts(kinds map[health.Kind]int) string {
	var parts []string
	for _, k := range kindOrder {
		if kinds[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
		}
	}
	return strings.Join(parts, ", ")
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
	return "unhealthy: " + kindCounts(kinds)
}

// openLog opens a log to check: a regular file, a pipe, or "-" for stdin.
// Directories and devices fail at once (/dev/zero would never end).
func openLog(path string) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if m := st.Mode(); !m.IsRegular() && m&os.ModeNamedPipe == 0 {
		f.Close()
		return nil, fmt.Errorf("%s: not a log file (%s)", path, m.Type())
	}
	return f, nil
}

// checkLogs judges recorded logs: every window after the first, the verdicts
// of unhealthy windows on stdout in the log grammar, the summary on stderr.
func checkLogs(stdout io.Writer, s *spec.Spec, paths []string, skipLast bool) error {
	var logs, details [][]*window.Window
	for _, p := range paths {
		f, err := openLog(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "pulse: cannot read log: %v\n", err)
			return exitError{2}
		}
		res, err := logfmt.Read(f)
		f.Close()
		switch {
		case err != nil:
			fmt.Fprintf(os.Stderr, "pulse: cannot read log %s: %v\n", p, err)
			return exitError{2}
		case len(res.Windows) == 0:
			fmt.Fprintf(os.Stderr, "pulse: no probe windows in %s (%s)\n", p, res)
			return exitError{2}
		case skipLast && len(res.Windows) < 2:
			fmt.Fprintf(os.Stderr, "pulse: --skip-last needs at least 2 windows in %s\n", p)
			return exitError{2}
		case res.Malformed > 0:
			fmt.Fprintf(os.Stderr, "pulse: %s: %s\n", p, res)
		}
		timeline, detail := logfmt.SplitDetail(res.Windows)
		logs = append(logs, timeline)
		if len(detail) > 0 {
			details = append(details, detail)
		}
	}
	// A record's detail windows (--detail) are judged apart from its lean
	// windows, which they overlap: timers, callbacks and calls only there.
	moments := health.JudgeRuns(s, logs, skipLast)
	if len(details) > 0 {
		moments = append(moments, health.JudgeRuns(s, details, skipLast)...)
		sort.SliceStable(moments, func(i, j int) bool { return moments[i].W.TsNs < moments[j].W.TsNs })
	}
	var t tally
	explained := map[string]bool{}
	for _, m := range moments {
		if !m.Judged {
			continue
		}
		m.Warns = append(m.Warns, health.SendFailures(m.W)...) // said as record said it; not a spec verdict
		t.add(m.Warns)
		if len(m.Warns) == 0 {
			continue
		}
		fmt.Fprintf(stdout, "# ts_ns=%d window_s=%.3f\n", m.W.TsNs, m.W.Seconds)
		for _, line := range logfmt.WarnLines(m.Warns) {
			fmt.Fprintln(stdout, line)
		}
		for _, w := range m.Warns {
			if what := w.Topic + w.Node; w.Kind == health.CannotJudge && !explained[what+w.Metric] {
				explained[what+w.Metric] = true
				fmt.Fprintf(os.Stderr, "pulse: the spec's %s rule for %s cannot be judged from the logs: %s\n", w.Metric, what, w.Why())
			}
		}
	}
	return t.verdict("no window was judged (the first window, final slivers and --skip-last are never judged)")
}

func checkCmd() *cobra.Command {
	var f recordFlags
	var live, watchdog, skipLast bool
	var forD time.Duration
	c := &cobra.Command{
		Use:   "check --spec FILE (--live [--for D] [--watchdog] | [--skip-last] LOG...)",
		Short: "Judge the machine, or recorded logs, against the spec; exit 0 healthy, 1 violations, 2 cannot judge",
		Long: `check judges every window after the first against the spec and prints the verdicts of
unhealthy windows (WARN and ALERT lines). The exit status is the worst window's verdict:
0 healthy, 1 violations, 2 cannot judge (a gap rule without gap data, or no judged window) or
bad input.

--live samples the segments of this machine every --period. --watchdog runs it as a systemd
Type=notify service: READY=1 at start, STATUS= with the current verdict after every window, and
WATCHDOG=1 only while healthy (deploy/systemd/pulse-check.service).

LOG... are logs written by pulse record or pulse run, or by upstream ros2_pulse, in text or jsonl
(sniffed per line; '-' reads stdin). Several logs are sources of the same time span (one per
process or per machine): their windows are aligned in time and merged. A window much shorter than
the log's usual window (a process's exit) is never judged; --skip-last also skips each log's last
window.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.specPath == "" {
				return errors.New("--spec (or ROS_TOPIC_STATS_EXPECTED) is required")
			}
			switch {
			case live && len(args) > 0:
				return errors.New("give --live or LOG files, not both")
			case !live && len(args) == 0:
				return errors.New("give LOG files to check, or --live to check this machine now")
			case live && skipLast:
				return errors.New("--skip-last applies to LOG files, not --live")
			case !live && (watchdog || forD != 0):
				return errors.New("--watchdog and --for need --live")
			}
			if !live {
				s, err := spec.Load(f.specPath)
				if err != nil {
					return err
				}
				return checkLogs(cmd.OutOrStdout(), s, args, skipLast)
			}
			f.defaultPeriod(cmd, "1s")
			opt, err := f.options()
			if err != nil {
				return err
			}
			return checkLive(cmd.OutOrStdout(), opt, f.env.Dir, forD, watchdog)
		},
	}
	addRecordFlags(c, &f, "out", "unused by check")
	_ = c.Flags().MarkHidden("out")
	c.Flags().BoolVar(&live, "live", false, "judge the segments of this machine as they are now")
	c.Flags().BoolVar(&watchdog, "watchdog", false, "systemd Type=notify: READY, STATUS, and WATCHDOG=1 only while healthy")
	c.Flags().DurationVar(&forD, "for", 0, "stop after this long (default: until SIGINT/SIGTERM)")
	c.Flags().BoolVar(&skipLast, "skip-last", false, "do not judge each log's last window (logs of a stack that has exited)")
	return c
}

// checkLive judges the live segments until ctx ends or forD passes.
func checkLive(stdout io.Writer, opt recorder.Options, dir string, forD time.Duration, watchdog bool) error {
	opt.Out = nil
	judge := &liveJudge{out: stdout, period: opt.Period}
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
		if !judge.observe(w, warns, final) {
			return
		}
		status := statusLine(warns, judge.t.judged)
		if verdict(warns) == 0 {
			notify("STATUS=" + status + "\nWATCHDOG=1")
		} else {
			notify("STATUS=" + status)
		}
	}
	rec, err := recorder.New(dir, opt)
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
	return judge.t.verdict("no complete window was judged (run longer than two periods)")
}
