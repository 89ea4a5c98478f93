package main

import (
	"encoding/json"
	"fmt"
	"os"
	"ros2_pulse/internal/compat"

	"github.com/spf13/cobra"

	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// dumpEndpoint is the JSON form of one endpoint's raw cumulative counters.
type dumpEndpoint struct {
	Kind    string      `json:"kind"`
	Name    string      `json:"name"`
	Node    string      `json:"node,omitempty"`
	Aux     uint64      `json:"aux"`
	Retired bool        `json:"retired,omitempty"`
	Counts  [4]uint64   `json:"counts"`
	Timing  *dumpTiming `json:"timing,omitempty"`
	QoS     *dumpQoS    `json:"qos,omitempty"`
	Calls   *dumpCalls  `json:"calls,omitempty"`
	Bytes   *dumpBytes  `json:"bytes,omitempty"`
}

// dumpQoS is what the probe learnt of a publisher or subscription at creation (ABI 1.5).
type dumpQoS struct {
	Summary string `json:"summary"` // the actual QoS in one line, or "QoS unknown"
	Type    string `json:"type,omitempty"`
	RMW     string `json:"rmw,omitempty"`
	Domain  *int   `json:"domain,omitempty"`
}

// dumpBytes is what the probe sized of an endpoint's messages (ROS_PULSE_BYTES=1, design note 0033).
type dumpBytes struct {
	State        string `json:"state"` // "typed", "unreadable" or "unknown" (no type support was given)
	FixedSize    uint32 `json:"fixed_size,omitempty"`
	Every        uint32 `json:"every,omitempty"`
	MaxSize      uint32 `json:"max_size,omitempty"`
	Sampled      uint64 `json:"sampled,omitempty"`
	SampledBytes uint64 `json:"sampled_bytes,omitempty"`
	Exact        uint64 `json:"exact,omitempty"`
	ExactBytes   uint64 `json:"exact_bytes,omitempty"`
	Wide         bool   `json:"wide,omitempty"`
}

// dumpCalls is a service's or client's cumulative calls (ABI 1.6).
type dumpCalls struct {
	Started   uint64 `json:"started"` // server: requests taken; client: requests sent
	Answered  uint64 `json:"answered"`
	Unmatched uint64 `json:"unmatched,omitempty"`
	Evicted   uint64 `json:"evicted,omitempty"`
	SumNs     uint64 `json:"sum_ns"`
	Open      int    `json:"open"`
	// SendFailed: a server's responses rcl_send_response refused (ABI 1.8).
	SendFailed uint64 `json:"send_failed,omitempty"`
}

// dumpTiming is an endpoint's cumulative callback timing (ABI 1.4).
type dumpTiming struct {
	Function  string `json:"function,omitempty"`
	Callbacks uint64 `json:"callbacks"` // ended, timed (the histogram's count)
	SumNs     uint64 `json:"sum_ns"`
	Unended   uint64 `json:"unended"`
	Overruns  uint64 `json:"overruns,omitempty"`
	Calls     uint64 `json:"calls,omitempty"` // timer calls seen at rcl_timer_call
	LateSumNs uint64 `json:"late_sum_ns,omitempty"`
}

// dumpThread is one thread's cumulative busy time.
type dumpThread struct {
	Lane      int    `json:"lane"`
	Tid       int    `json:"tid"`
	Name      string `json:"name"`
	BusyNs    uint64 `json:"busy_ns"`
	OpenNs    uint64 `json:"open_since_ns,omitempty"`
	Callbacks uint64 `json:"callbacks"`
}

type dumpSegment struct {
	Path        string         `json:"path"`
	Pid         int            `json:"pid"`
	OwnPid      int            `json:"own_pid,omitempty"` // its pid in its own PID namespace (a container), where that is another
	Ppid        int            `json:"ppid"`
	Alive       bool           `json:"alive"`
	Distro      string         `json:"tracetools"`
	Exe         string         `json:"exe"`
	Cmdline     []string       `json:"cmdline"`
	Nodes       []string       `json:"nodes"`
	Endpoints   []dumpEndpoint `json:"endpoints"`
	Timing      bool           `json:"timing"`
	Threads     []dumpThread   `json:"threads,omitempty"`
	Dropped     uint64         `json:"dropped_endpoints"`
	CacheMisses uint64         `json:"cache_misses"`
	Corrupt     int            `json:"corrupt_records"`
	Env         *segment.Env   `json:"env,omitempty"`
	Links       []dumpLink     `json:"links,omitempty"` // ABI 1.9, links on
}

// dumpLink is a latency link's cumulative counts (ABI 1.9): its input and
// output by topic and the input's node.
type dumpLink struct {
	Node     string `json:"node"`
	From     string `json:"from"`
	To       string `json:"to"`
	Rclpy    bool   `json:"rclpy,omitempty"`
	Sampled  bool   `json:"sampled,omitempty"`
	Count    uint64 `json:"count"`
	Unaged   uint64 `json:"unaged,omitempty"`
	AgeSumNs uint64 `json:"age_sum_ns"`
	OwnSumNs uint64 `json:"own_sum_ns"`
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
				d := dumpSegment{Path: s.Path, Pid: s.Pid, OwnPid: s.OwnPid, Ppid: s.Ppid, Alive: s.Alive, Distro: s.Distro.String(), Exe: s.Exe,
					Cmdline: s.Cmdline, Dropped: s.DroppedEndpoints, CacheMisses: s.CacheMisses, Corrupt: s.Corrupt,
					Nodes: []string{}, Endpoints: []dumpEndpoint{}, Timing: s.Timing, Env: s.Env}
				for _, th := range s.Threads {
					d.Threads = append(d.Threads, dumpThread{Lane: th.Lane, Tid: th.Tid, Name: th.Name, BusyNs: th.BusyNs, OpenNs: th.OpenNs, Callbacks: th.Callbacks})
				}
				for _, n := range s.Nodes {
					d.Nodes = append(d.Nodes, n.Name)
				}
				for _, l := range s.Links {
					in, out := segment.FindEndpoint(s.Endpoints, l.Input), segment.FindEndpoint(s.Endpoints, l.Output)
					if in != nil && out != nil {
						d.Links = append(d.Links, dumpLink{Node: window.NodeOf(s, in), From: in.Name, To: out.Name, Rclpy: l.Rclpy,
							Sampled: l.Sampled, Count: l.Count, Unaged: l.Unaged, AgeSumNs: l.AgeSumNs, OwnSumNs: l.OwnSumNs})
					}
				}
				for _, e := range s.Endpoints {
					de := dumpEndpoint{Kind: e.Kind.String(), Name: e.Name, Aux: e.Aux, Retired: e.Retired(), Counts: e.Counts}
					if e.Node >= 0 {
						de.Node = s.Nodes[e.Node].Name
					}
					if e.Timing != nil {
						de.Timing = &dumpTiming{Function: e.Timing.Function, Callbacks: window.CallbackDurations(nil, e.Timing).N, SumNs: e.Timing.SumNs,
							Unended: e.Timing.Unended, Overruns: e.Timing.Overruns}
						if e.Lateness != nil {
							de.Timing.Calls, de.Timing.LateSumNs = window.TimerLateness(nil, e.Lateness).N, e.Lateness.SumNs
						}
					}
					if c := e.Calls; c != nil {
						de.Calls = &dumpCalls{Started: c.Started, Answered: c.Answered, Unmatched: c.Unmatched, Evicted: c.Evicted, SumNs: c.SumNs, Open: len(c.Open),
							SendFailed: c.SendFailed}
					}
					if q := e.QoS; q != nil {
						de.QoS = &dumpQoS{Summary: compat.Summary(q), Type: q.Type, RMW: q.RMW}
						if q.Domain >= 0 {
							de.QoS.Domain = &q.Domain
						}
					}
					if b := e.Bytes; s.BytesOn && (e.Kind == segment.KindPublisher || e.Kind == segment.KindSubscription) {
						state := "unknown"
						if b.Typed {
							state = "typed"
						} else if b.Unreadable {
							state = "unreadable"
						}
						de.Bytes = &dumpBytes{State: state, FixedSize: b.FixedSize, Every: b.Every, MaxSize: b.MaxSize, Sampled: b.Sampled,
							SampledBytes: b.SampledBytes, Exact: b.Exact, ExactBytes: b.ExactBytes, Wide: b.Wide}
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
