package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"ros2_pulse/internal/cpu"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

func cpuCmd() *cobra.Command {
	var period, duration time.Duration
	var out, summary string
	var threads, probedOnly bool
	var dir string
	var retain time.Duration
	c := &cobra.Command{
		Use:   "cpu [--period 1s] [--duration D] [--out FILE.csv] [--threads] | --summary FILE.csv",
		Short: "Sample the CPU and memory of every ROS process, named by its nodes, as CSV",
		Long: `cpu samples /proc/<pid>/stat (utime+stime) and the resident memory of every probed process
once per period, names each by the nodes its segment lists, and records the load average beside
each sample. ROS processes that are not probed are found by their command line (--ros-args or a
__node:= remap) and named by the remap or the entry point; wrappers such as 'ros2 run' are not
weighed. Rows are CSV: ` + fmt.Sprint(cpu.Header) + `.

--summary FILE.csv prints the mean, median and max CPU per node (and per thread with --threads),
and the cost of a wake-up: the process's CPU time divided by the callbacks and takes the probe saw
in it (deliveries, timer fires, service requests). A process with several nodes has one figure for
all of them: CPU time belongs to the process.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if summary != "" {
				return cpuSummary(cmd.OutOrStdout(), summary)
			}
			if period < 10*time.Millisecond {
				return errors.New("--period must be at least 10ms (the kernel counts CPU in 10 ms ticks)")
			}
			env, err := readEnv(dir)
			if err != nil {
				return err
			}
			var w io.Writer = cmd.OutOrStdout()
			if out != "" && out != "-" {
				f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			sampler, err := cpu.New("", threads)
			if err != nil {
				return err
			}
			defer sampler.Close()
			cw := csv.NewWriter(w)
			if err := cw.Write(cpu.Header); err != nil {
				return err
			}
			reader := segment.NewReader(env.Dir)
			reader.Retain(retain, true)
			defer reader.Close()
			ctx, cancel := signalContext()
			defer cancel()
			if duration > 0 {
				ctx, cancel = context.WithTimeout(ctx, duration)
				defer cancel()
			}
			empty := segment.EmptyNotice{Msg: env.NothingThere() + "; only unprobed ROS processes are sampled"}
			tick := time.NewTicker(period)
			defer tick.Stop()
			var prev *segment.Scan
			start := segment.NowMono()
			for {
				var procs []window.Proc
				var wakeups map[int]uint64
				if scan, err := reader.Scan(); err == nil {
					procs = window.Procs(scan)
					empty.Observe(scan, os.Stderr)
					if prev != nil { // callbacks and takes since the previous sample, per process
						wakeups = window.Wakeups(window.Compute(prev, scan, start, time.Now().UnixNano(), window.Options{}))
						reader.Recycle(prev)
					}
					prev = scan
				}
				samples := sampler.Sample(cpu.Targets(procs, !probedOnly, ""))
				for i := range samples {
					if n, ok := wakeups[samples[i].Pid]; ok && samples[i].Tid == 0 {
						samples[i].Wakeups = int64(n)
					}
				}
				if err := cpu.WriteCSV(cw, samples); err != nil {
					return fmt.Errorf("writing samples: %w", err)
				}
				select {
				case <-ctx.Done():
					return nil
				case <-tick.C:
				}
			}
		},
	}
	c.Flags().DurationVar(&period, "period", time.Second, "sampling period")
	c.Flags().DurationVar(&duration, "duration", 0, "stop after this long (default: until SIGINT/SIGTERM)")
	c.Flags().StringVar(&out, "out", "", "CSV file (default stdout)")
	c.Flags().BoolVar(&threads, "threads", false, "also one row per thread")
	c.Flags().BoolVar(&probedOnly, "probed-only", false, "only processes with a segment (skip the command-line fallback)")
	c.Flags().StringVar(&summary, "summary", "", "print mean, median and max CPU per node of a CSV written by pulse cpu")
	c.Flags().StringVar(&dir, "dir", "", dirHelp)
	addRetainFlag(c, &retain)
	return c
}

func cpuSummary(out io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	stats, err := cpu.Summarize(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "node\tthread\tsamples\tmean %\tmedian %\tmax %\tRSS MiB\tload1\twake-ups/s\tCPU ms/wake-up\t")
	for _, s := range stats {
		wake, cost := "-", "-"
		if !math.IsNaN(s.MsPerWakeup) {
			wake, cost = fmt.Sprintf("%.1f", s.WakeupHz), fmt.Sprintf("%.3f", s.MsPerWakeup)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t%.1f\t%.2f\t%s\t%s\t\n", s.Name, s.Thread, s.N, s.Mean, s.Median, s.Max,
			s.MeanRSSBytes/(1<<20), s.MeanLoad, wake, cost)
	}
	return tw.Flush()
}
