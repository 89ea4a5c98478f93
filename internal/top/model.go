// Package top is the live dashboard: a bubbletea model that draws frames
// (windows, verdicts, CPU) built elsewhere. It holds no measuring logic:
// what it shows comes from the packages record, check and export use.
package top

import (
	"fmt"
	"math"
	"ros2_pulse/internal/compat"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/window"
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

type keyMap struct {
	Up, Down, Tab, Enter, Back, Sort, Filter, Pause, Help, Quit, Prev, Next, Tree key.Binding
}

func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Tab, k.Enter, k.Sort, k.Filter, k.Pause, k.Help, k.Quit}
}

func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Tab, k.Enter, k.Back}, {k.Sort, k.Filter, k.Tree, k.Pause, k.Prev, k.Next}, {k.Help, k.Quit}}
}

var keys = keyMap{
	Up:     key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
	Down:   key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
	Tab:    key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "topics/nodes/services/paths")),
	Enter:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "focus")),
	Tree:   key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "namespace tree (enter opens one)")),
	Back:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	Sort:   key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
	Filter: key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
	Pause:  key.NewBinding(key.WithKeys("p", " "), key.WithHelp("p", "pause")),
	Help:   key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
	Quit:   key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	Prev:   key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←", "older (log, paused)")),
	Next:   key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→", "newer (log, paused)")),
}

var (
	sortTopicNames = []string{"name", "rate", "status"}
	sortNodeNames  = []string{"name", "cpu", "rss", "busy"}
	// saturatedPct: a node that spends this much of a window in its
	// callbacks is shown in the warning colour.
	saturatedPct = 90.0
)

// Styles; lipgloss drops colours by itself without a colour terminal or
// with NO_COLOR, and every state is also spelled out in text.
var (
	styleTitle    = lipgloss.NewStyle().Bold(true)
	styleHeader   = lipgloss.NewStyle().Bold(true).Underline(true)
	styleSelected = lipgloss.NewStyle().Reverse(true)
	styleDim      = lipgloss.NewStyle().Faint(true)
	styleStatus   = map[Status]lipgloss.Style{
		Stalled: lipgloss.NewStyle().Foreground(lipgloss.Color("9")).Bold(true),
		Warn:    lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
		Exited:  lipgloss.NewStyle().Foreground(lipgloss.Color("9")),
		OK:      lipgloss.NewStyle().Foreground(lipgloss.Color("10")),
		NoData:  lipgloss.NewStyle().Faint(true),
	}
	styleNodeState = map[string]lipgloss.Style{
		"alive":        lipgloss.NewStyle().Foreground(lipgloss.Color("10")),
		"quiet":        lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
		"not measured": lipgloss.NewStyle().Faint(true),
		"exited":       lipgloss.NewStyle().Foreground(lipgloss.Color("9")).Bold(true),
	}
	styleWarn = lipgloss.NewStyle().Foreground(lipgloss.Color("11"))
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

// Init starts nothing: frames arrive from the source.
func (m Model) Init() tea.Cmd { return nil }

// frame is the frame on screen, nil before the first.
func (m *Model) frame() *Frame {
	if m.shown < 0 || m.shown >= len(m.frames) {
		return nil
	}
	return &m.frames[m.shown]
}

// Update handles frames, keys and resizes.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
	case FrameMsg:
		m.addFrame(Frame(msg))
	case EndMsg:
		m.ended = "source ended"
		if msg.Err != nil {
			m.ended = msg.Err.Error()
		}
	case tea.KeyMsg:
		return m.key(msg)
	}
	return m, nil
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

func clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return max(lo, min(v, hi))
}

