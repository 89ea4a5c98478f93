// Package graph draws the live computation graph from a window: ROS nodes,
// topics, and who publishes and subscribes what, with the transport, the
// rates and whether each process is alive. It is rqt_graph without joining
// DDS: everything comes from the probe's init tracepoints and counters.
package graph

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"ros2_pulse/internal/window"
)

// Node is a ROS node in one process.
type Node struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Pid   int    `json:"pid"`
	Alive bool   `json:"alive"`
}

// Topic is a topic with its machine-wide rates.
type Topic struct {
	ID     string  `json:"id"`
	Name   string  `json:"name"`
	PubHz  float64 `json:"pub_hz"`
	RecvHz float64 `json:"recv_hz"`
}

// Edge is a publication (node -> topic) or a subscription (topic -> node).
type Edge struct {
	From      string  `json:"from"`
	To        string  `json:"to"`
	Kind      string  `json:"kind"`      // "pub" or "sub"
	Transport string  `json:"transport"` // "inter", "intra", "both" or "none" (no traffic in the window)
	InterHz   float64 `json:"inter_hz"`
	IntraHz   float64 `json:"intra_hz"`
	Alive     bool    `json:"alive"`
}

// Graph is the whole picture.
type Graph struct {
	Nodes  []Node  `json:"nodes"`
	Topics []Topic `json:"topics"`
	Edges  []Edge  `json:"edges"`
}

// FromWindow builds the graph of w. Nodes and topics get stable ids in name
// order (n0, n1, ... and t0, t1, ...), so outputs diff cleanly.
func FromWindow(w *window.Window) *Graph {
	g := &Graph{}
	type nk struct {
		name string
		pid  int
	}
	alive := map[int]bool{}
	var keys []nk
	seen := map[nk]bool{}
	add := func(k nk) {
		if !seen[k] && k.name != "" {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, p := range w.Procs {
		alive[p.Pid] = p.Alive
		for _, n := range p.Nodes {
			add(nk{n, p.Pid})
		}
	}
	for i := range w.Topics {
		for _, e := range append(append([]window.EndpointRate(nil), w.Topics[i].Pubs...), w.Topics[i].Subs...) {
			add(nk{e.Node, e.Pid})
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].name != keys[j].name {
			return keys[i].name < keys[j].name
		}
		return keys[i].pid < keys[j].pid
	})
	ids := map[nk]string{}
	for i, k := range keys {
		ids[k] = fmt.Sprintf("n%d", i)
		g.Nodes = append(g.Nodes, Node{ID: ids[k], Name: k.name, Pid: k.pid, Alive: alive[k.pid]})
	}
	for i := range w.Topics {
		t := &w.Topics[i]
		tid := fmt.Sprintf("t%d", i)
		g.Topics = append(g.Topics, Topic{ID: tid, Name: t.Name, PubHz: t.PubAny, RecvHz: t.RecvInter + t.RecvIntra})
		for _, e := range t.Pubs {
			if id, ok := ids[nk{e.Node, e.Pid}]; ok {
				g.Edges = append(g.Edges, Edge{From: id, To: tid, Kind: "pub", Transport: transport(e), InterHz: e.Inter, IntraHz: e.Intra, Alive: e.Alive})
			}
		}
		for _, e := range t.Subs {
			if id, ok := ids[nk{e.Node, e.Pid}]; ok {
				g.Edges = append(g.Edges, Edge{From: tid, To: id, Kind: "sub", Transport: transport(e), InterHz: e.Inter, IntraHz: e.Intra, Alive: e.Alive})
			}
		}
	}
	return g
}

func transport(e window.EndpointRate) string {
	switch {
	case e.Inter > 0 && e.Intra > 0:
		return "both"
	case e.Intra > 0:
		return "intra"
	case e.Inter > 0:
		return "inter"
	}
	return "none"
}

func (e *Edge) label() string {
	switch e.Transport {
	case "both":
		return fmt.Sprintf("%.1f Hz + %.1f intra", e.InterHz, e.IntraHz)
	case "intra":
		return fmt.Sprintf("%.1f Hz intra", e.IntraHz)
	case "inter":
		return fmt.Sprintf("%.1f Hz", e.InterHz)
	}
	return "0 Hz"
}

// JSON renders the graph as one JSON document.
func (g *Graph) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(g, "", "  ")
	return append(b, '\n'), err
}

// dotQuote quotes s for Graphviz.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// DOT renders the graph for Graphviz: nodes as ellipses (grey and dashed
// once their process exited), topics as boxes, intra-process edges dashed
// blue, edges without traffic dotted grey.
func (g *Graph) DOT() []byte {
	var b strings.Builder
	b.WriteString("digraph ros2 {\n  rankdir=LR;\n  node [fontname=\"Helvetica\"];\n")
	for _, n := range g.Nodes {
		style := ""
		if !n.Alive {
			style = `, style=dashed, color=grey, fontcolor=grey`
		}
		fmt.Fprintf(&b, "  %s [shape=ellipse, label=%s%s];\n", n.ID, dotQuote(fmt.Sprintf("%s\npid %d", n.Name, n.Pid)), style)
	}
	for _, t := range g.Topics {
		fmt.Fprintf(&b, "  %s [shape=box, label=%s];\n", t.ID, dotQuote(t.Name))
	}
	for _, e := range g.Edges {
		style := ""
		switch {
		case !e.Alive || e.Transport == "none":
			style = ", style=dotted, color=grey"
		case e.Transport == "intra":
			style = ", style=dashed, color=blue"
		}
		fmt.Fprintf(&b, "  %s -> %s [label=%s%s];\n", e.From, e.To, dotQuote(e.label()), style)
	}
	b.WriteString("}\n")
	return []byte(b.String())
}

// mermaidText escapes a label for Mermaid (quotes become #quot;).
func mermaidText(s string) string {
	return `"` + strings.NewReplacer(`"`, "#quot;", "\n", " ").Replace(s) + `"`
}

// Mermaid renders the graph as a Mermaid flowchart (GitHub and GitLab draw
// it in Markdown): nodes rounded, topics square, intra edges dotted.
func (g *Graph) Mermaid() []byte {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for _, n := range g.Nodes {
		label := fmt.Sprintf("%s pid %d", n.Name, n.Pid)
		if !n.Alive {
			label += " (exited)"
		}
		fmt.Fprintf(&b, "  %s(%s)\n", n.ID, mermaidText(label))
	}
	for _, t := range g.Topics {
		fmt.Fprintf(&b, "  %s[%s]\n", t.ID, mermaidText(t.Name))
	}
	for _, e := range g.Edges {
		arrow := "-->"
		if e.Transport == "intra" || e.Transport == "none" || !e.Alive {
			arrow = "-.->"
		}
		fmt.Fprintf(&b, "  %s %s|%s| %s\n", e.From, arrow, mermaidText(e.label()), e.To)
	}
	return []byte(b.String())
}
