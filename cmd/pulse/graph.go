package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"ros2_pulse/internal/graph"
	"ros2_pulse/internal/recorder"
)

func graphCmd() *cobra.Command {
	var format string
	var period time.Duration
	var allTopics bool
	var dir string
	var retain time.Duration
	c := &cobra.Command{
		Use:   "graph [--format dot|mermaid|json] [--period 1s]",
		Short: "The live computation graph: nodes, topics, who publishes and subscribes, with rates and liveness",
		Long: `graph samples the segments of this machine twice, --period apart, and prints the computation
graph: every ROS node (per process, alive or exited), every topic, and an edge for every publisher
and subscription with its transport (inter, intra, both, or none in that period) and its rate.
It is rqt_graph without joining DDS. DOT renders with Graphviz (pulse graph | dot -Tsvg > g.svg);
Mermaid renders in GitHub and GitLab Markdown; JSON is for tools.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var render func(*graph.Graph) ([]byte, error)
			switch format {
			case "dot":
				render = func(g *graph.Graph) ([]byte, error) { return g.DOT(), nil }
			case "mermaid":
				render = func(g *graph.Graph) ([]byte, error) { return g.Mermaid(), nil }
			case "json":
				render = (*graph.Graph).JSON
			default:
				return fmt.Errorf("--format %q: expected dot, mermaid or json", format)
			}
			if period < 50*time.Millisecond {
				return fmt.Errorf("--period must be at least 50ms")
			}
			env, err := readEnv(dir)
			if err != nil {
				return err
			}
			opt := recorder.Options{Period: period, Retain: retain, Warn: os.Stderr, Empty: env.NothingThere()}
			opt.Window.ShowBuiltin = allTopics
			rec, err := recorder.New(env.Dir, opt)
			if err != nil {
				return err
			}
			defer rec.Close()
			if _, err := rec.Step(false); err != nil { // the baseline
				return err
			}
			time.Sleep(period)
			w, err := rec.Step(false)
			if err != nil {
				return err
			}
			out, err := render(graph.FromWindow(w))
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	c.Flags().StringVar(&format, "format", "dot", "dot, mermaid or json")
	c.Flags().DurationVar(&period, "period", time.Second, "time between the two samples the rates come from")
	c.Flags().BoolVar(&allTopics, "all-topics", false, "include /rosout and /parameter_events")
	c.Flags().StringVar(&dir, "dir", "", dirHelp)
	addRetainFlag(c, &retain)
	return c
}
