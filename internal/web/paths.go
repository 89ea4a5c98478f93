package web

import (
	"strconv"

	"ros2_pulse/internal/graph"
	"ros2_pulse/internal/window"
)

// PathRow is an end-to-end path as the page lists it (issue 47): its
// latency in the window (p50, p99, a bound on the max, ms; nil: not
// measured, Missing names the hop), its spec bound and whether it is slow.
type PathRow struct {
	Name    string   `json:"name"`
	Named   bool     `json:"named"`
	Topics  []string `json:"topics"`
	N       uint64   `json:"n"`
	P50Ms   *float64 `json:"p50_ms,omitempty"`
	P99Ms   *float64 `json:"p99_ms,omitempty"`
	MaxMs   *float64 `json:"max_ms,omitempty"`
	BoundMs float64  `json:"bound_ms,omitempty"`
	Missing string   `json:"missing,omitempty"`
	Slow    bool     `json:"slow,omitempty"`
}

// linkEdges puts each latency link on the edge of its output: the publish
// edge from the linking node to the topic it publishes on carries the
// input's age at the publish, "p50 4.2 ms" on the picture and the whole
// hop (from which topic, p50, p99, the node's own share) in its label. And
// it lists the window's paths.
func linkEdges(w *window.Window, g *graph.Graph, now *Now) {
	if len(w.Links) == 0 && len(w.Paths) == 0 {
		return
	}
	nodeID := make(map[string]string, len(g.Nodes))
	for i := range g.Nodes {
		nodeID[g.Nodes[i].Name+"@"+strconv.Itoa(g.Nodes[i].Pid)] = g.Nodes[i].ID
	}
	topicID := make(map[string]string, len(g.Topics))
	for i := range g.Topics {
		topicID[g.Topics[i].Name] = g.Topics[i].ID
	}
	edge := make(map[[2]string]int, len(g.Edges))
	for i := range g.Edges {
		if e := &g.Edges[i]; e.Kind == "pub" {
			edge[[2]string{e.From, e.To}] = i
		}
	}
	for i := range w.Links {
		l := &w.Links[i]
		k, ok := edge[[2]string{nodeID[l.Node+"@"+strconv.Itoa(l.Pid)], topicID[l.To]}]
		if !ok || l.N == l.Unaged {
			continue // its topic is hidden (a builtin), or nothing of it was aged in the window
		}
		if now.EdgeLatency == nil {
			now.EdgeLatency = make([]string, len(g.Edges))
		}
		if l.Sampled { // a timer's publish from the latest input: in the label, the picture keeps message links
			now.EdgeLabel[k] += "\nsampled from " + l.From + ": latest's age p50 " + ms1(l.Age.P50Ms) + " ms, worst case p99 " +
				ms1(l.Worst.P99Ms) + " ms"
			continue
		}
		if now.EdgeLatency[k] == "" { // a node relaying two inputs onto one topic: the first on the picture, both in the label
			now.EdgeLatency[k] = "p50 " + ms1(l.Age.P50Ms) + " ms"
		}
		now.EdgeLabel[k] += "\nfrom " + l.From + ": age p50 " + ms1(l.Age.P50Ms) + " ms, p99 " + ms1(l.Age.P99Ms) +
			" ms, own " + ms1(l.Own.MeanMs) + " ms"
	}
	for _, p := range w.Paths {
		r := PathRow{Name: p.Name, Named: p.Named, Topics: p.Topics, N: p.N, BoundMs: p.MaxMs, Missing: p.Missing, Slow: p.Slow()}
		if p.Measured {
			r.P50Ms, r.P99Ms, r.MaxMs = milliPtr(&p.Worst.P50Ms), milliPtr(&p.Worst.P99Ms), milliPtr(&p.Worst.MaxMs)
		}
		now.Paths = append(now.Paths, r)
	}
}

func ms1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