func (m Model) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
		// Keys typed faster than the terminal is read arrive as one message:
		// take them one at a time, so "/imu" is the filter key and a query.
		var cmds []tea.Cmd
		var next tea.Model = m
		for _, r := range msg.Runes {
			var cmd tea.Cmd
			next, cmd = next.(Model).key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
			cmds = append(cmds, cmd)
		}
		return next, tea.Batch(cmds...)
	}
	if m.filtering {
		switch msg.String() {
		case "enter":
			m.filtering = false
			m.filter.Blur()
		case "esc":
			m.filtering = false
			m.filter.Blur()
			m.filter.SetValue("")
		default:
			var cmd tea.Cmd
			m.filter, cmd = m.filter.Update(msg)
			m.rebuild()
			return m, cmd
		}
		m.rebuild()
		return m, nil
	}
	switch {
	case key.Matches(msg, keys.Quit):
		return m, tea.Quit
	case key.Matches(msg, keys.Help):
		m.showHelp = !m.showHelp
	case key.Matches(msg, keys.Back):
		switch {
		case m.showHelp:
			m.showHelp = false
		case m.focus != "":
			m.focus = ""
		case m.filter.Value() != "":
			m.filter.SetValue("")
			m.rebuild()
		}
	case key.Matches(msg, keys.Filter):
		m.filtering = true
		return m, m.filter.Focus()
	case key.Matches(msg, keys.Tab): // the services and paths panes only when they have rows
		m.pane = (m.pane + 1) % panes
		if m.pane == paneServices && len(m.services) == 0 {
			m.pane = panePaths
		}
		if m.pane == panePaths && len(m.paths) == 0 {
			m.pane = paneTopics
		}
	case key.Matches(msg, keys.Up):
		m.cursor[m.pane] = max(0, m.cursor[m.pane]-1)
	case key.Matches(msg, keys.Down):
		m.cursor[m.pane] = clamp(m.cursor[m.pane]+1, 0, m.rows()-1)
	case key.Matches(msg, keys.Sort):
		names := [panes][]string{sortTopicNames, sortNodeNames, sortServiceNames, sortPathNames}[m.pane]
		m.sortBy[m.pane] = (m.sortBy[m.pane] + 1) % len(names)
		m.rebuild()
	case key.Matches(msg, keys.Pause):
		m.paused = !m.paused
		if !m.paused {
			if !m.Replay && m.latest.W != nil {
				m.frames = []Frame{m.latest}
			}
			m.shown = len(m.frames) - 1
			m.rebuild()
		}
	case key.Matches(msg, keys.Tree):
		m.tree, m.treeChosen = !m.tree, true
		m.rebuild()
	case key.Matches(msg, keys.Enter):
		if ns := m.groupAt(m.pane, m.cursor[m.pane]); ns != "" {
			m.opened[ns] = !m.opened[ns]
			m.rebuild()
		} else if m.pane == paneTopics && m.cursor[0] < len(m.topics) {
			m.focus = "topic:" + m.topics[m.cursor[0]].name
		} else if m.pane == paneNodes && m.cursor[1] < len(m.nodes) {
			n := m.nodes[m.cursor[1]]
			m.focus = fmt.Sprintf("node:%s@%d", n.name, n.pid)
		} else if m.pane == paneServices && m.cursor[paneServices] < len(m.services) {
			m.focus = "service:" + m.services[m.cursor[paneServices]].name
		} else if m.pane == panePaths && m.cursor[panePaths] < len(m.paths) {
			m.focus = "path:" + m.paths[m.cursor[panePaths]].name
		}
	case key.Matches(msg, keys.Prev), key.Matches(msg, keys.Next):
		if m.Replay && m.paused {
			step := 1
			if key.Matches(msg, keys.Prev) {
				step = -1
			}
			m.shown = clamp(m.shown+step, 0, len(m.frames)-1)
			m.rebuild()
		}
	}
	return m, nil
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

