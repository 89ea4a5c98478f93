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
humble), and is a ROS node of the graph (ros_discovery_info with the distro's GID layout), so
ros2 node list shows it. The DDS part is a separate binary, pulse-bridge, beside pulse (make bridge).

Flags (parsed by pulse-bridge):
  --statistics, --diagnostics   publish only that topic (neither: both)
  --spec FILE                   expected-rate spec for the diagnostics levels (default ROS_TOPIC_STATS_EXPECTED)
  --period D                    window period (default 1s)
  --for D                       stop after D (default: until SIGINT/SIGTERM)
  --distro humble|jazzy|kilted  join the graph by this distro's rules
  --node-name /NS/NAME          the node it is in the graph (default /pulse_bridge)
  --dir DIR                     segment directory to read (default ROS_PULSE_DIR, else /dev/shm/ros2_pulse-<uid>)
  --retain D                    show an exited process this long (default 5m; negative: forever)`,
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
