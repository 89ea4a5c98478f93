package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"ros2_pulse/internal/bench"
	"ros2_pulse/internal/locate"
)

// benchFile writes dir/name through write.
func benchFile(dir, name string, write func(f *os.File) error) error {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// simulator finds simgraph, the Jazzy stand-in tracetools and the probe.
func simulator() (sim, simlib, lib string, err error) {
	if sim, err = locate.Simgraph(""); err != nil {
		return
	}
	if simlib, err = locate.SimTracetoolsDir(sim, "jazzy"); err != nil {
		return
	}
	lib, err = locate.ProbeLib()
	return
}

// probeArms are the overhead benchmarks' arms (bench.OverheadArms): each
// one's environment, for the probe library lib.
func probeArms(lib string) map[string][]string {
	return map[string][]string{"none": nil,
		"null":          {"LD_PRELOAD=" + filepath.Join(filepath.Dir(lib), "libros2_pulse_null.so")},
		"probe_untimed": {"LD_PRELOAD=" + lib, "ROS_PULSE_TIMING=0"}, // counting only: what timing adds is probe minus this
		"probe":         {"LD_PRELOAD=" + lib},
		"probe_gap":     {"LD_PRELOAD=" + lib, "ROS_TOPIC_STATS_JITTER=1"},
		// gap tracking without callback timing: what a user who needs gaps but not timing pays
		"probe_untimed_gap": {"LD_PRELOAD=" + lib, "ROS_PULSE_TIMING=0", "ROS_TOPIC_STATS_JITTER=1"}}
}

// report writes dir/name.csv and, given plot, dir/name.png, and prints the table.
func report(dir, name string, writeCSV func(*os.File) error, plot func(png string) error, table string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := benchFile(dir, name+".csv", writeCSV); err != nil {
		return err
	}
	if plot != nil {
		if err := plot(filepath.Join(dir, name+".png")); err != nil {
			return err
		}
	}
	fmt.Print(table)
	return nil
}

func benchCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "bench",
		Short: "Measure the probe's cost: hotpath, overhead, reader (CSV + PNG + a table)",
		Long: `bench runs the benchmarks of docs/PERFORMANCE.md and writes CSV and PNG files to --out:

  pulse bench hotpath    the counting path alone, against the floor and upstream's designs
  pulse bench links      what latency links add to a relayed message, a callback and a publish
  pulse bench bytes      what bytes add to a publish of a fixed-size and of a variable-size type
  pulse bench overhead   paired, order-rotated CPU of the stress and flat-out graphs
  pulse bench reader     CPU and RSS of pulse record over synthetic directories
  pulse bench viewers    CPU of pulse record and pulse top (in tmux) watching the stress graph
  pulse bench export     one Prometheus scrape of pulse export over synthetic directories
  pulse bench soak       resident memory of pulse record over an hour (make soak)
  pulse bench ros-farm   the stress farm as real ROS 2 nodes, paired and rotated (make bench-ros)
  pulse bench ros-instructions  real ROS 2 nodes under callgrind: each hook's instructions per event`,
	}
	c.PersistentFlags().StringVar(&out, "out", "docs/perf", "directory for CSV and PNG files")
	mkOut := func() error { return os.MkdirAll(out, 0o755) }

	var threads, endpoints []int
	var msgs int64
	var reps int
	var noCallgrind bool
	hot := &cobra.Command{
		Use:   "hotpath",
		Short: "CPU ns (and instructions) per message of every counting design",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bin, err := locate.Beside("hotpath", "run `make bench`")
			if err != nil {
				return err
			}
			o := bench.HotpathOptions{Binary: bin, Threads: threads, Endpoints: endpoints, Msgs: msgs, Reps: reps, Log: os.Stderr}
			if !noCallgrind {
				if o.Valgrind, err = exec.LookPath("valgrind"); err != nil {
					return fmt.Errorf("valgrind not found (apt-get install valgrind), or pass --no-callgrind")
				}
			}
			rows, err := bench.RunHotpath(o)
			if err != nil {
				return err
			}
			if err := mkOut(); err != nil {
				return err
			}
			if err := benchFile(out, "hotpath.csv", func(f *os.File) error { return bench.WriteHotpathCSV(f, rows) }); err != nil {
				return err
			}
			for _, t := range threads {
				if err := bench.PlotHotpath(rows, t, filepath.Join(out, fmt.Sprintf("hotpath_%dthreads.png", t))); err != nil {
					return err
				}
			}
			fmt.Print(bench.HotpathTable(rows))
			return nil
		},
	}
	hot.Flags().IntSliceVar(&threads, "threads", []int{1, 2, 8}, "thread counts")
	hot.Flags().IntSliceVar(&endpoints, "endpoints", []int{1, 4, 64, 1024}, "endpoints each thread cycles over")
	hot.Flags().Int64Var(&msgs, "msgs", 4000000, "messages per thread per repetition")
	hot.Flags().IntVar(&reps, "reps", 5, "repetitions (legs rotated each time)")
	hot.Flags().BoolVar(&noCallgrind, "no-callgrind", false, "skip instruction counts")

	// links and bytes: a probe switch, off against on, paired (bench.Switch).
	switchCmd := func(sw bench.Switch, short string, env func() ([]string, error)) *cobra.Command {
		var pairs int
		var msgs int64
		var endpoints []int
		c := &cobra.Command{
			Use:   sw.Name,
			Short: short,
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				bin, err := locate.Beside("hotpath", "run `make build`")
				if err != nil {
					return err
				}
				extra, err := env()
				if err != nil {
					return err
				}
				rows, err := bench.RunSwitch(sw, bin, endpoints, pairs, msgs, os.Stderr, extra...)
				if err != nil {
					return err
				}
				if err := mkOut(); err != nil {
					return err
				}
				if err := benchFile(out, sw.Name+".csv", func(f *os.File) error { return bench.WriteSwitchCSV(f, rows) }); err != nil {
					return err
				}
				if err := bench.PlotSwitch(sw, rows, filepath.Join(out, sw.Name+".png")); err != nil {
					return err
				}
				fmt.Print(bench.SwitchTable(sw, rows))
				return nil
			},
		}
		c.Flags().IntVar(&pairs, "pairs", 10, "pairs of processes, "+sw.Env+" off and on, order alternated")
		c.Flags().IntSliceVar(&endpoints, "endpoints", []int{1, 64}, "endpoints the thread cycles over")
		c.Flags().Int64Var(&msgs, "msgs", 2000000, "messages per leg per repetition")
		return c
	}
	links := switchCmd(bench.Links, "What latency links (ROS_PULSE_LINKS=1) add to a relayed message, a callback and a publish: paired, alternated",
		func() ([]string, error) { return nil, nil })
	bytesCmd := switchCmd(bench.Bytes, "What bytes (ROS_PULSE_BYTES=1) add to a publish of a fixed-size and of a variable-size type: paired, alternated",
		func() ([]string, error) {
			// the stand-in's sim_msgs type supports, which the probe dlopens by name
			lib, err := locate.Beside("../lib/sim/humble/libsim_msgs__rosidl_typesupport_introspection_cpp.so", "run `make build`")
			if err != nil {
				return nil, err
			}
			return []string{"LD_LIBRARY_PATH=" + filepath.Dir(lib)}, nil
		})

	var trials int
	var duration time.Duration
	var graphs, armNames []string
	var msgCost float64
	over := &cobra.Command{
		Use:   "overhead",
		Short: "All-in CPU of simgraph's stress and flat-out graphs: no probe, null shim, probe without and with timing, probe with gaps (with and without timing)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sim, simlib, lib, err := simulator()
			if err != nil {
				return err
			}
			arms := probeArms(lib)
			order, err := bench.SelectArms(armNames)
			if err != nil {
				return err
			}
			if err := mkOut(); err != nil {
				return err
			}
			for _, g := range graphs {
				o := bench.OverheadOptions{Simgraph: sim, SimLib: simlib, Arms: arms, Order: order,
					Graph: g, Trials: trials, Duration: duration, MsgCost: msgCost, Log: os.Stderr}
				if g == "flat" {
					o.MsgCost = 0 // flat out measures the probe per message at the stand-in's own pace
				}
				raw, rows, err := bench.RunOverhead(o)
				if err != nil {
					return err
				}
				if err := benchFile(out, "overhead_"+g+".csv", func(f *os.File) error { return bench.WriteOverheadCSV(f, raw) }); err != nil {
					return err
				}
				if err := bench.PlotOverhead(rows, g, filepath.Join(out, "overhead_"+g+".png")); err != nil {
					return err
				}
				fmt.Print(bench.OverheadTable(g, trials, rows))
			}
			return nil
		},
	}
	over.Flags().IntVar(&trials, "trials", 10, "paired trials (N)")
	over.Flags().DurationVar(&duration, "duration", 10*time.Second, "length of each run")
	over.Flags().StringSliceVar(&graphs, "graphs", []string{"stress", "flat"}, "graphs to run")
	over.Flags().StringSliceVar(&armNames, "arms", bench.OverheadArms, "arms to run, none among them (two arms alternate back to back)")
	over.Flags().Float64Var(&msgCost, "msgcost", 41, "µs of CPU each stand-in publish and delivery spends, as real rclcpp on Cyclone DDS does on the benchmark VM (PERFORMANCE §18); 0: the bare stand-in (flat out always runs bare)")

	var procs, eps []int
	var samples int
	reader := &cobra.Command{
		Use:   "reader",
		Short: "CPU and RSS of pulse record over synthetic segment directories",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			rows, err := bench.RunReader(self, procs, eps, samples, os.Stderr)
			if err != nil {
				return err
			}
			return report(out, "reader", func(f *os.File) error { return bench.WriteReaderCSV(f, rows) },
				func(png string) error { return bench.PlotReader(rows, png) }, bench.ReaderTable(rows))
		},
	}
	reader.Flags().IntSliceVar(&procs, "procs", []int{1, 10, 100, 1000}, "processes in the directory")
	reader.Flags().IntSliceVar(&eps, "endpoints", []int{10, 100, 1000}, "endpoints per process")
	reader.Flags().IntVar(&samples, "samples", 20, "samples per directory")

	var sampleDir, sampleProfile string
	var phases, each bool
	var settledFrom int
	var interval time.Duration
	sample := &cobra.Command{
		Use:    "reader-sample",
		Hidden: true, // the child process of `bench reader`
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if sampleProfile != "" { // where a live robot's reading goes (PERFORMANCE §20)
				stop, err := startCPUProfile(sampleProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			if phases {
				return bench.MeasurePhases(sampleDir, samples, interval, each, settledFrom, os.Stdout)
			}
			return bench.MeasureReader(sampleDir, samples, os.Stdout)
		},
	}
	sample.Flags().StringVar(&sampleDir, "dir", "", "segment directory")
	sample.Flags().IntVar(&samples, "samples", 20, "samples")
	// A live graph's directory, phase by phase (PERFORMANCE §20):
	// pulse bench reader-sample --phases --interval 1s --dir DIR --samples 60
	sample.Flags().BoolVar(&phases, "phases", false, "print the scan's, the window's and the text's CPU a sample")
	sample.Flags().BoolVar(&each, "each", false, "with --phases: a line per sample too, the window's diagnosis, the collector's CPU and collections apart")
	sample.Flags().IntVar(&settledFrom, "settled-from", 0, "with --phases: a last line with the reading of the samples from this one on (a launched graph settled)")
	sample.Flags().DurationVar(&interval, "interval", 0, "with --phases: the time between samples (1s: as pulse record)")
	sample.Flags().StringVar(&sampleProfile, "cpuprofile", "", "write a Go CPU profile of the samples")

	var mkProcs, mkEndpoints int
	mkdir := &cobra.Command{
		Use:    "reader-dir DIR",
		Hidden: true, // the directory a paired reader comparison samples (bench/reader_paired.sh)
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := os.MkdirAll(args[0], 0o700); err != nil {
				return err
			}
			return bench.MakeDirectory(args[0], mkProcs, mkEndpoints)
		},
	}
	mkdir.Flags().IntVar(&mkProcs, "procs", 100, "processes")
	mkdir.Flags().IntVar(&mkEndpoints, "endpoints", 50, "endpoints per process")

	var vTrials int
	var vMeasure, vWarmup time.Duration
	var vPeriod, vGraph string
	viewers := &cobra.Command{
		Use:   "viewers",
		Short: "CPU of pulse record and pulse top watching the stress graph, paired and rotated",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			sim, simlib, lib, err := simulator()
			if err != nil {
				return err
			}
			o := bench.ViewerOptions{Pulse: self, Simgraph: sim, SimLib: simlib, Probe: lib, Graph: vGraph, Period: vPeriod,
				Trials: vTrials, Measure: vMeasure, Warmup: vWarmup, Log: os.Stderr}
			trials, err := bench.RunViewers(o)
			if err != nil {
				return err
			}
			rows := bench.CompareViewers(trials)
			return report(out, "viewers", func(f *os.File) error { return bench.WriteViewersCSV(f, trials) },
				func(png string) error { return bench.PlotViewers(rows, vGraph, png) }, bench.ViewersTable(vGraph, vPeriod, vTrials, rows))
		},
	}
	viewers.Flags().IntVar(&vTrials, "trials", 6, "paired trials (N)")
	viewers.Flags().DurationVar(&vMeasure, "measure", 20*time.Second, "CPU measured over this long per viewer and trial")
	viewers.Flags().DurationVar(&vWarmup, "warmup", 3*time.Second, "time a viewer runs before it is measured")
	viewers.Flags().StringVar(&vPeriod, "period", "1s", "the viewers' refresh")
	viewers.Flags().StringVar(&vGraph, "graph", "stress", "the graph being watched")

	var eProcs, eEps []int
	var eScrapes int
	var eInterval time.Duration
	exp := &cobra.Command{
		Use:   "export",
		Short: "Wall time and CPU of one scrape of pulse export over synthetic segment directories",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rows, err := bench.RunExport(eProcs, eEps, eScrapes, eInterval, os.Stderr)
			if err != nil {
				return err
			}
			return report(out, "export", func(f *os.File) error { return bench.WriteExportCSV(f, rows) },
				func(png string) error { return bench.PlotExport(rows, png) }, bench.ExportTable(eInterval, rows))
		},
	}
	exp.Flags().IntSliceVar(&eProcs, "procs", []int{10, 100, 300}, "processes in the directory")
	exp.Flags().IntSliceVar(&eEps, "endpoints", []int{50}, "endpoints per process")
	exp.Flags().IntVar(&eScrapes, "scrapes", 30, "scrapes per directory")
	exp.Flags().DurationVar(&eInterval, "interval", 15*time.Second, "the scrape interval the CPU share is computed for")

	var cGraphs []string
	var cSettle, cInterval time.Duration
	card := &cobra.Command{
		Use:   "cardinality",
		Short: "Series and bytes one robot's pulse export costs a central Prometheus, projected to 100 and 1,000 robots",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sim, simlib, lib, err := simulator()
			if err != nil {
				return err
			}
			rows, err := bench.RunCardinality(bench.CardinalityOptions{Simgraph: sim, SimLib: simlib, Probe: lib, Graphs: cGraphs,
				Settle: cSettle, Interval: cInterval, Log: os.Stderr})
			if err != nil {
				return err
			}
			return report(out, "cardinality", func(f *os.File) error { return bench.WriteCardinalityCSV(f, rows) }, nil,
				bench.CardinalityTable(rows, cInterval))
		},
	}
	card.Flags().StringSliceVar(&cGraphs, "graphs", []string{"demo", "stress"}, "graphs to measure (built-in names or files)")
	card.Flags().DurationVar(&cSettle, "settle", 3*time.Second, "how long each graph runs before it is scraped")
	card.Flags().DurationVar(&cInterval, "interval", 15*time.Second, "the agents' scrape interval the samples per second are computed for")

	var sPeriods []time.Duration
	var sDuration, sEvery, sWarmup time.Duration
	var sGraph string
	soak := &cobra.Command{
		Use:   "soak",
		Short: "Resident memory of pulse record watching the stress graph for an hour, at 1 s and 100 ms windows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			sim, simlib, lib, err := simulator()
			if err != nil {
				return err
			}
			if sWarmup >= sDuration {
				return fmt.Errorf("--warmup (%s) must be shorter than --duration (%s)", sWarmup, sDuration)
			}
			samples, err := bench.RunSoak(bench.SoakOptions{Pulse: self, Simgraph: sim, SimLib: simlib, Probe: lib, Graph: sGraph,
				Periods: sPeriods, Duration: sDuration, Every: sEvery, Warmup: sWarmup, Log: os.Stderr})
			if err != nil {
				return err
			}
			rows := bench.SummariseSoak(samples, sPeriods, sWarmup)
			return report(out, "soak", func(f *os.File) error { return bench.WriteSoakCSV(f, samples) },
				func(png string) error { return bench.PlotSoak(samples, sPeriods, sGraph, png) }, bench.SoakTable(sGraph, sDuration, sWarmup, rows))
		},
	}
	soak.Flags().DurationSliceVar(&sPeriods, "periods", []time.Duration{time.Second, 100 * time.Millisecond}, "one pulse record per window period, side by side")
	soak.Flags().DurationVar(&sDuration, "duration", time.Hour, "how long the recorders run")
	soak.Flags().DurationVar(&sEvery, "every", 30*time.Second, "memory sampled this often")
	soak.Flags().DurationVar(&sWarmup, "warmup", 10*time.Minute, "samples before this are warm-up (plotted, not fitted)")
	soak.Flags().StringVar(&sGraph, "graph", "stress", "the graph being watched")

	c.AddCommand(hot, links, bytesCmd, over, reader, sample, mkdir, viewers, exp, card, soak)
	c.AddCommand(benchROSFarmCmd(&out), benchROSInstrCmd(&out), benchBarsCmd())
	return c
}
