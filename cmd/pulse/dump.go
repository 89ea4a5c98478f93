package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"ros2_pulse/internal/segment"
)

// dumpEndpoint is the JSON form of one endpoint's raw cumulative counters.
type dumpEndpoint struct {
	Kind    string    `json:"kind"`
	Name    string    `json:"name"`
	Node    string    `json:"node,omitempty"`
	Aux     uint64    `json:"aux"`
	Retired bool      `json:"retired,omitempty"`
	Counts  [4]uint64 `json:"counts"`
}

type dumpSegment struct {
	Path        string         `json:"path"`
	Pid         int            `json:"pid"`
	Ppid        int            `json:"ppid"`
	Alive       bool           `json:"alive"`
	Distro      string         `json:"tracetools"`
	Exe         string         `json:"exe"`
	Cmdline     []string       `json:"cmdline"`
	Nodes       []string       `json:"nodes"`
	Endpoints   []dumpEndpoint `json:"endpoints"`
	Dropped     uint64         `json:"dropped_endpoints"`
	CacheMisses uint64         `json:"cache_misses"`
	Corrupt     int            `json:"corrupt_records"`
}

func dumpCmd() *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:   "dump",
		Short: "Print every segment's raw cumulative counters as JSON lines (for debugging)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := readEnv(dir)
			if err != nil {
				return err
			}
			r := segment.NewReader(env.Dir)
			defer r.Close()
			scan, err := r.Scan()
			if err != nil {
				return err
			}
			if len(scan.Snapshots) == 0 {
				fmt.Fprintf(os.Stderr, "pulse: %s\n", env.NothingThere())
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			for _, s := range scan.Snapshots {
				d := dumpSegment{Path: s.Path, Pid: s.Pid, Ppid: s.Ppid, Alive: s.Alive, Distro: s.Distro.String(), Exe: s.Exe,
					Cmdline: s.Cmdline, Dropped: s.DroppedEndpoints, CacheMisses: s.CacheMisses, Corrupt: s.Corrupt,
					Nodes: []string{}, Endpoints: []dumpEndpoint{}}
				for _, n := range s.Nodes {
					d.Nodes = append(d.Nodes, n.Name)
				}
				for _, e := range s.Endpoints {
					de := dumpEndpoint{Kind: e.Kind.String(), Name: e.Name, Aux: e.Aux, Retired: e.Retired(), Counts: e.Counts}
					if e.Node >= 0 {
						de.Node = s.Nodes[e.Node].Name
					}
					d.Endpoints = append(d.Endpoints, de)
				}
				if err := enc.Encode(d); err != nil {
					return err
				}
			}
			for _, p := range scan.Problems {
				fmt.Fprintf(os.Stderr, "pulse: skipping segment %v\n", p)
			}
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "", dirHelp)
	return c
}
