// Package graphfile reads the stand-in's graph files (sim/graphs/*.graph,
// the syntax at the top of sim/graphs/demo.graph) into processes, nodes and
// their endpoints, so that the same robot can be started as real ROS 2
// nodes (internal/realros). It reads the shape: names, rates, sizes, costs;
// the stand-in's fault options (stall=, sag=, kill=, ...) are kept as text,
// not interpreted.
package graphfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Graph is a graph file's processes, in file order.
type Graph struct{ Procs []Process }

// Process is one process of nodes.
type Process struct {
	Name    string
	Threads int // executor threads (1 unless threads=N)
	Nodes   []Node
}

// Node is one node and what it has.
type Node struct {
	FQN         string
	Py          bool // lang=py: an rclpy node
	Intra       bool // use_intra_process_comms
	Loop        bool // one timer a rate publishes all its publishers of that rate
	Pubs        []Pub
	Subs        []Sub
	Timers      []Timer
	Services    []Service
	Clients     []Client
	Actions     []Service // action servers: the name and the time a goal takes (result=MS)
	ActionCalls []Client  // action clients
}

// Pub publishes Topic at Hz, messages of Size bytes (0: the stand-in's default).
type Pub struct {
	Topic string
	Hz    float64
	Size  int
	Opts  []string // the rest of the line
}

// Sub subscribes to Topic; each callback takes CostMs.
type Sub struct {
	Topic  string
	CostMs float64
	Opts   []string
}

// Timer fires at Hz; each callback takes CostMs.
type Timer struct {
	Hz     float64
	CostMs float64
}

// Service serves Name; each request takes CostMs.
type Service struct {
	Name   string
	CostMs float64
}

// Client calls Name at Hz.
type Client struct {
	Name string
	Hz   float64
}

// ReadFile parses the graph file at path.
func ReadFile(path string) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	g, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// Read parses a graph file. Directives it does not know fail with their
// line, as simgraph itself refuses them; the stand-in's scenarios (log,
// reuse_*, fork, exit_storm) are skipped.
func Read(r io.Reader) (*Graph, error) {
	g := &Graph{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if err := g.directive(f); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
	return g, sc.Err()
}

func (g *Graph) directive(f []string) error {
	if f[0] == "process" {
		if len(f) < 2 {
			return fmt.Errorf("process needs a name")
		}
		p := Process{Name: f[1], Threads: 1}
		for _, o := range f[2:] {
			if v, ok := strings.CutPrefix(o, "threads="); ok {
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					return fmt.Errorf("threads=%q", v)
				}
				p.Threads = n
			}
		}
		g.Procs = append(g.Procs, p)
		return nil
	}
	if len(g.Procs) == 0 {
		return fmt.Errorf("%s before any process", f[0])
	}
	p := &g.Procs[len(g.Procs)-1]
	if f[0] == "node" {
		if len(f) < 2 || !strings.HasPrefix(f[1], "/") {
			return fmt.Errorf("node needs a fully qualified name")
		}
		nd := Node{FQN: f[1]}
		for _, o := range f[2:] {
			switch o {
			case "lang=py":
				nd.Py = true
			case "intra":
				nd.Intra = true
			case "loop":
				nd.Loop = true
			}
		}
		p.Nodes = append(p.Nodes, nd)
		return nil
	}
	if len(p.Nodes) == 0 {
		return fmt.Errorf("%s before any node of process %s", f[0], p.Name)
	}
	nd := &p.Nodes[len(p.Nodes)-1]
	need := func(k int) error {
		if len(f) < k {
			return fmt.Errorf("%s needs %d values", f[0], k-1)
		}
		return nil
	}
	switch f[0] {
	case "pub":
		if err := need(3); err != nil {
			return err
		}
		hz, err := rate(f[2])
		if err != nil {
			return err
		}
		size := 0
		if v, ok := option(f[3:], "size"); ok {
			if size, err = strconv.Atoi(v); err != nil || size < 0 {
				return fmt.Errorf("size=%q", v)
			}
		}
		nd.Pubs = append(nd.Pubs, Pub{Topic: f[1], Hz: hz, Size: size, Opts: f[3:]})
	case "sub":
		if err := need(2); err != nil {
			return err
		}
		cost, err := ms(f[2:], "cost")
		if err != nil {
			return err
		}
		nd.Subs = append(nd.Subs, Sub{Topic: f[1], CostMs: cost, Opts: f[2:]})
	case "timer":
		if err := need(2); err != nil {
			return err
		}
		hz, err := rate(f[1])
		if err != nil {
			return err
		}
		cost, err := ms(f[2:], "cost")
		if err != nil {
			return err
		}
		nd.Timers = append(nd.Timers, Timer{Hz: hz, CostMs: cost})
	case "service", "action":
		if err := need(2); err != nil {
			return err
		}
		key := map[string]string{"service": "cost", "action": "result"}[f[0]]
		cost, err := ms(f[2:], key)
		if err != nil {
			return err
		}
		if f[0] == "service" {
			nd.Services = append(nd.Services, Service{Name: f[1], CostMs: cost})
		} else {
			nd.Actions = append(nd.Actions, Service{Name: f[1], CostMs: cost})
		}
	case "client", "action_client":
		if err := need(3); err != nil {
			return err
		}
		hz, err := rate(f[2])
		if err != nil {
			return err
		}
		if f[0] == "client" {
			nd.Clients = append(nd.Clients, Client{Name: f[1], Hz: hz})
		} else {
			nd.ActionCalls = append(nd.ActionCalls, Client{Name: f[1], Hz: hz})
		}
	case "log", "reuse_pub", "reuse_sub", "fork", "exit_storm":
		// the stand-in's own scenarios, not part of a graph's shape
	default:
		return fmt.Errorf("unknown directive %q", f[0])
	}
	return nil
}

func rate(s string) (float64, error) {
	hz, err := strconv.ParseFloat(s, 64)
	if err != nil || !(hz > 0) || hz > 1e6 {
		return 0, fmt.Errorf("rate %q", s)
	}
	return hz, nil
}

func option(opts []string, key string) (string, bool) {
	for _, o := range opts {
		if v, ok := strings.CutPrefix(o, key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// ms reads key=MS (or MS:EVERY, whose MS is taken) from opts; 0 when absent.
func ms(opts []string, key string) (float64, error) {
	v, ok := option(opts, key)
	if !ok {
		return 0, nil
	}
	v, _, _ = strings.Cut(v, ":")
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || !(x >= 0) || x > 1e6 {
		return 0, fmt.Errorf("%s=%q", key, v)
	}
	return x, nil
}

// Counts are a graph's size.
type Counts struct{ Procs, Nodes, Py, Pubs, Subs, Timers, Services, Clients int }

// Count sizes g.
func (g *Graph) Count() Counts {
	c := Counts{Procs: len(g.Procs)}
	for _, p := range g.Procs {
		for _, n := range p.Nodes {
			c.Nodes++
			if n.Py {
				c.Py++
			}
			c.Pubs += len(n.Pubs)
			c.Subs += len(n.Subs)
			c.Timers += len(n.Timers)
			c.Services += len(n.Services)
			c.Clients += len(n.Clients)
		}
	}
	return c
}
