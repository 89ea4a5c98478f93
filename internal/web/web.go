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
	"net/http"
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

// Frame is one window as the page draws it.
type Frame struct {
	TsNs    int64        `json:"ts_ns"`
	Seconds float64      `json:"window_s"`
	Graph   *graph.Graph `json:"graph"`
	Labels  []string     `json:"labels"` // per edge of Graph.Edges: its label, as pulse graph writes it
	// Pos: per graph id, sent only with a frame whose topology changed
	// (Relayout); the page keeps it, and a page that opens later gets the
	// latest positions with the latest frame.
	Pos      map[string]Pos `json:"pos,omitempty"`
	Relayout bool           `json:"relayout"`
	Topics   []TopicRow     `json:"topics"`
	Warnings []WarnRow      `json:"warnings"`
	Procs    []ProcRow      `json:"procs"`
	Index    int            `json:"index"` // replay: this frame's place; live: 0
	Count    int            `json:"count"` // replay: how many; live: 0
}

// TopicRow is a topic in the table: its rates and its state (top's words).
type TopicRow struct {
	Name   string   `json:"name"`
	PubHz  *float64 `json:"pub_hz,omitempty"` // nil: not measured on this distro
	RecvHz float64  `json:"recv_hz"`
	State  string   `json:"state"`
	GapMs  *float64 `json:"gap_ms,omitempty"`
}

// WarnRow is a verdict with its age.
type WarnRow struct {
	Kind  string  `json:"kind"`
	What  string  `json:"what"` // the verdict's fields, as its ALERT line says them
	AgeS  float64 `json:"age_s"`
	Topic string  `json:"topic,omitempty"`
	Node  string  `json:"node,omitempty"`
}

// ProcRow is a process's state, CPU and memory.
type ProcRow struct {
	Pid    int      `json:"pid"`
	Alive  bool     `json:"alive"`
	Nodes  []string `json:"nodes"`
	CPUPct *float64 `json:"cpu_pct,omitempty"`
	RSSMiB *float64 `json:"rss_mib,omitempty"`
}

// Builder turns windows into frames, keeping the layout across them.
type Builder struct {
	layout *layout
}

// NewBuilder returns a builder with an empty layout.
func NewBuilder() *Builder { return &Builder{layout: newLayout()} }

// Build makes the frame of w with its verdicts and its processes' CPU samples (nil: none).
func (b *Builder) Build(w *window.Window, warns []health.Warning, samples map[int]cpu.Sample) Frame {
	g := graph.FromWindow(w)
	f := Frame{TsNs: w.TsNs, Seconds: w.Seconds, Graph: g, Topics: []TopicRow{}, Warnings: []WarnRow{}, Procs: []ProcRow{}}
	for i := range g.Edges {
		f.Labels = append(f.Labels, g.Edges[i].Label())
	}
	if pos, changed := b.layout.place(g); changed {
		f.Pos, f.Relayout = pos, true
	}
	warned := map[string]bool{}
	for _, x := range warns {
		if x.Topic != "" && x.Kind != health.CannotJudge {
			warned[x.Topic] = true
		}
	}
	for i := range w.Topics {
		t := &w.Topics[i]
		r := TopicRow{Name: t.Name, RecvHz: t.RecvInter + t.RecvIntra, State: t.State(warned[t.Name])}
		if t.PubMeasured("any") && t.PubCount > 0 {
			v := t.PubAny
			r.PubHz = &v
		}
		if t.PubGap.HasData || t.RecvGap.HasData {
			v := max(t.PubGap.MaxDtMs(), t.RecvGap.MaxDtMs())
			r.GapMs = &v
		}
		f.Topics = append(f.Topics, r)
	}
	sorted := append([]health.Warning(nil), warns...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Age > sorted[j].Age })
	for _, x := range sorted {
		lines := logfmt.WarnLines([]health.Warning{x}) // upstream's WARN line, if any, then the verdict's ALERT line
		what := strings.TrimPrefix(lines[len(lines)-1], "ALERT ")
		f.Warnings = append(f.Warnings, WarnRow{Kind: string(x.Kind), What: what, AgeS: x.Age.Seconds(), Topic: x.Topic, Node: x.Node})
	}
	for _, p := range w.Procs {
		r := ProcRow{Pid: p.Pid, Alive: p.Alive, Nodes: append([]string{}, p.Nodes...)}
		if s, ok := samples[p.Pid]; ok && p.Alive {
			c, m := s.CPUPct, float64(s.RSSBytes)/(1<<20)
			r.CPUPct, r.RSSMiB = &c, &m
		}
		f.Procs = append(f.Procs, r)
	}
	return f
}

// Server serves the page, its assets and the frames: live ones pushed over
// /events, or a recording's frames by index.
type Server struct {
	mu      sync.Mutex
	latest  []byte
	layout  []byte // the latest positions, as a frame with Pos only, for pages that open later
	subs    map[chan []byte]bool
	replay  [][]byte // a recording's frames, encoded; nil live
	version string
}

// NewServer returns a live server (replay nil) or one over a recording's frames.
func NewServer(version string, replay []Frame) (*Server, error) {
	s := &Server{subs: map[chan []byte]bool{}, version: version}
	for i := range replay {
		replay[i].Index, replay[i].Count = i, len(replay)
		b, err := json.Marshal(&replay[i])
		if err != nil {
			return nil, err
		}
		s.replay = append(s.replay, b)
	}
	return s, nil
}

// Publish sends a frame to every open page and keeps it for pages that open later.
func (s *Server) Publish(f Frame) error {
	b, err := json.Marshal(&f)
	if err != nil {
		return err
	}
	var layout []byte
	if f.Relayout {
		if layout, err = json.Marshal(map[string]any{"pos": f.Pos}); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latest = b
	if layout != nil {
		s.layout = layout
	}
	for ch := range s.subs {
		select {
		case ch <- b:
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

// events streams frames as server-sent events: the latest at once, then each new one.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	ch := make(chan []byte, 1)
	s.mu.Lock()
	latest, layout := s.latest, s.layout
	s.subs[ch] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, ch)
		s.mu.Unlock()
	}()
	send := func(b []byte) bool {
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	if layout != nil { // the positions first: the latest frame may not carry them
		if _, err := fmt.Fprintf(w, "event: layout\ndata: %s\n\n", layout); err != nil {
			return
		}
	}
	if latest != nil && !send(latest) {
		return
	}
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case b := <-ch:
			if !send(b) {
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
