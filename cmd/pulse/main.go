// pulse reads the segments that libros2_pulse.so keeps in every probed ROS 2
// process and answers: is every topic flowing at the rate it should, and is
// every node alive? This file only wires subcommands; the work lives in
// internal/.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"ros2_pulse/internal/zlog"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"ros2_pulse/internal/config"
	"ros2_pulse/internal/logfmt"
	"ros2_pulse/internal/recorder"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

var version = "dev"

// exitError carries an exit status through cobra without printing twice.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	root := &cobra.Command{
		Use:           "pulse",
		Short:         "Live topic rates and node liveness for ROS 2, without subscribing",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(runCmd(), recordCmd(), checkCmd(), envCmd(), doctorCmd(), demoCmd(), dumpCmd(), benchCmd(), cpuCmd(), topCmd(), exportCmd(), bridgeCmd(), graphCmd(), webCmd())
	root.AddCommand(genDocsCmd(root))
	if err := root.Execute(); err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		fmt.Fprintf(os.Stderr, "pulse: %v\n", err)
		os.Exit(2)
	}
}

// recordFlags are shared by record, run and demo; their defaults come from the environment.
type recordFlags struct {
	period, format, out string
	specPath            string
	dir                 string
	allTopics, truncate bool
	retain              time.Duration
	detail              string
	env                 config.Env
}

// dirHelp is the one description of --dir, for every command that reads segments.
const dirHelp = "segment directory to read (default ROS_PULSE_DIR, else /dev/shm/ros2_pulse-<uid>); run directories inside it are read too"

// defaultRetain is how long an exited process (and an ended run) stays in
// every view before it is left out and its segment removed.
const defaultRetain = 5 * time.Minute

func addRetainFlag(c *cobra.Command, retain *time.Duration) {
	c.Flags().DurationVar(retain, "retain", defaultRetain,
		"show an exited process (and keep an ended run) this long after it was first seen exited, then leave it out and remove its segment (negative: forever)")
}

// readEnv is the environment with --dir applied.
func readEnv(dirFlag string) (config.Env, error) { return config.FromOS().WithDir(dirFlag) }

func addRecordFlags(c *cobra.Command, f *recordFlags, outName, outHelp string) {
	f.env = config.FromOS()
	c.Flags().StringVar(&f.period, "period", f.env.Period.String(), "window length: seconds or a duration (env ROS_TOPIC_STATISTICS_PUBLISH_PERIOD)")
	c.Flags().StringVar(&f.format, "format", string(f.env.Format), "text or jsonl (env ROS_TOPIC_STATS_FORMAT)")
	c.Flags().StringVar(&f.out, outName, f.env.OutputFile, outHelp)
	c.Flags().BoolVar(&f.allTopics, "all-topics", false, "include /rosout and /parameter_events")
	c.Flags().StringVar(&f.dir, "dir", "", dirHelp)
	c.Flags().BoolVar(&f.truncate, "truncate", false, "start the output file afresh instead of appending this run to it")
	addRetainFlag(c, &f.retain)
	c.Flags().StringVar(&f.specPath, "spec", os.Getenv("ROS_TOPIC_STATS_EXPECTED"), "expected-rate spec (YAML) to judge every window (env ROS_TOPIC_STATS_EXPECTED)")
	c.Flags().StringVar(&f.detail, "detail", "auto", "write lean windows (topics, nodes, processes) and a whole window (endpoints, timers, callbacks, threads, calls) over every DETAIL; 0 writes every window whole; auto: 1m into a .zst file, else 0")
}

// autoDetail is the detail period of a compressed recording (a file named
// .zst, the form for long recordings): a day of a robot's whole 1 s windows
// is tens of GB even compressed, of lean ones about a hundred MB.
const autoDetail = time.Minute

// detailPeriod reads --detail for windows of period written to out.
func detailPeriod(flag, out string, period time.Duration) (time.Duration, error) {
	var d time.Duration
	switch flag {
	case "auto", "":
		if zlog.Compressed(out) {
			d = autoDetail
		}
	case "0", "off":
	default:
		var err error
		if d, err = config.ParsePeriod(flag); err != nil {
			return 0, fmt.Errorf("--detail: %w (or 0, auto)", err)
		}
	}
	if d <= period {
		return 0, nil // every window is as long as a detail window: write them whole
	}
	return d, nil
}

