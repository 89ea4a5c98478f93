package realros

import (
	"fmt"
	"strconv"

	"ros2_pulse/internal/graphfile"
)

// NodeProc is one test-node process of a graph: pulse_node ("cpp") or
// pulse_node.py ("py"), with its arguments (but --name, --truth, --duration).
type NodeProc struct {
	Name  string
	Lang  string
	Args  []string
	Intra bool // its nodes use intra-process comms
}

// GraphProcs turns a stand-in graph (sim/graphs/*.graph) into real test-node
// processes of the same shape: each process its nodes (--node sections),
// their publishers, subscriptions, timers, services and actions, at the
// graph's rates. What real nodes cannot take from the stand-in: message
// sizes are capped at maxBytes (a 2-vCPU machine does not move 2 MB point
// clouds through DDS at 10 Hz beside its tests); every publisher has its own
// timer (a node's `loop` is not kept); a process mixing rclcpp and rclpy
// nodes is two processes; the stand-in's fault options are not kept.
func GraphProcs(g *graphfile.Graph, maxBytes int) []NodeProc {
	var out []NodeProc
	for _, p := range g.Procs {
		for _, lang := range []string{"cpp", "py"} {
			np := NodeProc{Name: p.Name, Lang: lang}
			if lang == "py" {
				np.Name += "_py"
			}
			nodes := 0
			for _, n := range p.Nodes {
				if n.Py != (lang == "py") {
					continue
				}
				nodes++
				np.Intra = np.Intra || n.Intra && lang == "cpp"
				np.Args = append(np.Args, nodeArgs(n, maxBytes)...)
			}
			if nodes == 0 {
				continue
			}
			if p.Threads > 1 {
				np.Args = append([]string{"--multi", strconv.Itoa(p.Threads)}, np.Args...)
			}
			if np.Intra {
				np.Args = append([]string{"--intra"}, np.Args...)
			}
			out = append(out, np)
		}
	}
	return out
}

func nodeArgs(n graphfile.Node, maxBytes int) []string {
	a := []string{"--node", n.FQN}
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, p := range n.Pubs {
		size := p.Size
		if size == 0 {
			size = 16
		}
		a = append(a, "--pub", fmt.Sprintf("%s,%s,%d", p.Topic, num(p.Hz), min(size, maxBytes)))
	}
	for _, s := range n.Subs {
		a = append(a, "--sub", s.Topic+","+num(s.CostMs))
	}
	for _, t := range n.Timers {
		a = append(a, "--timer", num(t.Hz)+","+num(t.CostMs))
	}
	for _, s := range n.Services {
		a = append(a, "--server", s.Name+","+num(s.CostMs))
	}
	for _, c := range n.Clients {
		a = append(a, "--client", c.Name+","+num(c.Hz))
	}
	for _, s := range n.Actions {
		a = append(a, "--action-server", s.Name+","+num(s.CostMs))
	}
	for _, c := range n.ActionCalls {
		a = append(a, "--action-client", c.Name+","+num(c.Hz))
	}
	return a
}
