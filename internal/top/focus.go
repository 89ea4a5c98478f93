package top

import (
	"fmt"
	"math"
	"strings"

	"ros2_pulse/internal/compat"
	"ros2_pulse/internal/window"
)

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
