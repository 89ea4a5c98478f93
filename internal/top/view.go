package top

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"ros2_pulse/internal/health"
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
