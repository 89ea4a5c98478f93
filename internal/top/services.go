package top

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/window"
)

// serviceRow is a service, or an action (its three services as one), as the
// services pane shows it: how many servers and clients it has here, the
// requests its servers took per second, their handling time and the
// clients' round trip at p99 (for an action: goals, time to accept), the
// calls open now, the responses its servers could not send in the window,
// and its status.
type serviceRow struct {
	name             string
	action           bool
	servers, clients int
	hz               float64 // requests the servers took per second (action: goals); NaN: no server measured
	handleMs, rttMs  float64 // p99 over the servers / the clients; NaN: nothing answered
	resultMs         float64 // an action: time to result at p99 (clients, else servers); NaN: none
	open             int
	failed           int  // responses its servers could not send in the window (ABI 1.8); -1: not measured
	noServer         bool // a client calls it and no server is here
	status           Status
}

// serviceRows builds the services pane from a frame's calls (any client
// library); a server whose calls are not timed shows its rclcpp callbacks'
// rate. A node's parameter services appear only while called.
func serviceRows(f *Frame) []serviceRow {
	rows := map[string]*serviceRow{}
	get := func(name string, action bool) *serviceRow {
		r := rows[name]
		if r == nil {
			r = &serviceRow{name: name, action: action, hz: math.NaN(), handleMs: math.NaN(), rttMs: math.NaN(), resultMs: math.NaN(), failed: -1}
			rows[name] = r
		}
		return r
	}
	worst := func(v *float64, x float64) {
		if math.IsNaN(*v) || x > *v {
			*v = x
		}
	}
	timed := map[string]bool{}
	for i := range f.W.Calls {
		c := &f.W.Calls[i]
		if !c.Alive || c.Idle() {
			continue
		}
		name, part, isAction := c.ShownAs()
		r := get(name, isAction)
		timed[fmt.Sprintf("%d %s %s", c.Pid, c.Node, c.Name)] = true
		if part == "" || part == "send_goal" {
			if c.Client {
				r.clients++
				r.noServer = r.noServer || !c.HasServer
				if c.Time.N > 0 {
					worst(&r.rttMs, c.Time.P99Ms)
				}
			} else {
				r.servers++
				r.hz = nanAdd(r.hz, c.Hz)
				if c.Time.N > 0 {
					worst(&r.handleMs, c.Time.P99Ms)
				}
			}
		}
		if part == "get_result" && c.Time.N > 0 && (c.Client || math.IsNaN(r.resultMs)) {
			worst(&r.resultMs, c.Time.P99Ms)
		}
		r.open += len(c.Open)
		if c.FailKnown {
			r.failed = max(r.failed, 0) + int(c.SendFailed)
		}
	}
	for _, sv := range f.W.Services { // servers whose calls are not timed: rclcpp's callbacks
		if timed[fmt.Sprintf("%d %s %s", sv.Pid, sv.Node, sv.Name)] || window.IsParameterService(sv.Name) && sv.Delta == 0 {
			continue
		}
		if _, _, isAction := window.ActionOf(sv.Name); isAction {
			continue
		}
		r := get(sv.Name, false)
		r.servers++
		if sv.Measured && f.W.Seconds > 0 {
			r.hz = nanAdd(r.hz, float64(sv.Delta)/f.W.Seconds)
		}
	}
	warned := map[string]bool{}
	for _, w := range f.Warns {
		switch w.Kind {
		case health.ServiceRate, health.ServiceSlow, health.ServiceTimeout, health.ServiceBacklog, health.ServiceMissing, health.ActionSlow:
			warned[w.Topic] = true
		case health.ServiceSendFailed: // named by its service: an action's part warns its action
			name, _, _ := (&window.Call{Name: w.Topic}).ShownAs()
			warned[name] = true
		}
	}
	out := make([]serviceRow, 0, len(rows))
	for _, r := range rows {
		switch {
		case warned[r.name] || r.noServer || r.failed > 0:
			r.status = Warn
		case r.hz > 0 || !math.IsNaN(r.rttMs) || r.open > 0:
			r.status = OK
		default:
			r.status = NoData
		}
		out = append(out, *r)
	}
	return out
}

func nanAdd(a, b float64) float64 {
	if math.IsNaN(a) {
		return b
	}
	return a + b
}

var sortServiceNames = []string{"name", "rate", "time", "status"}

// sortServices orders rows by the chosen key; names break ties.
func sortServices(rows []serviceRow, by int) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		switch by {
		case 1:
			if ra, rb := unmeasuredLast(a.hz), unmeasuredLast(b.hz); ra != rb {
				return ra > rb
			}
		case 2:
			ta, tb := math.Max(unmeasuredLast(a.handleMs), unmeasuredLast(a.rttMs)), math.Max(unmeasuredLast(b.handleMs), unmeasuredLast(b.rttMs))
			if ta != tb {
				return ta > tb
			}
		case 3:
			if a.status != b.status {
				return a.status < b.status
			}
		}
		return a.name < b.name
	})
}