// shownName is a row's name column: indented and relative in the tree, a
// namespace with its arrow and what is under it.
func shownName(name string, t treeFields, what, extra string) string {
	if t.label == "" {
		return name
	}
	indent := strings.Repeat("  ", t.depth)
	if t.group == "" {
		return indent + t.label
	}
	arrow := "▸ "
	if t.open {
		arrow = "▾ "
	}
	return fmt.Sprintf("%s%s%s (%d %s%s)", indent, arrow, t.label, t.count, what, extra)
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

// View draws the screen.
func (m Model) View() string {
	w := max(m.width, 20)
	var lines []string
	lines = append(lines, m.titleLine(w))
	f := m.frame()
	switch {
	case m.showHelp:
		lines = append(lines, "", m.help.FullHelpView(keys.FullHelp()), "",
			"Topic status: ok, WARN (a spec verdict or a lagging subscriber), STALL (a side",
			"that counted before is silent now), exited (every endpoint's process exited),",
			"- (no traffic yet). SILENT is how long.",
			"Node state: alive, quiet (alive, nothing counted this window), not measured",
			"(nothing counted, and it has callbacks no tracepoint shows: rclpy services), exited.",
			"BUSY%: the node's callbacks' share of the window. EXEC%: its process's busiest",
			"executor thread (≥ 90: every node that thread serves is starved).",
			"Services (when any): servers and clients here, requests the servers took per",
			"second, handling (SRV) and round trip (RTT) at p99, calls open; no srv: a client",
			"calls it and nothing here serves it. An action is one row (its goals).",
			"Paths (when the probes link callbacks: ROS_PULSE_LINKS=1): end-to-end latency",
			"from a sensor topic's message to the last hop's publish, p50/p99/MAX a bound;",
			"no link: a hop linked no message (intra-process input, a timer, no traffic).")
	case f == nil:
		lines = append(lines, "", "waiting for the first window…")
	case m.focus != "":
		lines = append(lines, m.focusView(f, w)...)
	default:
		lines = append(lines, m.tables(f, w)...)
	}
	// Pad to the screen, keep the footer on the last line.
	body := strings.Split(strings.Join(lines, "\n"), "\n")
	footer := m.footer(w)
	for len(body) < m.height-1 {
		body = append(body, "")
	}
	if len(body) > m.height-1 && m.height > 1 {
		body = body[:m.height-1]
	}
	for i := range body { // a narrow terminal cuts columns on the right, never wraps
		body[i] = ansi.Truncate(body[i], w, "")
	}
	return strings.Join(append(body, footer), "\n")
}

func (m Model) titleLine(w int) string {
	f := m.frame()
	s := "pulse top — " + m.Title
	if m.paused {
		s = "[PAUSED] " + s
	}
	if f != nil {
		alive := 0
		for _, p := range f.W.Procs {
			if p.Alive {
				alive++
			}
		}
		s += fmt.Sprintf(" — %d topics, %d nodes, %d/%d procs alive — %s (%.2f s)", m.nTopics, m.nNodes, alive, len(f.W.Procs),
			f.At.Format("15:04:05"), f.W.Seconds)
	}
	return styleTitle.Render(ansi.Truncate(s, w, "…"))
}

func (m Model) footer(w int) string {
	var s string
	switch {
	case m.filtering:
		s = m.filter.View()
	case m.ended != "":
		s = "[" + m.ended + "] " + m.help.ShortHelpView(keys.ShortHelp())
	default:
		s = m.help.ShortHelpView(keys.ShortHelp())
		if q := m.filter.Value(); q != "" {
			s = "filter: " + q + " (esc clears)  " + s
		}
	}
	return ansi.Truncate(s, w, "…")
}

// cell pads or truncates plain text to exactly n columns.
func cell(s string, n int, right bool) string {
	s = ansi.Truncate(s, n, "…")
	pad := n - lipgloss.Width(s)
	if pad <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", pad) + s
	}
	return s + strings.Repeat(" ", pad)
}

// lossText shows a loss share: whole percent, a decimal under 10 %.
func lossText(pct float64) string {
	switch {
	case math.IsNaN(pct):
		return "-"
	case pct < 10:
		return fmt.Sprintf("%.1f%%", pct)
	}
	return fmt.Sprintf("%.0f%%", pct)
}

