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

// benchROSFarmCmd is `pulse bench ros-farm`: seed 000's stress farm as real
// ROS 2 nodes (ros/pulse_testnodes), in the ROS environment pulse was started
// in (scripts/bench-ros.sh sources the prefix and builds the nodes).
func benchROSFarmCmd(out *string) *cobra.Command {
	var ws, rmw, tag string
	var trials, threads, domain int
	var duration, warmup time.Duration
	var armNames []string
	var pin, concurrent bool
	var baseline string
	c := &cobra.Command{
		Use:   "ros-farm",
		Short: "CPU of the stress farm as real ROS 2 nodes: no probe, null shim, counting only, defaults; paired and rotated",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if trials < 2 {
				return fmt.Errorf("--trials %d: a paired comparison needs at least 2", trials)
			}
			node, arms, order, err := rosBench(ws, armNames)
			if err != nil {
				return err
			}
			if baseline != "" { // two probe builds, paired: "none" stands for the older one
				if _, err := os.Stat(baseline); err != nil {
					return fmt.Errorf("--baseline: %v", err)
				}
				arms["none"] = []string{"LD_PRELOAD=" + baseline}
			}
			o := bench.ROSFarmOptions{Node: node, RMW: rmw, Arms: arms, Order: order, Trials: trials,
				Duration: duration, Threads: threads, Domain: domain, Pin: pin, Warmup: warmup, Concurrent: concurrent, Log: os.Stderr}
			raw, rows, err := bench.RunROSFarm(o)
			if err != nil {
				return err
			}
			name := "ros_farm_" + tag
			return report(*out, name, func(f *os.File) error { return bench.WriteOverheadCSV(f, raw) },
				func(png string) error { return bench.PlotOverhead(rows, "real ROS farm", png) }, // the tag names the file
				bench.OverheadTable("real ROS farm "+tag, trials, rows))
		},
	}
	c.Flags().StringVar(&ws, "ws", "", "install directory of ros/pulse_testnodes (merged)")
	c.Flags().StringVar(&rmw, "rmw", "rmw_cyclonedds_cpp", "RMW_IMPLEMENTATION")
	c.Flags().StringVar(&tag, "tag", "ros", "names the output files: ros_farm_<tag>.csv and .png")
	c.Flags().IntVar(&trials, "trials", 20, "paired trials (N)")
	c.Flags().IntVar(&threads, "threads", 1, "MultiThreadedExecutor threads per process (fewer than the cores: quieter arms)")
	c.Flags().IntVar(&domain, "domain", 57, "the farm's own ROS_DOMAIN_ID")
	c.Flags().DurationVar(&warmup, "warmup", 3*time.Second, "CPU measured from this long after the publishers start (0: the whole run)")
	c.Flags().BoolVar(&concurrent, "concurrent", false, "run each arm beside a farm without the probe, at once, in two domains (--domain and the next)")
	c.Flags().BoolVar(&pin, "pin", false, "pin each process to one CPU (taskset): quieter arms")
	c.Flags().DurationVar(&duration, "duration", 10*time.Second, "how long the publishers publish each run")
	c.Flags().StringSliceVar(&armNames, "arms", []string{"none", "null", "probe_untimed", "probe"}, "arms to run, none among them")
	c.Flags().StringVar(&baseline, "baseline", "", "another build of the probe (a libros2_pulse.so) that the \"none\" arm preloads: the arms then read against that build, not against no probe")
	c.MarkFlagRequired("ws")
	return c
}

// benchROSInstrCmd is `pulse bench ros-instructions`: a talker and a
// listener, a server and a client, as real ROS 2 nodes under callgrind, once
// per arm: the instructions each probe hook spends per event.
func benchROSInstrCmd(out *string) *cobra.Command {
	var ws, rmw, tag, keep string
	var domain int
	var duration time.Duration
	var armNames []string
	var farmScale float64
	c := &cobra.Command{
		Use:   "ros-instructions",
		Short: "Instructions per publish, take, callback, timer call and service call of real ROS 2 nodes under callgrind, per arm",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			vg, err := exec.LookPath("valgrind")
			if err != nil {
				return fmt.Errorf("valgrind not found (apt-get install valgrind)")
			}
			node, arms, order, err := rosBench(ws, armNames)
			if err != nil {
				return err
			}
			o := bench.ROSInstrOptions{Node: node, Valgrind: vg, RMW: rmw, Arms: arms, Order: order,
				Duration: duration, Domain: domain, FarmScale: farmScale, Keep: keep, Log: os.Stderr}
			rows, events, err := bench.RunROSInstructions(o)
			if err != nil {
				return err
			}
			return report(*out, "ros_instructions_"+tag, func(f *os.File) error { return bench.WriteInstrCSV(f, rows) },
				nil, bench.InstrTable(tag, order, events))
		},
	}
	c.Flags().StringVar(&ws, "ws", "", "install directory of ros/pulse_testnodes (merged)")
	c.Flags().StringVar(&rmw, "rmw", "rmw_cyclonedds_cpp", "RMW_IMPLEMENTATION")
	c.Flags().StringVar(&tag, "tag", "ros", "names the output file: ros_instructions_<tag>.csv")
	c.Flags().IntVar(&domain, "domain", 58, "the nodes' own ROS_DOMAIN_ID")
	c.Flags().StringVar(&keep, "keep", "", "keep every run's callgrind profiles in this directory (for callgrind_annotate)")
	c.Flags().Float64Var(&farmScale, "farm", 0, "also run the stress farm at this fraction of its rates, with the cache simulation (e.g. 0.05; 0: not)")
	c.Flags().DurationVar(&duration, "duration", 8*time.Second, "how long the second node of each pair runs")
	c.Flags().StringSliceVar(&armNames, "arms", []string{"none", "null", "probe_untimed", "probe"}, "arms to run, none among them")
	c.MarkFlagRequired("ws")
	return c
}

// rosBench finds pulse_node in ws, checks that a ROS environment is set,
// and returns the arms' environments (probeArms) and their order.
func rosBench(ws string, armNames []string) (node string, arms map[string][]string, order []string, err error) {
	node = filepath.Join(ws, "lib", "pulse_testnodes", "pulse_node")
	if _, err := os.Stat(node); err != nil {
		return "", nil, nil, fmt.Errorf("--ws %s: no lib/pulse_testnodes/pulse_node there (build ros/pulse_testnodes: scripts/bench-ros.sh does)", ws)
	}
	if os.Getenv("AMENT_PREFIX_PATH") == "" {
		return "", nil, nil, fmt.Errorf("no ROS environment: source a ROS 2 prefix's setup.bash first (scripts/bench-ros.sh does)")
	}
	lib, err := locate.ProbeLib()
	if err != nil {
		return "", nil, nil, err
	}
	order, err = bench.SelectArms(armNames)
	return node, probeArms(lib), order, err
}
