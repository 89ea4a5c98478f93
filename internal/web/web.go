// Package web serves `pulse web`: the live computation graph as a page, with
// rates on every edge, a topic table and the warnings, over one server-sent
// event stream (one frame per window), or a recording with a time slider.
// It is one more view over the same core: frames are built from the
// recorder's windows and verdicts, the graph from internal/graph. Every
// asset is embedded; the page builds its DOM from text nodes only, under a
// Content-Security-Policy that allows no inline script.
package web

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"ros2_pulse/internal/cpu"
	"ros2_pulse/internal/graph"
	"ros2_pulse/internal/health"
	"ros2_pulse/internal/logfmt"
	"ros2_pulse/internal/window"
)

//go:embed assets
var assets embed.FS

func itoa(v int) string { return strconv.Itoa(v) }

// A frame is one window as the page draws it, in two parts: its Shape, what
// stays while the topology stays (names, edges, QoS and types; the page lays
// it out itself, design note 0030),
// and its Now, the window's values, aligned with the shape's lists. A page
// gets a shape only when it changed and a Now every window, so a steady
// graph costs its values only (design note 0021).
type Frame struct {
	Shape    *Shape
	Now      Now
	NewShape bool           // the shape differs from the previous frame's
	w        *window.Window // for the detail a page asks of an entity
}

// Shape is the graph's entities and edges without their rates. Seq numbers
// the shapes of one builder.
type Shape struct {
	Seq      int            `json:"seq"`
	Nodes    []ShapeNode    `json:"nodes"`
	Topics   []ShapeTopic   `json:"topics"`
	Services []ShapeService `json:"services"`
	Edges    []ShapeEdge    `json:"edges"`
}

// ShapeNode is a node of a process.
type ShapeNode struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Pid  int    `json:"pid"`
}

// ShapeTopic is a topic, with its message types and what it belongs to.
type ShapeTopic struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Types       []string `json:"types,omitempty"`
	Introspects string   `json:"introspects,omitempty"`
	Action      string   `json:"action,omitempty"`
	Part        string   `json:"part,omitempty"`
}

// ShapeService is a service or an action.
type ShapeService struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// ShapeEdge is a publication, subscription, server or client, with the QoS
// and type its endpoint was created with.
type ShapeEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
	QoS  string `json:"qos,omitempty"`
	Type string `json:"type,omitempty"`
}

func nodeShape(n *graph.Node) ShapeNode { return ShapeNode{ID: n.ID, Name: n.Name, Pid: n.Pid} }
func topicShape(t *graph.Topic) ShapeTopic {
	return ShapeTopic{ID: t.ID, Name: t.Name, Types: t.Types, Introspects: t.Introspects, Action: t.Action, Part: t.Part}
}
func serviceShape(s *graph.Service) ShapeService {
	return ShapeService{ID: s.ID, Name: s.Name, Kind: s.Kind}
}
func edgeShape(e *graph.Edge) ShapeEdge {
	return ShapeEdge{From: e.From, To: e.To, Kind: e.Kind, QoS: e.QoS, Type: e.Type}
}

func (a ShapeTopic) equal(b ShapeTopic) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Introspects == b.Introspects && a.Action == b.Action && a.Part == b.Part && slices.Equal(a.Types, b.Types)
}

// sameShape reports whether g has shape s, without building g's (most windows do).
func sameShape(g *graph.Graph, s *Shape) bool {
	if s == nil || len(g.Nodes) != len(s.Nodes) || len(g.Topics) != len(s.Topics) || len(g.Services) != len(s.Services) || len(g.Edges) != len(s.Edges) {
		return false
	}
	for i := range g.Nodes {
		if nodeShape(&g.Nodes[i]) != s.Nodes[i] {
			return false
		}
	}
	for i := range g.Topics {
		if !topicShape(&g.Topics[i]).equal(s.Topics[i]) {
			return false
		}
	}
	for i := range g.Services {
		if serviceShape(&g.Services[i]) != s.Services[i] {
			return false
		}
	}
	for i := range g.Edges {
		if edgeShape(&g.Edges[i]) != s.Edges[i] {
			return false
		}
	}
	return true
}

// shapeOf is g's shape, without its number.
func shapeOf(g *graph.Graph) *Shape {
	s := &Shape{Nodes: make([]ShapeNode, len(g.Nodes)), Topics: make([]ShapeTopic, len(g.Topics)),
		Services: make([]ShapeService, len(g.Services)), Edges: make([]ShapeEdge, len(g.Edges))}
	for i := range g.Nodes {
		s.Nodes[i] = nodeShape(&g.Nodes[i])
	}
	for i := range g.Topics {
		s.Topics[i] = topicShape(&g.Topics[i])
	}
	for i := range g.Services {
		s.Services[i] = serviceShape(&g.Services[i])
	}
	for i := range g.Edges {
		s.Edges[i] = edgeShape(&g.Edges[i])
	}
	return s
}