func num(v float64, prec int) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// tables draws the topic table, the node table and the warnings pane into
// the screen's height: warnings get up to a quarter, the tables share the rest.
func (m Model) tables(f *Frame, w int) []string {
	avail := m.height - 2 // title and footer
	warns := append([]health.Warning(nil), f.Warns...)
	nWarn := min(len(warns), max(1, avail/4))
	warnLines := 1 + max(nWarn, 1)
	tableRows := max(avail-warnLines-4, 2) // two headers and two titles
	serviceRowsN := 0
	if len(m.services) > 0 { // the services pane takes a fifth, when there are services
		serviceRowsN = max(1, min(len(m.services), tableRows/5))
		tableRows = max(tableRows-serviceRowsN-2, 2)
	}
	pathRowsN := 0
	if len(m.paths) > 0 { // and so does the paths pane, when there are paths
		pathRowsN = max(1, min(len(m.paths), tableRows/5))
		tableRows = max(tableRows-pathRowsN-2, 2)
	}
	topicRowsN := max(1, min(len(m.topics), (tableRows*3+4)/5))
	nodeRowsN := max(1, tableRows-topicRowsN)
	if len(m.nodes) < nodeRowsN {
		topicRowsN += nodeRowsN - max(len(m.nodes), 1)
		nodeRowsN = max(len(m.nodes), 1)
	}

	var out []string
	// Topic table.
	// A BYTES/s column only where some process measures bytes (ROS_PULSE_BYTES=1).
	bytesW := 0
	for i := range m.topics {
		if !math.IsNaN(m.topics[i].bytesPerS) {
			bytesW = 8
			break
		}
	}
	nameW := max(12, w-(9+9+6+6+8+8+11+6+bytesW)-1)
	sparkW := 10
	out = append(out, styleTitle.Render(fmt.Sprintf("Topics (sort: %s)", sortTopicNames[m.sortBy[0]]))+m.paneMark(paneTopics))
	bytesHead := ""
	if bytesW > 0 {
		bytesHead = cell("BYTES/s", bytesW, true)
	}
	out = append(out, styleHeader.Render(cell(" TOPIC", nameW, false)+cell("PUB Hz", 9, true)+cell("RECV Hz", 9, true)+bytesHead+
		cell("INTRA", 6, true)+cell("LOSS", 6, true)+cell("GAP ms", 8, true)+cell("SILENT", 8, true)+" "+cell("RATE", sparkW, false)+cell("STATUS", 6, true)))
	start := scroll(m.cursor[0], topicRowsN, len(m.topics))
	for i := start; i < len(m.topics) && i < start+topicRowsN; i++ {
		r := m.topics[i]
		intra := "-"
		if !math.IsNaN(r.intra) {
			intra = fmt.Sprintf("%.0f%%", 100*r.intra)
		}
		silent := "-"
		if !math.IsNaN(r.silentMs) {
			silent = fmtAge(time.Duration(r.silentMs * float64(time.Millisecond)))
		}
		mark := " "
		if m.pane == paneTopics && i == m.cursor[0] {
			mark = "›"
		}
		pub, recv := num(r.pubHz, 1), num(r.recvHz, 1)
		if r.pubs == 0 {
			pub = "-"
		}
		if r.subs == 0 {
			recv = "-"
		}
		extra := ""
		if r.stalled > 0 {
			extra = fmt.Sprintf(", %d stalled", r.stalled)
		}
		bytesText := ""
		if bytesW > 0 {
			bytesText = cell(bytesCell(r.bytesPerS, r.bytesSampled), bytesW, true)
		}
		line := cell(mark+shownName(r.name, r.treeFields, "topics", extra), nameW, false) + cell(pub, 9, true) + cell(recv, 9, true) + bytesText + cell(intra, 6, true) +
			cell(lossText(r.lossPct), 6, true) + cell(num(r.gapMs, 0), 8, true) + cell(silent, 8, true) + " " + spark(r.spark, sparkW)
		status := styleStatus[r.status].Render(cell(r.status.String(), 6, true))
		if m.pane == paneTopics && i == m.cursor[0] {
			line = styleSelected.Render(line)
		}
		out = append(out, line+status)
	}
	if len(m.topics) == 0 {
		none := " (no topics)"
		if f := m.frame(); m.Empty != "" && f != nil && f.W != nil && len(f.W.Procs) == 0 {
			none = " (" + m.Empty + ")"
		}
		out = append(out, styleDim.Render(cell(none, w, false)))
	}

	// Node table.
	nodeW := max(12, min(28, w/4)) // narrow terminals keep every number column
	out = append(out, styleTitle.Render(fmt.Sprintf("Nodes (sort: %s)", sortNodeNames[m.sortBy[1]]))+m.paneMark(paneNodes))
	out = append(out, styleHeader.Render(cell(" NODE", nodeW, false)+cell("PID", 8, true)+cell("STATE", 13, true)+
		cell("CPU%", 7, true)+cell("BUSY%", 7, true)+cell("EXEC%", 7, true)+cell("ms/CB", 7, true)+cell("RSS MiB", 9, true)+"  "+cell("TOPICS (out → in)", max(4, w-nodeW-60), false)))
	start = scroll(m.cursor[1], nodeRowsN, len(m.nodes))
	for i := start; i < len(m.nodes) && i < start+nodeRowsN; i++ {
		r := m.nodes[i]
		mark := " "
		if m.pane == paneNodes && i == m.cursor[1] {
			mark = "›"
		}
		rss := "-"
		if r.rssBytes > 0 {
			rss = fmt.Sprintf("%.1f", float64(r.rssBytes)/(1<<20))
		}
		topics := strings.Join(r.out, " ")
		if len(r.in) > 0 {
			topics += " → " + strings.Join(r.in, " ")
		}
		extra, pid := "", fmt.Sprint(r.pid)
		if r.group != "" {
			pid = "-"
			if r.exited > 0 {
				extra = fmt.Sprintf(", %d exited", r.exited)
			} else if r.quiet > 0 {
				extra = fmt.Sprintf(", %d quiet", r.quiet)
			}
		}
		left := cell(mark+shownName(r.name, r.treeFields, "nodes", extra), nodeW, false) + cell(pid, 8, true)
		state := styleNodeState[r.state].Render(cell(r.state, 13, true))
		busy, exec := cell(num(r.busyPct, 1), 7, true), cell(num(r.execPct, 1), 7, true)
		right := cell(num(r.costMs, 3), 7, true) + cell(rss, 9, true) + "  " + cell(strings.TrimSpace(topics), max(4, w-nodeW-60), false)
		cpu := cell(num(r.cpuPct, 1), 7, true)
		if m.pane == paneNodes && i == m.cursor[1] {
			left, cpu, busy, exec, right = styleSelected.Render(left), styleSelected.Render(cpu), styleSelected.Render(busy), styleSelected.Render(exec), styleSelected.Render(right)
		} else {
			if r.busyPct >= saturatedPct { // its callbacks leave its executor no time: what it serves sags
				busy = styleWarn.Render(busy)
			}
			if r.execPct >= saturatedPct { // a thread of its process has no time left: maybe another node's callbacks starve this one
				exec = styleWarn.Render(exec)
			}
		}
		out = append(out, left+state+cpu+busy+exec+right)
	}
	if len(m.nodes) == 0 {
		out = append(out, styleDim.Render(" (no nodes)"))
	}
	if serviceRowsN > 0 {
		out = append(out, m.serviceTable(w, serviceRowsN)...)
	}
	if pathRowsN > 0 {
		out = append(out, m.pathTable(w, pathRowsN)...)
	}

	// Warnings pane: the longest-standing first.
	out = append(out, styleTitle.Render(fmt.Sprintf("Warnings (%d)", len(warns))))
	sortWarnings(warns)
	for i := 0; i < nWarn; i++ {
		out = append(out, styleWarn.Render(ansi.Truncate(fmt.Sprintf(" %7s  %-13s %s", fmtAge(warns[i].Age), warns[i].Kind, describe(&warns[i])), w, "…")))
	}
	if len(warns) > nWarn {
		out[len(out)-1] = ansi.Truncate(fmt.Sprintf(" … and %d more", len(warns)-nWarn+1), w, "…")
	} else if len(warns) == 0 {
		out = append(out, styleDim.Render(" none"))
	}
	return out
}

