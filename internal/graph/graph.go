// Package graph draws the live computation graph from a window: ROS nodes,
// topics, and who publishes and subscribes what, with the transport, the
// rates and whether each process is alive. It is rqt_graph without joining
// DDS: everything comes from the probe's init tracepoints and counters.
package graph

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"ros2_pulse/internal/compat"
	"ros2_pulse/internal/health"
	"ros2_pulse/internal/window"
)

// Node is a ROS node in one process.
type Node struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Pid   int    `json:"pid"`
	Alive bool   `json:"alive"`
	// BusyPct: the share of the window inside its callbacks; SlowestMs: what
	// its slowest callback of the window took at least. Absent when not
	// measured (rclpy, timing off) or, for SlowestMs, when nothing ran.
	BusyPct   *float64 `json:"busy_pct,omitempty"`
	SlowestMs *float64 `json:"slowest_callback_ms,omitempty"`
	// ThreadPct: its process's busiest executor thread (in callbacks, or
	// outside rcl_wait), which starves every node it serves; absent when no
	// thread of the process was measured.
	ThreadPct *float64 `json:"executor_thread_pct,omitempty"`
}

// saturated: its own callbacks or its process's busiest thread leave no time.
func (n *Node) saturated() bool {
	return n.BusyPct != nil && *n.BusyPct >= SaturatedPct || n.ThreadPct != nil && *n.ThreadPct >= SaturatedPct
}

// SaturatedPct is the busy share from which a node is drawn as saturated.
const SaturatedPct = 90.0

// timing is the node's busy share and slowest callback, for labels.
func (n *Node) timing() string {
	out := ""
	if n.BusyPct != nil {
		out = fmt.Sprintf("busy %.0f%%", *n.BusyPct)
	}
	if n.SlowestMs != nil {
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("slowest %.1f ms", *n.SlowestMs)
	}
	if n.ThreadPct != nil && *n.ThreadPct >= SaturatedPct { // said only when it starves the node
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("thread %.0f%%", *n.ThreadPct)
	}
	return out
}

// Topic is a topic with its machine-wide rates. A rate the distro cannot
// see is absent (nil), never zero.
type Topic struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	PubHz  *float64 `json:"pub_hz,omitempty"`
	RecvHz float64  `json:"recv_hz"`
	Types  []string `json:"types,omitempty"` // the message types its endpoints were created with (more than one: a mismatch)
	// Introspects: the service whose calls this topic carries (Iron+ service
	// introspection, <service>/_service_event); "" for an ordinary topic.
	Introspects string `json:"introspects,omitempty"`
	// Action, Part: the action this topic belongs to (its feedback or status).
	Action string `json:"action,omitempty"`
	Part   string `json:"part,omitempty"`
}

// Edge is a publication (node -> topic) or a subscription (topic -> node).
// A publication whose publishes the distro cannot all see (Humble's
// intra-process ones) is drawn with transport "not_measured" and no rates.
type Edge struct {
	From      string   `json:"from"`
	To        string   `json:"to"`
	Kind      string   `json:"kind"`      // "pub" or "sub"
	Transport string   `json:"transport"` // "inter", "intra", "both", "none" (no traffic in the window), "starved", "unmatched" or "not_measured"
	InterHz   *float64 `json:"inter_hz,omitempty"`
	IntraHz   *float64 `json:"intra_hz,omitempty"`
	Alive     bool     `json:"alive"`
	// What the probe learnt of the endpoint at creation, when it did.
	QoS  string `json:"qos,omitempty"`
	Type string `json:"type,omitempty"`
	// Unmatched: why the endpoint meets nobody (internal/diagnose's reason),
	// or a starved subscription's likely cause (health.StarvedCause: its
	// only publishers here on another DDS vendor's RMW); Why the detail.
	Unmatched string `json:"unmatched,omitempty"`
	Why       string `json:"why,omitempty"`
	// A "serves" edge (a server node -> its service) and a "calls" edge (a
	// client node -> the service): calls per second in InterHz; the answered
	// calls' time at p99 and at most in the window (server: handling; client:
	// round trip); the calls open at the window's end.
	HandlingP99Ms *float64 `json:"handling_p99_ms,omitempty"`
	HandlingMaxMs *float64 `json:"handling_max_ms,omitempty"`
	Outstanding   int      `json:"outstanding,omitempty"`
	// An action's edges: goals per second in InterHz, the time to accept a
	// goal (send_goal) and to its result (get_result) at p99, cancels.
	AcceptP99Ms *float64 `json:"accept_p99_ms,omitempty"`
	ResultP99Ms *float64 `json:"result_p99_ms,omitempty"`
	Cancels     uint64   `json:"cancels,omitempty"`
	// A pub or sub edge's bytes a second (its endpoint's inter-process
	// messages as serialized, design note 0033), when its process measures
	// bytes and could size them, and its mean message size in the window;
	// BytesSampled: from sampled sizes.
	BytesPerS    *float64 `json:"bytes_per_s,omitempty"`
	MeanBytes    *float64 `json:"mean_bytes,omitempty"`
	BytesSampled bool     `json:"bytes_sampled,omitempty"`
}

