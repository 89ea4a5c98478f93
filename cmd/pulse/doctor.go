package main

import (
	"time"

	"github.com/spf13/cobra"

	"ros2_pulse/internal/doctor"
	"ros2_pulse/internal/locate"
)

func doctorCmd() *cobra.Command {
	var tracetools []string
	var dir string
	var retain time.Duration
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check that libtracetools has the tracepoints, the probe loads, and list probed processes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lib, libErr := locate.ProbeLib()
			env, err := readEnv(dir)
			if err != nil {
				return err
			}
			if n := doctor.Report(cmd.OutOrStdout(), lib, libErr, doctor.FindTracetools(tracetools), env.Dir, env.NothingThere(), retain); n > 0 {
				return exitError{1}
			}
			return nil
		},
	}
	c.Flags().StringArrayVar(&tracetools, "tracetools", nil, "also inspect this libtracetools.so (repeatable)")
	c.Flags().StringVar(&dir, "dir", "", dirHelp)
	addRetainFlag(c, &retain)
	return c
}
