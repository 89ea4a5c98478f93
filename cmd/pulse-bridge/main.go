//go:build cyclonedds

// pulse-bridge publishes the machine's windows as /statistics and
// /diagnostics on the ROS graph, over CycloneDDS. `pulse bridge` runs it;
// it is a separate binary so that pulse itself needs no DDS library.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"ros2_pulse/internal/bridge"
	"ros2_pulse/internal/config"
	"ros2_pulse/internal/dds"
	"ros2_pulse/internal/health"
	"ros2_pulse/internal/recorder"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "pulse bridge: %v\n", err)
		os.Exit(2)
	}
}

func run() error {
	fs := flag.NewFlagSet("pulse bridge", flag.ContinueOnError)
	statistics := fs.Bool("statistics", false, "publish /statistics (statistics_msgs/MetricsMessage)")
	diagnostics := fs.Bool("diagnostics", false, "publish /diagnostics (diagnostic_msgs/DiagnosticArray)")
	specPath := fs.String("spec", os.Getenv("ROS_TOPIC_STATS_EXPECTED"), "expected-rate spec: the diagnostics levels")
	periodText := fs.String("period", "1s", "window period")
	forD := fs.Duration("for", 0, "stop after this long (default: until SIGINT/SIGTERM)")
	retain := fs.Duration("retain", 5*time.Minute, "show an exited process this long after it was first seen exited, then leave it out and remove its segment (negative: forever)")
	dirFlag := fs.String("dir", "", "segment directory to read (default ROS_PULSE_DIR, else /dev/shm/ros2_pulse-<uid>); run directories inside it are read too")
	distroFlag := fs.String("distro", "", "join the graph by this distro's rules: humble, jazzy or kilted (default ROS_DISTRO, else what the probed processes report, else humble)")
	nodeName := fs.String("node-name", bridge.DefaultNodeName, "the ROS node the bridge is in the graph (ros2 node list), with its namespace")
	golden := fs.Bool("golden", false, "publish only the fixed messages of the CDR golden test, every 100 ms")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if !*statistics && !*diagnostics {
		*statistics, *diagnostics = true, true // neither named: both
	}
	period, err := config.ParsePeriod(*periodText)
	if err != nil {
		return fmt.Errorf("--period: %w", err)
	}
	var s *spec.Spec
	if *specPath != "" {
		if s, err = spec.Load(*specPath); err != nil {
			return err
		}
	}
	node, err := bridge.ParseNodeName(*nodeName)
	if err != nil {
		return err
	}
	domain, err := bridge.DomainFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	env, err := config.FromOS().WithDir(*dirFlag)
	if err != nil {
		return err
	}
	distro, distroFrom, err := chooseDistro(*distroFlag, env.Dir)
	if err != nil {
		return err
	}
	disc := bridge.ComposeDiscovery(distro, os.Getenv, bridge.ThisHost())
	disc.DistroFrom = distroFrom
	for _, w := range disc.Warnings { // what rcl and rmw_cyclonedds say in the same case
		fmt.Fprintf(os.Stderr, "pulse bridge: %s\n", w)
	}
	if err := bridge.CheckURI(disc.URI); err != nil {
		return err
	}
	domainFrom := "default"
	if os.Getenv("ROS_DOMAIN_ID") != "" {
		domainFrom = "ROS_DOMAIN_ID"
	}
	gidSize := bridge.GIDSize(distro)
	described := fmt.Sprintf("node %s (ros_discovery_info, %d-byte GIDs); %s", node.FullName(), gidSize, disc.Describe(domain, domainFrom))
	fmt.Fprintf(os.Stderr, "pulse bridge: %s\n", described)
	// pulse doctor shows the same while the bridge runs.
	if st, err := bridge.WriteStatus(env.Dir, strings.Join(append(disc.Warnings, described), "\n")); err != nil {
		fmt.Fprintf(os.Stderr, "pulse bridge: cannot leave a status for pulse doctor in %s: %v\n", env.Dir, err)
	} else {
		defer st.Close()
	}
	pub, err := dds.Open(domain, disc.Config, node, gidSize)
	if err != nil {
		return fmt.Errorf("DDS domain %d: %w", domain, err)
	}
	defer pub.Close()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if *forD > 0 {
		ctx, cancel = context.WithTimeout(ctx, *forD)
		defer cancel()
	}
	if *golden {
		if err := pub.EntitiesInfo(bridge.GoldenEntitiesInfo()); err != nil {
			return err
		}
		for ctx.Err() == nil {
			if err := pub.Statistics([]bridge.Metrics{bridge.GoldenMetrics()}); err != nil {
				return err
			}
			if err := pub.Diagnostics(bridge.GoldenArray()); err != nil {
				return err
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
		return nil
	}
	host, _ := os.Hostname()
	lag := health.NewLagDetector()
	opt := recorder.Options{Period: period, Spec: s, Retain: *retain, Warn: os.Stderr, Empty: env.NothingThere()}
	opt.OnWindow = func(w *window.Window, warns []health.Warning, final bool) {
		if final {
			return
		}
		warns = append(warns, lag.Observe(w, final, time.Unix(0, w.TsNs))...)
		if *statistics {
			ms := bridge.Statistics(w)
			gap := bridge.StatisticsGap(len(ms), period)
			for i := range ms {
				if i > 0 {
					time.Sleep(gap) // the recorder's grid does not move: it waits for its next deadline
				}
				if err := pub.Statistics(ms[i : i+1]); err != nil {
					fmt.Fprintf(os.Stderr, "pulse bridge: %v\n", err)
					break
				}
			}
		}
		if *diagnostics {
			if err := pub.Diagnostics(bridge.Diagnostics(w, s, warns, host)); err != nil {
				fmt.Fprintf(os.Stderr, "pulse bridge: %v\n", err)
			}
		}
	}
	rec, err := recorder.New(env.Dir, opt)
	if err != nil {
		return err
	}
	defer rec.Close()
	fmt.Fprintf(os.Stderr, "pulse bridge: publishing %s on DDS domain %d every %v (segments in %s)\n",
		map[[2]bool]string{{true, true}: "/statistics and /diagnostics", {true, false}: "/statistics", {false, true}: "/diagnostics"}[[2]bool{*statistics, *diagnostics}],
		domain, period, env.Dir)
	if err := rec.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// chooseDistro picks whose rules the bridge joins the graph by: --distro,
// else ROS_DISTRO, else the distro most live probed processes report, else
// Humble's; and says where it came from.
func chooseDistro(flagValue, dir string) (distro, from string, err error) {
	known := map[string]bool{"humble": true, "iron": true, "jazzy": true, "kilted": true, "rolling": true}
	switch {
	case flagValue != "":
		if !known[flagValue] {
			return "", "", fmt.Errorf("--distro %q: expected humble, jazzy or kilted", flagValue)
		}
		return flagValue, "--distro", nil
	case os.Getenv("ROS_DISTRO") != "":
		v := os.Getenv("ROS_DISTRO")
		if known[v] {
			return v, "ROS_DISTRO", nil
		}
		fmt.Fprintf(os.Stderr, "pulse bridge: ROS_DISTRO=%q is not a distro it knows; looking at the probed processes\n", v)
	}
	r := segment.NewReader(dir)
	defer r.Close()
	if scan, err := r.Scan(); err == nil {
		votes := map[string]int{}
		best := ""
		for _, snap := range scan.Snapshots {
			if d := snap.Distro.String(); snap.Alive && d != "unknown" {
				if votes[d]++; votes[d] > votes[best] {
					best = d
				}
			}
		}
		if best != "" {
			return best, "the probed processes", nil
		}
	}
	return "humble", "default: no --distro, ROS_DISTRO or probed process", nil
}