// Hz returns the edge's rate on transport "inter" or "intra", and whether it was measured.
func (e *Edge) Hz(transport string) (float64, bool) {
	p := e.InterHz
	if transport == "intra" {
		p = e.IntraHz
	}
	if p == nil {
		return 0, false
	}
	return *p, true
}

func ptr(v float64) *float64 { return &v }

// Graph is the whole picture.
type Graph struct {
	Nodes    []Node    `json:"nodes"`
	Topics   []Topic   `json:"topics"`
	Services []Service `json:"services"`
	Edges    []Edge    `json:"edges"`
}

// Service is a service (or an action: its three services drawn as one) with
// servers or clients on this machine, and the requests its servers took per
// second (an action's: goals; nil when no server of it is measured). A
// node's parameter services appear only while they are called.
type Service struct {
	ID   string   `json:"id"`
	Name string   `json:"name"`
	Kind string   `json:"kind"` // "service" or "action"
	Hz   *float64 `json:"hz,omitempty"`
}

// nk is a node: its name in its process.
type nk struct {
	name string
	pid  int
}

// FromWindow builds the graph of w. Nodes and topics get stable ids in name
// order (n0, n1, ... and t0, t1, ...), so outputs diff cleanly.
func FromWindow(w *window.Window) *Graph {
	g := &Graph{Nodes: []Node{}, Topics: []Topic{}, Services: []Service{}, Edges: []Edge{}} // arrays, never null, even when empty
	alive := map[int]bool{}
	index := map[nk]int{} // a node's place in keys, then in g.Nodes
	var keys []nk
	add := func(k nk) {
		if _, ok := index[k]; !ok && k.name != "" {
			index[k] = len(keys)
			keys = append(keys, k)
		}
	}
	for _, p := range w.Procs {
		alive[p.Pid] = p.Alive
		for _, n := range p.Nodes {
			add(nk{n, p.Pid})
		}
	}
	endpoints := 0
	for i := range w.Topics {
		t := &w.Topics[i]
		for j := range t.Pubs {
			add(nk{t.Pubs[j].Node, t.Pubs[j].Pid})
		}
		for j := range t.Subs {
			add(nk{t.Subs[j].Node, t.Subs[j].Pid})
		}
		endpoints += len(t.Pubs) + len(t.Subs)
	}
	g.Nodes = make([]Node, 0, len(keys))
	g.Topics = make([]Topic, 0, len(w.Topics))
	// An edge is large: sized once (services' edges included), never grown by appending.
	g.Edges = make([]Edge, 0, endpoints+len(w.Calls)+len(w.Services))
	slices.SortFunc(keys, func(a, b nk) int {
		return cmp.Or(strings.Compare(a.name, b.name), cmp.Compare(a.pid, b.pid))
	})
	ids := make([]string, len(keys))
	for i, k := range keys {
		index[k] = i
		ids[i] = "n" + strconv.Itoa(i)
	}
	nodeID := func(node string, pid int) (string, bool) {
		i, ok := index[nk{node, pid}]
		if !ok {
			return "", false
		}
		return ids[i], true
	}
	busy := make([]*float64, len(keys))
	for _, b := range w.Busy {
		if i, ok := index[nk{b.Node, b.Pid}]; ok && b.Measured {
			busy[i] = ptr(b.Pct)
		}
	}
	// A node's callbacks come one after another: its place is looked up once.
	slowest := make([]*float64, len(keys))
	last, lastAt := nk{}, -1
	for i := range w.Callbacks {
		c := &w.Callbacks[i]
		if !c.Measured || c.Duration.N == 0 {
			continue
		}
		if k := (nk{c.Node, c.Pid}); k != last || lastAt < 0 {
			j, ok := index[k]
			if !ok {
				continue
			}
			last, lastAt = k, j
		}
		if p := slowest[lastAt]; p == nil {
			slowest[lastAt] = ptr(c.Duration.MaxMs)
		} else {
			*p = max(*p, c.Duration.MaxMs)
		}
	}
	threads := window.ProcessBusy(w.Threads)
	for i, k := range keys {
		n := Node{ID: ids[i], Name: k.name, Pid: k.pid, Alive: alive[k.pid], BusyPct: busy[i], SlowestMs: slowest[i]}
		if pb, ok := threads[k.pid]; ok && alive[k.pid] {
			n.ThreadPct = ptr(pb.BusiestPct)
		}
		g.Nodes = append(g.Nodes, n)
	}
	type side struct {
		pub         bool
		topic, node string
		pid         int
	}
	unmatched := map[side]window.Unmatched{} // the diagnosis that rules an endpoint out
	for _, u := range w.Unmatched {
		if u.Error {
			unmatched[side{u.Pub, u.Topic, u.Node, u.Pid}] = u
		}
	}
	explain := func(edge *Edge, pub bool, topic string, e *window.EndpointRate) {
		if q := e.QoS; q != nil {
			edge.QoS, edge.Type = compat.Summary(q), q.Type
		}
		if u, ok := unmatched[side{pub, topic, e.Node, e.Pid}]; ok && e.Alive {
			edge.Transport, edge.Unmatched, edge.Why = "unmatched", u.Reason, u.Detail
		}
	}
	for i := range w.Topics {
		t := &w.Topics[i]
		tid := "t" + strconv.Itoa(i)
		topic := Topic{ID: tid, Name: t.Name, RecvHz: t.RecvInter + t.RecvIntra}
		if window.IsServiceEvent(t.Name) {
			topic.Introspects = strings.TrimSuffix(t.Name, "/_service_event")
		}
		if a, part, ok := window.ActionOf(t.Name); ok {
			topic.Action, topic.Part = a, part
		}
		if t.PubMeasured("any") {
			topic.PubHz = ptr(t.PubAny)
		}
		for _, side := range [][]window.EndpointRate{t.Pubs, t.Subs} {
			for j := range side {
				if q := side[j].QoS; q != nil && q.Type != "" && !slices.Contains(topic.Types, q.Type) {
					topic.Types = append(topic.Types, q.Type)
				}
			}
		}
		sort.Strings(topic.Types)
		g.Topics = append(g.Topics, topic)
		for j := range t.Pubs {
			e := &t.Pubs[j]
			if id, ok := nodeID(e.Node, e.Pid); ok {
				g.Edges = append(g.Edges, Edge{From: id, To: tid, Kind: "pub", Transport: transport(*e), InterHz: ptr(e.Inter), IntraHz: ptr(e.Intra), Alive: e.Alive})
				setBytes(&g.Edges[len(g.Edges)-1], e.Bytes)
				edge := &g.Edges[len(g.Edges)-1] // filled in place: an edge is large
				if e.PubHidden {
					edge.Transport, edge.InterHz, edge.IntraHz = "not_measured", nil, nil
				}
				explain(edge, true, t.Name, e)
			}
		}
		for j := range t.Subs {
			e := &t.Subs[j]
			if id, ok := nodeID(e.Node, e.Pid); ok {
				g.Edges = append(g.Edges, Edge{From: tid, To: id, Kind: "sub", Transport: transport(*e), InterHz: ptr(e.Inter), IntraHz: ptr(e.Intra), Alive: e.Alive})
				setBytes(&g.Edges[len(g.Edges)-1], e.Bytes)
				edge := &g.Edges[len(g.Edges)-1]
				switch {
				case t.Starved(e): // never received anything, while its topic is published here
					edge.Transport = "starved"
					if u, ok := health.StarvedCause(w, t.Name, e.Node, e.Pid); ok && !u.Error { // an error is said as unmatched below
						edge.Unmatched, edge.Why = u.Reason, u.Detail
					}
				case e.RecvHidden && e.Alive: // silent, and its takes may fire no tracepoint
					edge.Transport, edge.InterHz, edge.IntraHz = "not_measured", nil, nil
				}
				explain(edge, false, t.Name, e)
			}
		}
	}
	g.addServices(w, nodeID)
	return g
}