// Now is one window's values. Nodes, Topics, Services and Edges follow the
// order of the shape numbered Seq. Rates are rounded to 1 mHz: the page
// shows tenths, and shorter numbers are most of what a window sends.
type Now struct {
	Seq      int          `json:"seq"`
	TsNs     int64        `json:"ts_ns"`
	Seconds  float64      `json:"window_s"`
	Nodes    []NodeNow    `json:"nodes"`
	Topics   []TopicNow   `json:"topics"`
	Services []ServiceNow `json:"services"`
	// Each edge's rate (0 when its state is "not_measured" on this
	// distro), its state (graph.Edge's transport, or "exited") and its label
	// as pulse graph writes it: three lists rather than an object per edge,
	// whose keys would be most of what a large graph sends.
	EdgeHz    []float64 `json:"edge_hz"`
	EdgeState []string  `json:"edge_state"`
	EdgeLabel []string  `json:"edge_label"`
	// EdgeLatency: a publish edge's latency link ("p50 4.2 ms"), "" for
	// the others; absent without links. Paths: the window's end-to-end
	// paths (paths.go).
	EdgeLatency []string `json:"edge_latency,omitempty"`
	// EdgeBytes: each edge's bytes a second (0 where not measured), which
	// sets its width; absent when no process measures bytes.
	EdgeBytes []float64 `json:"edge_bytes,omitempty"`
	Paths     []PathRow `json:"paths,omitempty"`
	Warnings  []WarnRow `json:"warnings"`
	Procs     []ProcRow `json:"procs"`
	Index     int       `json:"index"` // replay: this frame's place; live: 0
	Count     int       `json:"count"` // replay: how many; live: 0
}

// NodeNow is whether a node's process exited and, where measured, its
// callbacks' busy share, its slowest callback and its process's busiest
// executor thread (a live node with nothing measured is {}).
type NodeNow struct {
	Exited    bool     `json:"exited,omitempty"`
	BusyPct   *float64 `json:"busy_pct,omitempty"`
	SlowestMs *float64 `json:"slowest_callback_ms,omitempty"`
	ThreadPct *float64 `json:"executor_thread_pct,omitempty"`
}

// TopicNow is a topic's row of the table: its rates and its state (top's words).
type TopicNow struct {
	PubHz  *float64 `json:"pub_hz,omitempty"` // nil: not measured on this distro
	RecvHz float64  `json:"recv_hz"`
	State  string   `json:"state"`
	GapMs  *float64 `json:"gap_ms,omitempty"`
	// LatencyMs: the receive latency's p99 over its subscriptions (latency tracking on).
	LatencyMs *float64 `json:"latency_ms,omitempty"`
}

// ServiceNow is the requests a service's servers took per second (nil: not measured).
type ServiceNow struct {
	Hz *float64 `json:"hz,omitempty"`
}

// WarnRow is a verdict with its age.
type WarnRow struct {
	Kind  string  `json:"kind"`
	What  string  `json:"what"`          // the verdict's fields, as its ALERT line says them
	Fix   string  `json:"fix,omitempty"` // a starved subscription's fix, where its cause is known
	AgeS  float64 `json:"age_s"`
	Topic string  `json:"topic,omitempty"`
	Node  string  `json:"node,omitempty"`
}

// ProcRow is a live process's CPU and memory.
type ProcRow struct {
	Pid    int      `json:"pid"`
	CPUPct *float64 `json:"cpu_pct,omitempty"`
	RSSMiB *float64 `json:"rss_mib,omitempty"`
}

// Builder turns windows into frames, keeping the last shape.
type Builder struct {
	shape *Shape
}

// NewBuilder returns a builder that has sent no shape.
func NewBuilder() *Builder { return &Builder{} }

func milli(v float64) float64 { return math.Round(v*1000) / 1000 }

func milliPtr(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := milli(*p)
	return &v
}