// serviceTable draws the services pane: at most n rows from the cursor's page.
func (m Model) serviceTable(w, n int) []string {
	nameW := max(12, w-(4+4+9+10+10+6+6+8)-1)
	out := []string{styleTitle.Render(fmt.Sprintf("Services (sort: %s)", sortServiceNames[m.sortBy[paneServices]])) + m.paneMark(paneServices),
		styleHeader.Render(cell(" SERVICE", nameW, false) + cell("SRV", 4, true) + cell("CLI", 4, true) + cell("CALLS/s", 9, true) +
			cell("SRV p99", 10, true) + cell("RTT p99", 10, true) + cell("OPEN", 6, true) + cell("FAIL", 6, true) + cell("STATUS", 8, true))}
	cur := m.cursor[paneServices]
	start := scroll(cur, n, len(m.services))
	for i := start; i < len(m.services) && i < start+n; i++ {
		r := m.services[i]
		mark := " "
		if m.pane == paneServices && i == cur {
			mark = "›"
		}
		name := r.name
		if r.action {
			name = "action " + name
		}
		status := r.status.String()
		if r.noServer {
			status = "no srv"
		}
		failed := "-"
		if r.failed >= 0 {
			failed = fmt.Sprint(r.failed)
		}
		line := cell(mark+name, nameW, false) + cell(fmt.Sprint(r.servers), 4, true) + cell(fmt.Sprint(r.clients), 4, true) +
			cell(num(r.hz, 1), 9, true) + cell(msText(r.handleMs), 10, true) + cell(msText(r.rttMs), 10, true) + cell(fmt.Sprint(r.open), 6, true) +
			cell(failed, 6, true)
		if m.pane == paneServices && i == cur {
			line = styleSelected.Render(line)
		}
		out = append(out, line+styleStatus[r.status].Render(cell(status, 8, true)))
	}
	return out
}

// msText shows a time in ms, or in s from 10 s on; "-" when not measured.
func msText(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v >= 10000:
		return fmt.Sprintf("%.1fs", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0fms", v)
	}
	return fmt.Sprintf("%.1fms", v)
}

// serviceFocus lists a service's (or an action's) servers and clients with their calls.
func serviceFocus(f *Frame, name string, w int) []string {
	out := []string{styleTitle.Render("Service " + name + " — servers and clients (esc: back)"),
		styleHeader.Render(cell(" SIDE NODE", max(20, w-60), false) + cell("PID", 8, true) + cell("CALLS/s", 9, true) + cell("ANSWERED", 9, true) +
			cell("MEAN", 9, true) + cell("p99", 9, true) + cell("OPEN", 6, true) + cell("OLDEST", 10, true))}
	for i := range f.W.Calls {
		c := &f.W.Calls[i]
		action, part, isAction := window.ActionOf(c.Name)
		if c.Name != name && (!isAction || action != name) || !c.Alive {
			continue
		}
		side := c.Side()
		if isAction {
			side += " " + part
		}
		oldest := "-"
		if len(c.Open) > 0 {
			oldest = msText(c.OldestMs())
		}
		mean := math.NaN()
		if c.Time.N > 0 {
			mean = c.Time.MeanMs
		}
		p99 := math.NaN()
		if c.Time.N > 0 {
			p99 = c.Time.P99Ms
		}
		out = append(out, cell(fmt.Sprintf(" %s %s", side, c.Node), max(20, w-60), false)+cell(fmt.Sprint(c.Pid), 8, true)+
			cell(num(c.Hz, 1), 9, true)+cell(fmt.Sprint(c.Answered), 9, true)+cell(msText(mean), 9, true)+cell(msText(p99), 9, true)+
			cell(fmt.Sprint(len(c.Open)), 6, true)+cell(oldest, 10, true))
		if c.Client && !c.HasServer {
			out = append(out, styleWarn.Render(cell("      no process on this machine serves "+c.Name+": its calls are never answered here", w, false)))
		}
		if c.Evicted > 0 {
			out = append(out, styleWarn.Render(cell(fmt.Sprintf("      %d calls given up on this window (never answered)", c.Evicted), w, false)))
		}
		if c.SendFailed > 0 {
			out = append(out, styleWarn.Render(cell("      "+health.SendFailedWords(float64(c.SendFailed)), w, false)),
				styleWarn.Render(cell("      fix: "+health.SendFailedFix, w, false)))
		}
	}
	for _, wn := range f.Warns {
		if wn.Topic == name && strings.HasPrefix(string(wn.Kind), "service") || wn.Kind == health.ActionSlow && wn.Topic == name {
			out = append(out, styleWarn.Render(cell(" "+describe(&wn), w, false)))
		}
	}
	return out
}