// addServices adds each service and action, with a "serves" edge from every
// server node and a "calls" edge from every client node. Where the probe
// times calls (ABI 1.6, any client library) the edges carry the window's
// calls per second and their time (handling; round trip) and what is still
// open; else a server's rate comes from rclcpp's callbacks (an rclpy server
// is then not measured). An action's three services are drawn as the one
// action, its edges with goals per second, time to accept and to result.
func (g *Graph) addServices(w *window.Window, nodeID func(string, int) (string, bool)) {
	type endpoint struct {
		node, name string
		pid        int
		client     bool
	}
	edges := map[endpoint]*Edge{}
	var order []endpoint
	hz := map[string]*float64{}
	edgeOf := func(k endpoint) *Edge {
		if e := edges[k]; e != nil {
			return e
		}
		e := &Edge{Kind: "serves", Transport: "none", Alive: true}
		if k.client {
			e.Kind = "calls"
		}
		edges[k] = e
		order = append(order, k)
		return e
	}
	addRate := func(name string, r float64) {
		if hz[name] == nil {
			hz[name] = ptr(0)
		}
		*hz[name] += r
	}
	timed := map[endpoint]bool{}
	for i := range w.Calls {
		c := &w.Calls[i]
		if !c.Alive || c.Idle() {
			continue
		}
		name, part, isAction := c.ShownAs()
		k := endpoint{c.Node, name, c.Pid, c.Client}
		e := edgeOf(k)
		timed[endpoint{c.Node, c.Name, c.Pid, c.Client}] = true
		e.Transport = "inter"
		if c.Open != nil {
			e.Outstanding += len(c.Open)
		}
		switch {
		case !isAction:
			e.InterHz = ptr(c.Hz)
			if c.Time.N > 0 {
				e.HandlingP99Ms, e.HandlingMaxMs = ptr(c.Time.P99Ms), ptr(c.Time.MaxMs)
			}
			if !c.Client {
				addRate(name, c.Hz)
			}
		case part == "send_goal":
			e.InterHz = ptr(c.Hz) // goals per second
			if c.Time.N > 0 {
				e.AcceptP99Ms = ptr(c.Time.P99Ms)
			}
			if !c.Client {
				addRate(name, c.Hz)
			}
		case part == "get_result":
			if c.Time.N > 0 {
				e.ResultP99Ms = ptr(c.Time.P99Ms)
			}
		case part == "cancel_goal":
			e.Cancels += c.Started
		}
		if c.Client && !c.HasServer {
			e.Transport, e.Unmatched, e.Why = "unmatched", "no_server", "nothing here serves "+name
		}
	}
	// Servers the probe does not time calls of (an older probe, timing off): rclcpp's callbacks.
	handling := map[endpoint]window.Durations{}
	for i := range w.Callbacks {
		if c := &w.Callbacks[i]; c.Kind == "service" && c.Measured {
			handling[endpoint{c.Node, c.Name, c.Pid, false}] = c.Duration
		}
	}
	for _, sv := range w.Services {
		k := endpoint{sv.Node, sv.Name, sv.Pid, false}
		if timed[k] || window.IsParameterService(sv.Name) && sv.Delta == 0 {
			continue
		}
		if _, _, isAction := window.ActionOf(sv.Name); isAction {
			continue // an action server's services are rcl's, never rclcpp callbacks
		}
		e := edgeOf(k)
		e.Transport = "not_measured"
		if sv.Measured {
			rate := 0.0
			if w.Seconds > 0 {
				rate = float64(sv.Delta) / w.Seconds
			}
			e.Transport, e.InterHz = "inter", ptr(rate)
			addRate(sv.Name, rate)
			if d, ok := handling[k]; ok && d.N > 0 {
				e.HandlingP99Ms, e.HandlingMaxMs = ptr(d.P99Ms), ptr(d.MaxMs)
			}
		}
	}
	for _, e := range edges {
		if e.Transport == "inter" && e.InterHz != nil && *e.InterHz == 0 && e.Outstanding == 0 {
			e.Transport = "none"
		}
	}
	kinds := map[string]string{}
	var names []string
	for _, k := range order {
		if _, ok := kinds[k.name]; !ok {
			names = append(names, k.name)
			kinds[k.name] = "service"
		}
	}
	for _, c := range w.Calls {
		if a, _, ok := window.ActionOf(c.Name); ok {
			kinds[a] = "action"
		}
	}
	sort.Strings(names)
	sids := map[string]string{}
	for i, name := range names {
		sids[name] = "s" + strconv.Itoa(i)
		g.Services = append(g.Services, Service{ID: sids[name], Name: name, Kind: kinds[name], Hz: hz[name]})
	}
	for _, k := range order {
		from, ok := nodeID(k.node, k.pid)
		if !ok {
			continue
		}
		e := edges[k]
		e.From, e.To = from, sids[k.name]
		g.Edges = append(g.Edges, *e)
	}
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
	inter, _ := e.Hz("inter")
	intra, _ := e.Hz("intra")
	if e.Kind == "serves" || e.Kind == "calls" {
		return e.callLabel(inter)
	}
	l := e.rateLabel(inter, intra)
	if e.BytesPerS != nil && (e.Transport == "inter" || e.Transport == "both") {
		approx := ""
		if e.BytesSampled {
			approx = "~"
		}
		l += " · " + approx + window.HumanBytes(*e.BytesPerS) + "/s"
		if e.MeanBytes != nil && *e.MeanBytes > 0 {
			l += ", " + approx + window.HumanBytes(*e.MeanBytes) + "/msg"
		}
	}
	return l
}

