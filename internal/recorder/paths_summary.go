package recorder

import (
	"fmt"
	"io"
	"text/tabwriter"

	"ros2_pulse/internal/paths"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// addLinks folds a window's latency links into the run's (ABI 1.9).
func (s *Summary) addLinks(w *window.Window) {
	s.links = window.AddLinks(s.links, w.Links)
}

// Paths are the run's end-to-end paths (the spec's named ones first), over
// every window's links as one: each path's latency over the whole run.
func (s *Summary) Paths(rules []spec.PathRule) []window.Path {
	links := make([]window.Link, len(s.links))
	copy(links, s.links)
	for i := range links {
		links[i].Alive = true // a hop that linked in any window of the run
	}
	return paths.Of(links, rules)
}

// printPaths writes each path's latency over the run, when the run linked
// anything or the spec names a path.
func (s *Summary) printPaths(out io.Writer) {
	ps := s.Paths(s.PathRules)
	if len(ps) == 0 {
		return
	}
	fmt.Fprintln(out, "end-to-end paths (first topic's message sent to last topic's publish; the hops' latencies added as independent, MAX a bound)")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tHOPS\tMESSAGES\tP50 ms\tP99 ms\tMAX ms\tBOUND ms")
	for _, p := range ps {
		bound := "-"
		if p.MaxMs > 0 {
			bound = fmt.Sprintf("%g", p.MaxMs)
		}
		if !p.Measured {
			fmt.Fprintf(tw, "%s\t%d\t-\t-\t-\t-\t%s  not measured: hop %s linked no message\n", p.Name, len(p.Hops), bound, p.Missing)
			continue
		}
		verdict := ""
		if p.Slow() {
			verdict = "  SLOW"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%s%s\n", p.Name, len(p.Hops), p.N, p.Worst.P50Ms, p.Worst.P99Ms, p.Worst.MaxMs, bound, verdict)
	}
	tw.Flush()
}