// Build makes the frame of w with its verdicts and its processes' CPU samples (nil: none).
func (b *Builder) Build(w *window.Window, warns []health.Warning, samples map[int]cpu.Sample) Frame {
	g := graph.FromWindow(w)
	now := Now{TsNs: w.TsNs, Seconds: w.Seconds, Nodes: make([]NodeNow, len(g.Nodes)), Topics: make([]TopicNow, len(g.Topics)),
		Services: make([]ServiceNow, len(g.Services)), EdgeHz: make([]float64, len(g.Edges)), EdgeState: make([]string, len(g.Edges)),
		EdgeLabel: make([]string, len(g.Edges)), Warnings: []WarnRow{}, Procs: []ProcRow{}}
	for i, n := range g.Nodes {
		now.Nodes[i] = NodeNow{Exited: !n.Alive, BusyPct: milliPtr(n.BusyPct), SlowestMs: milliPtr(n.SlowestMs), ThreadPct: milliPtr(n.ThreadPct)}
	}
	for i, s := range g.Services {
		now.Services[i] = ServiceNow{Hz: milliPtr(s.Hz)}
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		now.EdgeState[i], now.EdgeLabel[i] = e.Transport, e.Label()
		if !e.Alive {
			now.EdgeState[i] = "exited"
		}
		inter, _ := e.Hz("inter")
		intra, _ := e.Hz("intra")
		now.EdgeHz[i] = milli(inter + intra)
		if e.BytesPerS != nil {
			if now.EdgeBytes == nil {
				now.EdgeBytes = make([]float64, len(g.Edges))
			}
			now.EdgeBytes[i] = math.Round(*e.BytesPerS)
		}
	}
	warned := map[string]bool{}
	for _, x := range warns {
		if x.Topic != "" && x.Kind != health.CannotJudge {
			warned[x.Topic] = true
		}
	}
	for i := range g.Topics { // graph topic i is w.Topics[i]
		t := &w.Topics[i]
		r := TopicNow{RecvHz: milli(t.RecvInter + t.RecvIntra), State: t.State(warned[t.Name])}
		if t.PubMeasured("any") && t.PubCount > 0 {
			v := milli(t.PubAny)
			r.PubHz = &v
		}
		if t.PubGap.HasData || t.RecvGap.HasData {
			v := milli(max(t.PubGap.MaxDtMs(), t.RecvGap.MaxDtMs()))
			r.GapMs = &v
		}
		if t.Latency.HasData && t.Latency.N > 0 {
			v := milli(t.Latency.P99Ms)
			r.LatencyMs = &v
		}
		now.Topics[i] = r
	}
	labelLoss(w, g, now.EdgeLabel)
	linkEdges(w, g, &now)
	f := Frame{Shape: b.shape, w: w}
	if !sameShape(g, b.shape) {
		shape := shapeOf(g)
		shape.Seq = 1
		if b.shape != nil {
			shape.Seq = b.shape.Seq + 1
		}
		b.shape, f.Shape, f.NewShape = shape, shape, true
	}
	now.Seq = f.Shape.Seq
	sorted := append([]health.Warning(nil), warns...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Age > sorted[j].Age })
	for _, x := range sorted {
		lines := logfmt.WarnLines([]health.Warning{x}) // upstream's WARN line, if any, then the verdict's ALERT line
		what := strings.TrimPrefix(lines[len(lines)-1], "ALERT ")
		now.Warnings = append(now.Warnings, WarnRow{Kind: string(x.Kind), What: what, Fix: x.Fix, AgeS: milli(x.Age.Seconds()), Topic: x.Topic, Node: x.Node})
	}
	for _, p := range w.Procs {
		if s, ok := samples[p.Pid]; ok && p.Alive {
			c, m := milli(s.CPUPct), milli(float64(s.RSSBytes)/(1<<20))
			now.Procs = append(now.Procs, ProcRow{Pid: p.Pid, CPUPct: &c, RSSMiB: &m})
		}
	}
	f.Now = now
	return f
}

// labelLoss adds to each subscription edge's label the share of this
// machine's publishes it missed, where that was judged and is not nothing.
func labelLoss(w *window.Window, g *graph.Graph, labels []string) {
	type end struct {
		topic, node string
		pid         int
	}
	var lossy map[end]float64 // made for the first loss: most windows have none
	for i := range w.Topics {
		for _, e := range w.Topics[i].Subs {
			if e.LossJudged && e.LossPct >= 0.05 {
				if lossy == nil {
					lossy = map[end]float64{}
				}
				lossy[end{w.Topics[i].Name, e.Node, e.Pid}] = e.LossPct
			}
		}
	}
	if lossy == nil {
		return
	}
	// Ids are places: node "n<i>" is g.Nodes[i], topic "t<i>" is g.Topics[i].
	at := func(id string, prefix byte, n int) int {
		if len(id) < 2 || id[0] != prefix {
			return -1
		}
		i, err := strconv.Atoi(id[1:])
		if err != nil || i < 0 || i >= n {
			return -1
		}
		return i
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		t, n := at(e.From, 't', len(g.Topics)), at(e.To, 'n', len(g.Nodes))
		if e.Kind != "sub" || t < 0 || n < 0 {
			continue
		}
		if pct, ok := lossy[end{g.Topics[t].Name, g.Nodes[n].Name, g.Nodes[n].Pid}]; ok {
			labels[i] += " · loss " + strconv.FormatFloat(pct, 'f', 1, 64) + "%"
		}
	}
}