// setBytes gives a pub or sub edge its endpoint's bytes, when measured.
func setBytes(e *Edge, b window.Bytes) {
	if b.Measured() {
		e.BytesPerS, e.BytesSampled = ptr(b.PerS), b.How == window.BytesSampled
		if b.Messages > 0 {
			e.MeanBytes = ptr(b.MeanSize)
		}
	}
}

// rateLabel is a pub or sub edge's rate, or why it has none.
func (e *Edge) rateLabel(inter, intra float64) string {
	switch e.Transport { // strconv's 'f' with 1 digit writes what fmt's %.1f does, at a fraction of its cost
	case "both":
		return hz1(inter) + " Hz + " + hz1(intra) + " intra"
	case "intra":
		return hz1(intra) + " Hz intra"
	case "inter":
		return hz1(inter) + " Hz"
	case "not_measured":
		if e.Kind == "sub" {
			return "not measured (Humble rclpy take)"
		}
		return "not measured (Humble intra)"
	case "starved":
		if e.Unmatched != "" { // its likely cause
			return "starved: " + e.Unmatched + ": " + e.Why
		}
		return "starved: receives nothing"
	case "unmatched":
		if e.Why != "" {
			return e.Unmatched + ": " + e.Why
		}
		return e.Unmatched
	}
	return "0 Hz"
}

