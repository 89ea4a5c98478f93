package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"ros2_pulse/internal/bench"
)

// benchBarsCmd draws figures measured by hand as the benchmarks draw
// theirs: pulse bench bars --out F.png --title T --ylabel Y NAME=MEAN,SEM...
func benchBarsCmd() *cobra.Command {
	var title, ylabel, out string
	c := &cobra.Command{
		Use:    "bars NAME=MEAN,SEM...",
		Hidden: true, // docs/PERFORMANCE.md's hand-measured plots
		Args:   cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			names, means, sems, err := parseBars(args)
			if err != nil {
				return err
			}
			return bench.PlotBars(title, ylabel, names, means, sems, out)
		},
	}
	c.Flags().StringVar(&title, "title", "", "the plot's title")
	c.Flags().StringVar(&ylabel, "ylabel", "", "the y axis' label")
	c.Flags().StringVar(&out, "out", "bars.png", "the PNG to write")
	return c
}

// parseBars reads NAME=MEAN,SEM arguments.
func parseBars(args []string) (names []string, means, sems []float64, err error) {
	for _, a := range args {
		name, v, ok := strings.Cut(a, "=")
		ms, ss, ok2 := strings.Cut(v, ",")
		m, err1 := strconv.ParseFloat(ms, 64)
		s, err2 := strconv.ParseFloat(ss, 64)
		if !ok || !ok2 || name == "" || err1 != nil || err2 != nil || s < 0 {
			return nil, nil, nil, fmt.Errorf("bar %q: want NAME=MEAN,SEM (numbers, SEM ≥ 0)", a)
		}
		names, means, sems = append(names, name), append(means, m), append(sems, s)
	}
	return names, means, sems, nil
}
