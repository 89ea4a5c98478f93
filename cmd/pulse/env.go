package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"ros2_pulse/internal/config"
	"ros2_pulse/internal/locate"
)

func envCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "env",
		Short: "Print the environment that preloads the probe (shell, env file or systemd unit)",
		Long: `env prints what a ROS process needs to be probed:

  eval "$(pulse env)"                     # current shell, before ros2 launch
  pulse env --format envfile >> robot.env  # EnvironmentFile= of a systemd unit, docker --env-file
  pulse env --format systemd               # Environment= lines for a unit or drop-in`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lib, err := locate.ProbeLib()
			if err != nil {
				return err
			}
			dir := config.FromOS().Dir
			out := cmd.OutOrStdout()
			switch format {
			case "shell":
				fmt.Fprintf(out, "export LD_PRELOAD=%s${LD_PRELOAD:+:$LD_PRELOAD}\nexport ROS_PULSE_DIR=%s\n", shellQuote(lib), shellQuote(dir))
			case "envfile":
				fmt.Fprintf(out, "LD_PRELOAD=%s\nROS_PULSE_DIR=%s\n", lib, dir)
			case "systemd":
				fmt.Fprintf(out, "Environment=\"LD_PRELOAD=%s\"\nEnvironment=\"ROS_PULSE_DIR=%s\"\n", lib, dir)
			default:
				return fmt.Errorf("--format %q: expected shell, envfile or systemd", format)
			}
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "shell", "shell, envfile or systemd")
	return c
}

func shellQuote(s string) string {
	for _, r := range s {
		if !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}