// hz1 writes v with one decimal, as %.1f does.
func hz1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// callLabel labels a serves or calls edge: its rate, time and open calls.
func (e *Edge) callLabel(rate float64) string {
	if e.Transport == "not_measured" {
		return "not measured (rclpy server, no timing)"
	}
	var parts []string
	switch {
	case e.AcceptP99Ms != nil || e.ResultP99Ms != nil || e.Cancels > 0:
		parts = append(parts, fmt.Sprintf("%.1f goals/s", rate))
		if e.AcceptP99Ms != nil {
			parts = append(parts, fmt.Sprintf("accept p99 %s", ms(*e.AcceptP99Ms)))
		}
		if e.ResultP99Ms != nil {
			parts = append(parts, fmt.Sprintf("result p99 %s", ms(*e.ResultP99Ms)))
		}
		if e.Cancels > 0 {
			parts = append(parts, fmt.Sprintf("%d cancels", e.Cancels))
		}
	default:
		parts = append(parts, fmt.Sprintf("%.1f req/s", rate))
		if e.HandlingP99Ms != nil {
			parts = append(parts, "p99 "+ms(*e.HandlingP99Ms))
		}
	}
	if e.Outstanding > 0 {
		parts = append(parts, fmt.Sprintf("%d open", e.Outstanding))
	}
	if e.Transport == "unmatched" {
		parts = append(parts, e.Why)
	}
	return strings.Join(parts, ", ")
}