// Server serves the page, its assets and the frames: live ones pushed over
// /events, or a recording's frames by index.
type Server struct {
	mu      sync.Mutex
	latest  message
	window  *window.Window // the latest window, for details
	subs    map[chan message]bool
	replay  [][]byte         // a recording's frames, each {"shape":…,"now":…}; nil live
	windows []*window.Window // and their windows
	version string
}

// message is one window for the pages: its values, and the shape they
// follow (sent to a page only when it differs from the one the page has).
type message struct {
	seq   int
	shape []byte
	now   []byte
}

// NewServer returns a live server (replay nil) or one over a recording's frames.
func NewServer(version string, replay []Frame) (*Server, error) {
	s := &Server{subs: map[chan message]bool{}, version: version}
	for i := range replay {
		replay[i].Now.Index, replay[i].Now.Count = i, len(replay)
		b, err := json.Marshal(map[string]any{"shape": replay[i].Shape, "now": &replay[i].Now})
		if err != nil {
			return nil, err
		}
		s.replay = append(s.replay, b)
		s.windows = append(s.windows, replay[i].w)
	}
	return s, nil
}

// Publish sends a frame to every open page and keeps it for pages that open later.
func (s *Server) Publish(f Frame) error {
	now, err := json.Marshal(&f.Now)
	if err != nil {
		return err
	}
	s.mu.Lock()
	last := s.latest
	s.mu.Unlock()
	m := message{seq: f.Shape.Seq, shape: last.shape, now: now}
	if m.seq != last.seq || m.shape == nil { // encoded once per shape
		if m.shape, err = json.Marshal(f.Shape); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latest, s.window = m, f.w
	for ch := range s.subs {
		select {
		case ch <- m:
		default: // a page that has not read the last frame gets the next one
		}
	}
	return nil
}

// securityHeaders: no script but ours, no framing, no sniffing; nothing cached.
func securityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// Handler is the whole site: read-only (GET and HEAD only).
func (s *Server) Handler() http.Handler {
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServer(http.FS(static))
	mux := http.NewServeMux()
	mux.HandleFunc("/events", s.events)
	mux.HandleFunc("/api/info", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"replay":%t,"count":%d,"version":%q}`, s.replay != nil, len(s.replay), s.version)
	})
	mux.HandleFunc("/api/frame", func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(r.URL.Query().Get("i"))
		if err != nil || i < 0 || i >= len(s.replay) {
			http.Error(w, "no such frame", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.replay[i])
	})
	mux.HandleFunc("/api/detail", s.detail)
	mux.Handle("/", files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "read-only", http.StatusMethodNotAllowed)
			return
		}
		securityHeaders(w)
		mux.ServeHTTP(w, r)
	})
}

// detail answers what the page shows of one entity (?key=) in the latest
// window, or in a recording's window ?i=.
func (s *Server) detail(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var win *window.Window
	if s.replay != nil {
		i, err := strconv.Atoi(q.Get("i"))
		if err != nil || i < 0 || i >= len(s.windows) {
			http.Error(w, "no such frame", http.StatusNotFound)
			return
		}
		win = s.windows[i]
	} else {
		s.mu.Lock()
		win = s.window
		s.mu.Unlock()
	}
	if win == nil {
		http.Error(w, "no window yet", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(DetailOf(win, q.Get("key")))
}

// events streams frames as server-sent events: the latest at once, then
// each new one; a "shape" event before the first values and whenever the
// shape changes.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	ch := make(chan message, 1)
	s.mu.Lock()
	latest := s.latest
	s.subs[ch] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, ch)
		s.mu.Unlock()
	}()
	sentSeq := 0
	send := func(m message) bool {
		if m.seq != sentSeq {
			if _, err := fmt.Fprintf(w, "event: shape\ndata: %s\n\n", m.shape); err != nil {
				return false
			}
			sentSeq = m.seq
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", m.now); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	if latest.now != nil && !send(latest) {
		return
	}
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case m := <-ch:
			if !send(m) {
				return
			}
		case <-keepalive.C: // a comment keeps proxies from closing an idle stream
			if _, err := fmt.Fprint(w, ": keepalive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}
