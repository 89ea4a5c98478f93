// Package top is the live dashboard: a bubbletea model that draws frames
// (windows, verdicts, CPU) built elsewhere. It holds no measuring logic:
// what it shows comes from the packages record, check and export use.
package top

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/textinput"
)

// FrameMsg delivers a new frame to the model.
type FrameMsg Frame

// EndMsg says the source has no more frames (a replayed log ended, or the
// reader failed); Err is shown in the footer.
type EndMsg struct{ Err error }

const (
	paneTopics = iota
	paneNodes
	paneServices
	panePaths
	panes
)

const historyLen = 30

var (
	sortTopicNames = []string{"name", "rate", "status"}
	sortNodeNames  = []string{"name", "cpu", "rss", "busy"}
	// saturatedPct: a node that spends this much of a window in its
	// callbacks is shown in the warning colour.
	saturatedPct = 90.0
)

// Model is the dashboard's state.
type Model struct {
	Title  string // "live 1s" or the replayed log's name
	Replay bool   // frames come from a log: ←/→ step through them while paused
	Empty  string // shown instead of "no topics" when no probed process is found (which directory, and why)

	frames      []Frame // kept for replay stepping; live keeps the one on screen only
	latest      Frame   // live: the newest frame, shown again when a pause ends
	shown       int     // index in frames of the frame on screen
	history     map[string][]float64
	silentSince map[string]time.Time
	topics      []topicRow
	nodes       []nodeRow
	services    []serviceRow
	paths       []pathRow

	width, height int
	pane          int
	cursor        [panes]int
	sortBy        [panes]int
	filter        textinput.Model
	filtering     bool
	focus         string // "topic:/name", "node:/name@pid" or "service:/name"; "" for the tables
	// The namespace tree (tree.go): on by itself above treeAbove topics
	// until t says otherwise; opened holds the namespaces shown open.
	tree, treeChosen bool
	opened           map[string]bool
	nTopics, nNodes  int // rows before the fold: what the title counts
	paused           bool
	showHelp         bool
	help             help.Model
	ended            string
}

// New returns a model with no frame yet.
func New(title string, replay bool) Model {
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "filter topics, nodes and services"
	return Model{Title: title, Replay: replay, history: map[string][]float64{}, silentSince: map[string]time.Time{},
		width: 80, height: 24, filter: ti, help: help.New(), opened: map[string]bool{}}
}

// frame is the frame on screen, nil before the first.
func (m *Model) frame() *Frame {
	if m.shown < 0 || m.shown >= len(m.frames) {
		return nil
	}
	return &m.frames[m.shown]
}

// addFrame records a frame's rates into the histories; when not paused it
// becomes the frame on screen.
func (m *Model) addFrame(f Frame) {
	for i := range f.W.Topics {
		t := &f.W.Topics[i]
		h := append(m.history[t.Name], topicRate(t))
		if len(h) > historyLen {
			h = h[len(h)-historyLen:]
		}
		m.history[t.Name] = h
		if topicStatus(t, false) == Stalled {
			if m.silentSince[t.Name].IsZero() {
				m.silentSince[t.Name] = f.At.Add(-time.Duration(f.W.Seconds * float64(time.Second)))
			}
		} else {
			delete(m.silentSince, t.Name)
		}
	}
	if m.Replay {
		m.frames = append(m.frames, f)
	} else {
		m.latest = f
		if !m.paused {
			m.frames, m.shown = []Frame{f}, 0
		}
	}
	if !m.paused {
		m.shown = len(m.frames) - 1
		m.rebuild()
	}
}

// rebuild recomputes the rows of the frame on screen.
func (m *Model) rebuild() {
	f := m.frame()
	if f == nil {
		return
	}
	// The cursor follows the row it is on, not its position: rows re-sort
	// under it (by rate or CPU) between two key presses.
	var sel [panes]string
	for p := range sel {
		sel[p] = m.selected(p)
	}
	defer func() {
		for p := range sel {
			m.cursor[p] = m.find(p, sel[p])
		}
	}()
	m.topics = topicRows(f, m.history, m.silentSince)
	m.nodes = nodeRows(f)
	allNodes := m.nodes // before the filter: the tree's namespaces are every node's
	m.services = serviceRows(f)
	m.paths = pathRows(f)
	sortPaths(m.paths, m.sortBy[panePaths])
	sortTopics(m.topics, m.sortBy[paneTopics])
	sortNodes(m.nodes, m.sortBy[paneNodes])
	sortServices(m.services, m.sortBy[paneServices])
	if q := strings.ToLower(m.filter.Value()); q != "" {
		var ts []topicRow
		for _, r := range m.topics {
			if strings.Contains(strings.ToLower(r.name), q) {
				ts = append(ts, r)
			}
		}
		var ns []nodeRow
		for _, r := range m.nodes {
			if strings.Contains(strings.ToLower(r.name), q) {
				ns = append(ns, r)
			}
		}
		var ss []serviceRow
		for _, r := range m.services {
			if strings.Contains(strings.ToLower(r.name), q) {
				ss = append(ss, r)
			}
		}
		m.topics, m.nodes, m.services = ts, ns, ss
	}
	m.nTopics, m.nNodes = len(m.topics), len(m.nodes)
	if !m.treeChosen {
		m.tree = len(f.W.Topics) > treeAbove
	}
	if m.tree {
		sp := spaces(allNodes)
		filtered := m.filter.Value() != "" // every namespace with a match is shown open
		open := func(ns string) bool { return filtered || m.opened[ns] }
		m.topics, m.nodes = foldTopics(m.topics, sp, open), foldNodes(m.nodes, sp, open)
	}
}

// selected is the identity of the row under a pane's cursor ("" for none).
func (m *Model) selected(pane int) string { return m.idAt(pane, m.cursor[pane]) }

// idAt is the identity of a pane's row i: a topic's name, a node's name@pid.
func (m *Model) idAt(pane, i int) string {
	switch {
	case pane == paneTopics && i < len(m.topics):
		return m.topics[i].name
	case pane == paneNodes && i < len(m.nodes):
		return fmt.Sprintf("%s@%d", m.nodes[i].name, m.nodes[i].pid)
	case pane == paneServices && i < len(m.services):
		return m.services[i].name
	case pane == panePaths && i < len(m.paths):
		return m.paths[i].name
	}
	return ""
}

// find is the row index of an identity in a pane, or the cursor clamped
// when that row is gone.
func (m *Model) find(pane int, id string) int {
	for i := 0; id != "" && i < m.rowsIn(pane); i++ {
		if m.idAt(pane, i) == id {
			return i
		}
	}
	return clamp(m.cursor[pane], 0, m.rowsIn(pane)-1)
}

func (m *Model) rows() int { return m.rowsIn(m.pane) }

// groupAt is the namespace of a pane's row i when it is a namespace row, else "".
func (m *Model) groupAt(pane, i int) string {
	switch {
	case pane == paneTopics && i < len(m.topics):
		return m.topics[i].group
	case pane == paneNodes && i < len(m.nodes):
		return m.nodes[i].group
	}
	return ""
}

func (m *Model) rowsIn(pane int) int {
	switch pane {
	case paneTopics:
		return len(m.topics)
	case paneServices:
		return len(m.services)
	case panePaths:
		return len(m.paths)
	}
	return len(m.nodes)
}
