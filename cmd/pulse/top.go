package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/top"
)

func topCmd() *cobra.Command {
	var f recordFlags
	var logPath, cpuProfile string
	c := &cobra.Command{
		Use:   "top [--period 1s] [--spec F] [--log FILE]",
		Short: "Live dashboard: topic rates against the spec, nodes with CPU and memory, warnings with their age",
		Long: `top shows every topic of this machine (publish and receive rate, intra-process share, largest
gap and silence when gap data exists, a sparkline of the rate, and a status against the spec),
every node (its process, alive/quiet/exited, CPU % and RSS, its topics), and the warnings of the
spec and of lagging subscribers, each with its age.

Keys: tab switches tables, ↑/↓ move, enter focuses a topic or node (its endpoints per process),
s sorts, / filters, p pauses, ? helps, q quits. --log replays a recorded log (text or jsonl)
with the same screens, one window per --period; paused, ←/→ step through it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !isTerminal(os.Stdout) || !isTerminal(os.Stdin) {
				return errors.New("top needs a terminal; use `pulse record` for a log")
			}
			f.defaultPeriod(cmd, "1s")
			opt, err := f.options()
			if err != nil {
				return err
			}
			title := "live " + opt.Period.String()
			var frames []top.Frame
			if logPath != "" {
				var s *spec.Spec
				if f.specPath != "" {
					s = opt.Spec
				}
				fr, res, err := top.LoadLog(logPath, s)
				if err != nil {
					return fmt.Errorf("cannot read log: %w", err)
				}
				if len(fr) == 0 {
					return fmt.Errorf("no probe windows in %s (%s)", logPath, res)
				}
				frames, title = fr, filepath.Base(logPath)
			}
			if cpuProfile != "" { // for measuring the dashboard's own cost
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			m := top.New(title, logPath != "")
			m.Empty = f.env.NothingThere()
			// The renderer wakes at its frame rate even when nothing changed: 60 fps
			// cost a whole percent of a core; 10 keeps keys snappy (100 ms).
			p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithFPS(10))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if frames != nil {
				go top.Replay(ctx, frames, opt.Period, p.Send)
			} else {
				go func() { _ = top.Live(ctx, f.env.Dir, opt, p.Send) }()
			}
			_, err = p.Run()
			return err
		},
	}
	addRecordFlags(c, &f, "out", "unused by top")
	_ = c.Flags().MarkHidden("out")
	_ = c.Flags().MarkHidden("format")
	c.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile of the dashboard")
	_ = c.Flags().MarkHidden("cpuprofile")
	c.Flags().StringVar(&logPath, "log", "", "replay a recorded log (text or jsonl) instead of the live machine")
	return c
}