// defaultPeriod gives a view its own default window period, unless
// --period or ROS_TOPIC_STATISTICS_PUBLISH_PERIOD chose one.
func (f *recordFlags) defaultPeriod(cmd *cobra.Command, period string) {
	if !cmd.Flags().Changed("period") && os.Getenv("ROS_TOPIC_STATISTICS_PUBLISH_PERIOD") == "" {
		f.period = period
	}
}

func (f *recordFlags) options() (recorder.Options, error) {
	env, err := f.env.WithDir(f.dir)
	if err != nil {
		return recorder.Options{}, err
	}
	f.env = env
	period, err := config.ParsePeriod(f.period)
	if err != nil {
		return recorder.Options{}, fmt.Errorf("--period: %w", err)
	}
	format, err := logfmt.ParseFormat(f.format)
	if err != nil {
		return recorder.Options{}, fmt.Errorf("--format: %w", err)
	}
	detail, err := detailPeriod(f.detail, f.out, period)
	if err != nil {
		return recorder.Options{}, err
	}
	opt := recorder.Options{
		Period: period, Format: format, Detail: detail, Log: logfmt.Options{EmitIdle: f.env.EmitIdle},
		Window: window.Options{ShowBuiltin: f.allTopics}, Warn: os.Stderr, Empty: f.env.NothingThere(), Retain: f.retain,
	}
	if f.specPath != "" {
		if opt.Spec, err = spec.Load(f.specPath); err != nil {
			return recorder.Options{}, err
		}
	}
	switch f.out {
	case "":
	case "-":
		opt.Out = os.Stdout
	default:
		if err := prepareOutput(f.out, f.truncate); err != nil {
			return recorder.Options{}, err
		}
		opt.Out = &recorder.RotatingFile{Path: f.out, MaxBytes: f.env.MaxBytes}
	}
	opt.Run = newRun()
	return opt, nil
}

// prepareOutput says that a run is appended to an existing recording (each
// run has its own header, and offline check judges each on its own), or
// empties it for --truncate.
func prepareOutput(path string, truncate bool) error {
	st, err := os.Stat(path)
	if err != nil || st.Size() == 0 || !st.Mode().IsRegular() {
		return nil // a new file, or something the first write will report
	}
	if truncate {
		if err := os.Truncate(path, 0); err != nil {
			return fmt.Errorf("--truncate: %w", err)
		}
		return nil
	}
	fmt.Fprintf(os.Stderr, "pulse: %s holds %d bytes of earlier runs: appending this run after them (--truncate starts it afresh)\n", path, st.Size())
	return nil
}

// newRun makes the header of this run of a recording.
func newRun() *logfmt.RunInfo {
	var id [8]byte
	_, _ = rand.Read(id[:])
	host, _ := os.Hostname()
	return &logfmt.RunInfo{ID: hex.EncodeToString(id[:]), Host: host, Version: version, StartNs: time.Now().UnixNano()}
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func recordCmd() *cobra.Command {
	var f recordFlags
	var duration time.Duration
	var cpuProfile string
	c := &cobra.Command{
		Use:   "record",
		Short: "Write a window of every probed process on this machine every period",
		Long: `record scans the segment directory (--dir, else ROS_PULSE_DIR, else /dev/shm/ros2_pulse-<uid>),
and the run directories of pulse run and pulse demo inside it, every period and writes one window per period in the text or jsonl grammar.
Dead processes are reported as exited, then their segments are removed after --retain.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opt, err := f.options()
			if err != nil {
				return err
			}
			if f.out == "" {
				opt.Out = os.Stdout
			}
			opt.ReuseWindows = true // record renders each window and keeps none
			rec, err := recorder.New(f.env.Dir, opt)
			if err != nil {
				return err
			}
			defer rec.Close()
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			ctx, cancel := signalContext()
			defer cancel()
			if duration > 0 {
				ctx, cancel = context.WithTimeout(ctx, duration)
				defer cancel()
			}
			return rec.Run(ctx)
		},
	}
	addRecordFlags(c, &f, "out", "output file, '-' for stdout (env ROS_TOPIC_STATS_OUTPUT_FILE; default stdout); rotated at ROS_TOPIC_STATS_MAX_BYTES")
	c.Flags().DurationVar(&duration, "duration", 0, "stop after this long (default: until SIGINT/SIGTERM)")
	c.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile of the recorder")
	_ = c.Flags().MarkHidden("cpuprofile")
	return c
}
