package top

import (
	"fmt"
	"math"
	"sort"

	"ros2_pulse/internal/health"
)

// pathRow is an end-to-end path as the paths pane shows it (issue 47): its
// hops, the messages its last hop linked in the window, its latency at p50,
// p99 and its bound, the spec's bound and its status.
type pathRow struct {
	name         string
	hops         int
	n            uint64
	p50, p99, mx float64 // ms; NaN: not measured
	bound        float64 // the spec's max_ms; 0: none
	missing      string  // the first hop that linked nothing
	status       Status
}

// pathRows builds the paths pane from a frame's paths (named ones first).
func pathRows(f *Frame) []pathRow {
	slow := map[string]bool{}
	for _, w := range f.Warns {
		if w.Kind == health.PathSlow {
			slow[w.Topic] = true
		}
	}
	out := make([]pathRow, 0, len(f.W.Paths))
	for _, p := range f.W.Paths {
		r := pathRow{name: p.Name, hops: len(p.Hops), n: p.N, p50: math.NaN(), p99: math.NaN(), mx: math.NaN(), bound: p.MaxMs, missing: p.Missing}
		switch {
		case !p.Measured:
			r.status = NoData
		case slow[p.Name] || p.Slow():
			r.status = Warn
		default:
			r.status = OK
		}
		if p.Measured {
			r.p50, r.p99, r.mx = p.Worst.P50Ms, p.Worst.P99Ms, p.Worst.MaxMs
		}
		out = append(out, r)
	}
	return out
}

var sortPathNames = []string{"name", "p99", "status"}

// sortPaths orders rows by the chosen key; names break ties.
func sortPaths(rows []pathRow, by int) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		switch by {
		case 1:
			if pa, pb := unmeasuredLast(a.p99), unmeasuredLast(b.p99); pa != pb {
				return pa > pb
			}
		case 2:
			if a.status != b.status {
				return a.status < b.status
			}
		}
		return a.name < b.name
	})
}

// pathTable draws the paths pane: at most n rows from the cursor's page.
func (m Model) pathTable(w, n int) []string {
	nameW := max(12, w-(5+9+10+10+10+10+8)-1)
	out := []string{styleTitle.Render(fmt.Sprintf("Paths (sort: %s)", sortPathNames[m.sortBy[panePaths]])) + m.paneMark(panePaths),
		styleHeader.Render(cell(" PATH", nameW, false) + cell("HOPS", 5, true) + cell("MSGS", 9, true) + cell("p50", 10, true) +
			cell("p99", 10, true) + cell("MAX", 10, true) + cell("BOUND", 10, true) + cell("STATUS", 8, true))}
	cur := m.cursor[panePaths]
	start := scroll(cur, n, len(m.paths))
	for i := start; i < len(m.paths) && i < start+n; i++ {
		r := m.paths[i]
		mark := " "
		if m.pane == panePaths && i == cur {
			mark = "›"
		}
		bound := "-"
		if r.bound > 0 {
			bound = msText(r.bound)
		}
		status := r.status.String()
		if r.status == NoData {
			status = "no link"
		}
		line := cell(mark+r.name, nameW, false) + cell(fmt.Sprint(r.hops), 5, true) + cell(fmt.Sprint(r.n), 9, true) +
			cell(msText(r.p50), 10, true) + cell(msText(r.p99), 10, true) + cell(msText(r.mx), 10, true) + cell(bound, 10, true)
		if m.pane == panePaths && i == cur {
			line = styleSelected.Render(line)
		}
		out = append(out, line+styleStatus[r.status].Render(cell(status, 8, true)))
	}
	return out
}

// pathFocus lists a path's hops: each node that links them, its messages,
// the input's age at the publish and the node's own share.
func pathFocus(f *Frame, name string, w int) []string {
	out := []string{styleTitle.Render("Path " + name + " — hops (esc: back)"),
		styleHeader.Render(cell(" FROM -> TO", max(24, w-62), false) + cell("NODE", 22, false) + cell("MSGS", 8, true) +
			cell("AGE p50", 10, true) + cell("AGE p99", 10, true) + cell("OWN mean", 10, true))}
	for _, p := range f.W.Paths {
		if p.Name != name {
			continue
		}
		for _, h := range p.Hops {
			p50, p99, own := math.NaN(), math.NaN(), math.NaN()
			if h.Measured {
				p50, p99, own = h.Age.P50Ms, h.Age.P99Ms, h.Own.MeanMs
			}
			node := h.Node
			if node == "" {
				node = "(no link)"
			} else if h.Sampled { // a timer's publish from the latest input: its worst case is the path's worst
				node += " (sampled)"
			}
			out = append(out, cell(" "+h.From+" -> "+h.To, max(24, w-62), false)+cell(node, 22, false)+cell(fmt.Sprint(h.N), 8, true)+
				cell(msText(p50), 10, true)+cell(msText(p99), 10, true)+cell(msText(own), 10, true))
		}
		if !p.Measured {
			out = append(out, styleWarn.Render(cell(" not measured: hop "+p.Missing+" linked no message (a loaned input, Humble's intra-process, an rclpy timer, or no traffic)", w, false)))
		}
		for _, wn := range f.Warns {
			if wn.Topic == name && (wn.Kind == health.PathSlow || wn.Kind == health.CannotJudge && wn.Metric == "path") {
				out = append(out, styleWarn.Render(cell(" "+describe(&wn), w, false)))
			}
		}
	}
	return out
}

// pathWords describes a path_slow verdict.
func pathWords(w *health.Warning) string {
	return fmt.Sprintf("path %s: p99 %.1f ms > %g ms", w.Topic, w.Value, w.Bound)
}
