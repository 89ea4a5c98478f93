package recorder

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"ros2_pulse/internal/window"
)

// callKey is one server or client of a service, or one side of an action
// (name is the action's; part "" for a plain service).
type callKey struct {
	name, node string
	pid        int
	client     bool
}

// CallTotal is one server's or client's calls over a whole run (ABI 1.6).
type CallTotal struct {
	Name, Node      string
	Pid             int
	Client          bool
	Calls, Answered uint64  // requests taken or sent; answered
	SumMs, MaxMs    float64 // the answered calls' time (MaxMs: the longest took at least this)
	PeakOpen        int     // the most calls open at a window's end
	Abandoned       uint64  // calls given up on (never answered)
	NotSent         uint64  // a server's responses rcl_send_response refused (its client gone first; ABI 1.8)
	NoServer        bool    // a client seen alive with no server here
	IsAction        bool    // an action: Calls are goals, SumMs/MaxMs the accept time
	Results         uint64  // an action: results answered
	ResultSumMs     float64 // an action: time to result
	ResultMaxMs     float64
	Cancels         uint64
}

func (s *Summary) addCalls(w *window.Window) {
	if s.calls == nil {
		s.calls = map[callKey]*CallTotal{}
	}
	for i := range w.Calls {
		c := &w.Calls[i]
		name, part, isAction := c.ShownAs()
		k := callKey{name, c.Node, c.Pid, c.Client}
		t := s.calls[k]
		if t == nil {
			t = &CallTotal{Name: name, Node: c.Node, Pid: c.Pid, Client: c.Client, IsAction: isAction}
			s.calls[k] = t
		}
		t.NoServer = t.NoServer || c.Client && c.Alive && !c.HasServer
		switch part {
		case "", "send_goal":
			t.Calls += c.Started
			t.Answered += c.Answered
			t.SumMs += c.Time.SumMs
			t.MaxMs = max(t.MaxMs, c.Time.MaxMs)
			t.PeakOpen = max(t.PeakOpen, len(c.Open))
			t.Abandoned += c.Evicted
			t.NotSent += c.SendFailed
		case "get_result":
			t.NotSent += c.SendFailed
			t.Results += c.Answered
			t.ResultSumMs += c.Time.SumMs
			t.ResultMaxMs = max(t.ResultMaxMs, c.Time.MaxMs)
		case "cancel_goal":
			t.Cancels += c.Started
		}
	}
}

// Calls returns every server's and client's totals, services before actions, by name, node, side.
func (s *Summary) Calls() []CallTotal {
	out := make([]CallTotal, 0, len(s.calls))
	for _, t := range s.calls {
		if !window.IsParameterService(t.Name) || t.Calls > 0 {
			out = append(out, *t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.IsAction != b.IsAction:
			return !a.IsAction
		case a.Name != b.Name:
			return a.Name < b.Name
		case a.Client != b.Client:
			return !a.Client
		case a.Node != b.Node:
			return a.Node < b.Node
		}
		return a.Pid < b.Pid
	})
	return out
}

func meanMs(sum float64, n uint64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", sum/float64(n))
}

func maxMs(v float64, n uint64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// printCalls writes the services' and actions' tables, when any were called.
func (s *Summary) printCalls(out io.Writer) {
	all := s.Calls()
	if len(all) == 0 {
		return
	}
	var services, actions []CallTotal
	for _, t := range all {
		if t.IsAction {
			actions = append(actions, t)
		} else {
			services = append(services, t)
		}
	}
	side := func(t CallTotal) string {
		if t.Client {
			return "client"
		}
		return "server"
	}
	note := func(t CallTotal) string {
		switch {
		case t.NoServer:
			return "  no server on this machine"
		case t.Abandoned > 0 && t.NotSent > 0:
			return fmt.Sprintf("  %d never answered, %d not sent (client gone)", t.Abandoned, t.NotSent)
		case t.Abandoned > 0:
			return fmt.Sprintf("  %d never answered", t.Abandoned)
		case t.NotSent > 0:
			return fmt.Sprintf("  %d not sent (client gone)", t.NotSent)
		}
		return ""
	}
	if len(services) > 0 {
		fmt.Fprintln(out, "services (any client library; server: take to response; client: round trip; MAX ms: the longest took at least this)")
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVICE\tNODE\tPID\tSIDE\tCALLS\tANSWERED\tMEAN ms\tMAX ms\tPEAK OPEN")
		for _, t := range services {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%s\t%s\t%d%s\n", t.Name, t.Node, t.Pid, side(t), t.Calls, t.Answered,
				meanMs(t.SumMs, t.Answered), maxMs(t.MaxMs, t.Answered), t.PeakOpen, note(t))
		}
		tw.Flush()
	}
	if len(actions) > 0 {
		fmt.Fprintln(out, "actions (goals: send_goal; accept: its time; result: get_result's time; each part as the service above)")
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ACTION\tNODE\tPID\tSIDE\tGOALS\tACCEPTED\tACCEPT ms\tRESULTS\tRESULT ms\tMAX RESULT ms\tCANCELS")
		for _, t := range actions {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%s\t%d\t%s\t%s\t%d%s\n", t.Name, t.Node, t.Pid, side(t), t.Calls, t.Answered,
				meanMs(t.SumMs, t.Answered), t.Results, meanMs(t.ResultSumMs, t.Results), maxMs(t.ResultMaxMs, t.Results), t.Cancels, note(t))
		}
		tw.Flush()
	}
}