func (m Model) paneMark(p int) string {
	if m.pane == p {
		return " ◆"
	}
	return ""
}

// scroll returns the first visible row so that cursor stays in view.
func scroll(cursor, visible, total int) int {
	if cursor < visible {
		return 0
	}
	return min(cursor-visible+1, max(0, total-visible))
}

func sortWarnings(ws []health.Warning) {
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Age > ws[j].Age })
}

// fmtAge prints a duration the way a person reads an age: 840ms, 12.3s, 4m05s.
func fmtAge(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// focusView lists a topic's endpoints per process, or a node's endpoints.
func (m Model) focusView(f *Frame, w int) []string {
	kind, name, _ := strings.Cut(m.focus, ":")
	var out []string
	row := func(side, topic string, e window.EndpointRate) string {
		state := "alive"
		if !e.Alive {
			state = "exited"
		}
		loss := math.NaN()
		if e.LossJudged {
			loss = e.LossPct
		}
		return cell(fmt.Sprintf(" %-4s %s", side, topic), max(20, w-58), false) + cell(e.Node, 19, false) +
			cell(fmt.Sprint(e.Pid), 8, true) + cell(num(e.Inter, 1), 9, true) + cell(num(e.Intra, 1), 9, true) +
			cell(lossText(loss), 6, true) + cell(state, 7, true)
	}
	header := styleHeader.Render(cell(" SIDE TOPIC", max(20, w-58), false) + cell("NODE", 19, false) + cell("PID", 8, true) +
		cell("INTER Hz", 9, true) + cell("INTRA Hz", 9, true) + cell("LOSS", 6, true) + cell("STATE", 7, true))
	switch kind {
	case "topic":
		out = append(out, styleTitle.Render("Topic "+name+" — endpoints per process (esc: back)"))
		if window.IsServiceEvent(name) { // Iron+ service introspection: the calls of a service, published when it is on
			out = append(out, styleDim.Render(cell(" service events of "+strings.TrimSuffix(name, "/_service_event")+" (introspection: each call's request and response, published while it is on)", w, false)))
		} else if a, part, ok := window.ActionOf(name); ok {
			out = append(out, styleDim.Render(cell(" the "+part+" of action "+a+" (its calls are in the services pane)", w, false)))
		}
		out = append(out, header)
		if t := f.W.Topic(name); t != nil {
			for _, e := range t.Pubs {
				out = append(out, row("pub", name, e))
			}
			for _, e := range t.Subs {
				out = append(out, row("sub", name, e))
			}
			if len(t.Pubs)+len(t.Subs) == 0 {
				out = append(out, styleDim.Render(" (a log carries totals only, not endpoints)"))
			}
			out = append(out, qosLines(t, "", 0, w)...)
			out = append(out, whyLines(f.W, name, "", 0, w)...)
			if l := t.Latency; l.HasData && l.N > 0 {
				out = append(out, "", cell(fmt.Sprintf(" receive latency: n %d, mean %.2f ms, p50 %.2f, p99 %.2f, max %.2f ms",
					l.N, l.MeanMs, l.P50Ms, l.P99Ms, l.MaxMs), w, false))
			}
		}
	case "service":
		out = append(out, serviceFocus(f, name, w)...)
	case "path":
		out = append(out, pathFocus(f, name, w)...)
	case "node":
		node, pidText, _ := strings.Cut(name, "@")
		var pid int
		fmt.Sscan(pidText, &pid)
		out = append(out, styleTitle.Render(fmt.Sprintf("Node %s, process %d — its endpoints (esc: back)", node, pid)), header)
		for i := range f.W.Topics {
			t := &f.W.Topics[i]
			for _, e := range t.Pubs {
				if e.Node == node && e.Pid == pid {
					out = append(out, row("pub", t.Name, e))
				}
			}
			for _, e := range t.Subs {
				if e.Node == node && e.Pid == pid {
					out = append(out, row("sub", t.Name, e))
				}
			}
		}
		for i := range f.W.Topics {
			out = append(out, qosLines(&f.W.Topics[i], node, pid, w)...)
			out = append(out, whyLines(f.W, f.W.Topics[i].Name, node, pid, w)...)
		}
		for _, tm := range f.W.Timers {
			if tm.Node == node && (tm.Pid == pid || tm.Pid == 0) {
				out = append(out, cell(fmt.Sprintf(" timer %d: period %.1f ms, %.1f Hz", tm.Ordinal, tm.PeriodMs, tm.Hz), w, false))
			}
		}
		for _, p := range f.W.Procs {
			if p.Pid == pid {
				out = append(out, "", cell(" exe: "+p.Exe, w, false))
				if s, ok := f.CPU[pid]; ok {
					out = append(out, fmt.Sprintf(" CPU %.1f %% of a core, RSS %.1f MiB, load %.2f", s.CPUPct, float64(s.RSSBytes)/(1<<20), s.Load1))
				}
			}
		}
		for _, th := range f.W.Threads { // the threads that serve its process's nodes: which one has no time left
			if th.Pid == pid {
				out = append(out, cell(fmt.Sprintf(" thread %d (%s): %.1f %% busy, %d callbacks, last for %s", th.Tid, orDash(th.Name), th.Load(), th.Callbacks, orDash(th.Node)), w, false))
			}
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// qosLines are what the probe learnt of each endpoint of t at its creation
// (of node's only, when node is given): QoS, type, rmw and domain.
func qosLines(t *window.Topic, node string, pid int, w int) []string {
	var out []string
	add := func(side string, e *window.EndpointRate) {
		if e.QoS == nil || (node != "" && (e.Node != node || e.Pid != pid)) {
			return
		}
		q := e.QoS
		s := fmt.Sprintf(" %s %s %s[%d]: %s", side, t.Name, orDash(e.Node), e.Pid, compat.Summary(q))
		if q.Type != "" {
			s += " · " + q.Type
		}
		if q.RMW != "" {
			s += " · " + q.RMW
		}
		if q.Domain >= 0 {
			s += fmt.Sprintf(" · domain %d", q.Domain)
		}
		switch b := e.Bytes; { // its bytes (ROS_PULSE_BYTES=1), "~" when sampled
		case b.Measured():
			approx := ""
			if b.How == window.BytesSampled {
				approx = "~"
			}
			s += fmt.Sprintf(" · %s%s/s, %s%s a message", approx, window.HumanBytes(b.PerS), approx, window.HumanBytes(b.MeanSize))
		case b.How == window.BytesNone:
			s += " · bytes not measured"
		}
		out = append(out, cell(s, w, false))
	}
	for i := range t.Pubs {
		add("pub", &t.Pubs[i])
	}
	for i := range t.Subs {
		add("sub", &t.Subs[i])
	}
	return out
}

// whyLines are the window's diagnoses for topic (of node's endpoints only, when node is given).
func whyLines(win *window.Window, topic, node string, pid int, w int) []string {
	var out []string
	for _, u := range win.Unmatched {
		if u.Topic != topic || (node != "" && (u.Node != node || u.Pid != pid)) {
			continue
		}
		level := "warning"
		if u.Error {
			level = "meets nobody"
		}
		out = append(out, styleWarn.Render(cell(fmt.Sprintf(" why: %s[%d] %s: %s", orDash(u.Node), u.Pid, level, u.Why()), w, false)))
		if u.Fix != "" {
			out = append(out, cell("      fix: "+u.Fix, w, false))
		}
	}
	return out
}
