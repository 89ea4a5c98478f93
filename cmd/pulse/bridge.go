package main

import (
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"ros2_pulse/internal/locate"
)

func bridgeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "bridge [--statistics] [--diagnostics] [--spec F] [--period 1s] [--for D]",
		Short: "Publish the machine's windows as /statistics and /diagnostics on the ROS graph (CycloneDDS)",
		Long: `bridge publishes, every --period, statistics_msgs/MetricsMessage on /statistics (for every
topic and receiving node: the message period in ms and the rate in Hz, intra-process deliveries
included) and diagnostic_msgs/DiagnosticArray on /diagnostics (one status per topic and per node,
its level from the spec's verdicts and stalls). Neither flag: both.

It speaks DDS directly through CycloneDDS, without a ROS install: topics rt/statistics and
rt/diagnostics, ROS type names, XCDR1, reliable, volatile, keep-last 10. It honours
ROS_DOMAIN_ID, ROS_LOCALHOST_ONLY, ROS_AUTOMATIC_DISCOVERY_RANGE, ROS_STATIC_PEERS and
CYCLONEDDS_URI as rmw_cyclonedds of --distro does (default ROS_DISTRO, else the probed processes' distro, else
humble). The DDS part is a separate binary, pulse-bridge, beside pulse (make bridge).`,
		DisableFlagParsing: true, // pulse-bridge parses its own flags
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "-h" || a == "--help" {
					return cmd.Help()
				}
			}
			bin, err := locate.Beside("pulse-bridge", "it needs CycloneDDS: apt-get install cyclonedds-dev cyclonedds-tools, then `make bridge`")
			if err != nil {
				return err
			}
			return syscall.Exec(bin, append([]string{bin}, args...), os.Environ())
		},
	}
}