// ms writes a duration in ms, or in s from 10 s on.
func ms(v float64) string {
	if v >= 10000 {
		return fmt.Sprintf("%.1f s", v/1000)
	}
	return fmt.Sprintf("%.1f ms", v)
}

// label is the topic's name and its message type, or the types that differ;
// what it carries when it is a service's introspection or an action's part.
func (t *Topic) label() string {
	switch {
	case t.Introspects != "":
		return t.Name + "\nservice events of " + t.Introspects + " (introspection)"
	case t.Action != "":
		return t.Name + "\n" + t.Part + " of action " + t.Action
	}
	switch len(t.Types) {
	case 0:
		return t.Name
	case 1:
		return t.Name + "\n" + t.Types[0]
	}
	return t.Name + "\ntypes differ: " + strings.Join(t.Types, ", ")
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
// blue, edges without traffic dotted grey, a starved subscription bold red.
func (g *Graph) DOT() []byte {
	var b strings.Builder
	b.WriteString("digraph ros2 {\n  rankdir=LR;\n  node [fontname=\"Helvetica\"];\n")
	for _, n := range g.Nodes {
		style := ""
		switch {
		case !n.Alive:
			style = `, style=dashed, color=grey, fontcolor=grey`
		case n.saturated(): // its executor has no time left
			style = `, style=bold, color=red, fontcolor=red`
		}
		label := fmt.Sprintf("%s\npid %d", n.Name, n.Pid)
		if t := n.timing(); t != "" {
			label += "\n" + t
		}
		fmt.Fprintf(&b, "  %s [shape=ellipse, label=%s%s];\n", n.ID, dotQuote(label), style)
	}
	for _, t := range g.Topics {
		fmt.Fprintf(&b, "  %s [shape=box, label=%s];\n", t.ID, dotQuote(t.label()))
	}
	for _, sv := range g.Services {
		label := sv.Name
		if sv.Kind == "action" {
			label = "action " + sv.Name
		}
		fmt.Fprintf(&b, "  %s [shape=hexagon, label=%s];\n", sv.ID, dotQuote(label))
	}
	for _, e := range g.Edges {
		style := ""
		switch {
		case !e.Alive || e.Transport == "none":
			style = ", style=dotted, color=grey"
		case e.Transport == "intra":
			style = ", style=dashed, color=blue"
		case e.Transport == "not_measured":
			style = ", style=dashed, color=orange"
		case e.Transport == "starved":
			style = ", style=bold, color=red, fontcolor=red"
		case e.Transport == "unmatched": // the middleware never pairs it: why is the label
			style = ", style=\"bold,dashed\", color=red, fontcolor=red"
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
		if t := n.timing(); t != "" {
			label += " · " + t
		}
		if !n.Alive {
			label += " (exited)"
		}
		fmt.Fprintf(&b, "  %s(%s)\n", n.ID, mermaidText(label))
	}
	for _, t := range g.Topics {
		fmt.Fprintf(&b, "  %s[%s]\n", t.ID, mermaidText(t.label()))
	}
	for _, sv := range g.Services {
		label := sv.Name
		if sv.Kind == "action" {
			label = "action " + sv.Name
		}
		fmt.Fprintf(&b, "  %s{{%s}}\n", sv.ID, mermaidText(label))
	}
	for _, e := range g.Edges {
		arrow := "-->"
		switch {
		case e.Transport == "starved" || e.Transport == "unmatched":
			arrow = "==>" // thick: the edge that needs looking at
		case e.Transport == "intra" || e.Transport == "none" || e.Transport == "not_measured" || !e.Alive:
			arrow = "-.->"
		}
		fmt.Fprintf(&b, "  %s %s|%s| %s\n", e.From, arrow, mermaidText(e.label()), e.To)
	}
	return []byte(b.String())
}

// Label is the edge's label as every rendering draws it (rate, or why none).
func (e *Edge) Label() string { return e.label() }
