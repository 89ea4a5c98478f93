package top

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"ros2_pulse/internal/cpu"
	"ros2_pulse/internal/health"
	"ros2_pulse/internal/window"
)

// Frame is one refresh: a window, its verdicts and the CPU of its processes.
// Frames are built by the same packages as record, check and export; top
// only draws them.
type Frame struct {
	W     *window.Window
	Warns []health.Warning // spec verdicts and recv_lag
	CPU   map[int]cpu.Sample
	At    time.Time // when the window ended (its ts_ns)
	Live  bool      // from segments: endpoints and timers per process are known
}

// Status is a topic's state against the spec, worst first.
type Status int

const (
	Stalled Status = iota // a side that has counted before is silent now
	Warn                  // a spec verdict or a lagging subscriber names the topic
	Exited                // every endpoint's process has exited
	OK
	NoData // no traffic ever seen, no verdict
)

func (s Status) String() string {
	return [...]string{"STALL", "WARN", "exited", "ok", "-"}[s]
}

// topicRow is a topic as the table shows it.
type topicRow struct {
	name          string
	pubHz, recvHz float64
	pubs, subs    int
	intra         float64 // share of deliveries (or publishes) that were intra-process; NaN: none
	lossPct       float64 // the worst judged subscription's loss, NaN when none was judged
	gapMs         float64 // largest gap, NaN without gap data
	bytesPerS     float64 // its publishers' bytes a second (else its subscriptions'), NaN when not measured (design note 0033)
	bytesSampled  bool    // ... from sampled sizes
	silentMs      float64 // how long the topic has been silent now, NaN when it is not
	status        Status
	spark         []float64
	treeFields
	stalled int // a namespace row: its topics that are stalled
}

// treeFields place a row in the namespace tree (tree.go): a namespace's
// own row (group set), or a row shown under one by its relative label.
type treeFields struct {
	label string // the name as shown; "" outside the tree
	depth int
	group string // a namespace row: the namespace; "" for a topic or node
	open  bool   // a namespace row: its rows are shown under it
	count int    // a namespace row: the topics or nodes under it
}

// nodeRow is one node of one process.
type nodeRow struct {
	name, state string // alive, quiet, not measured, exited
	pid         int
	cpuPct      float64 // NaN: not measured yet
	busyPct     float64 // share of the window in its callbacks; NaN: not measured (rclpy, a log without timing)
	costMs      float64 // its process's CPU per wake-up (callback or take) in ms; NaN: no wake-up or no CPU sample
	execPct     float64 // its process's busiest executor thread (what starves every node that thread serves); NaN: none measured
	rssBytes    int64
	out, in     []string // topics it publishes and subscribes
	treeFields
	exited, quiet int // a namespace row: its nodes in those states
}

// topicRate is the number a topic's sparkline follows: what is published,
// or what is received when nothing here publishes.
func topicRate(t *window.Topic) float64 {
	if t.PubCount > 0 && t.PubMeasured("any") {
		return t.PubAny
	}
	return t.RecvInter + t.RecvIntra
}

// topicStatus decides a topic's status from its window and the verdicts.
func topicStatus(t *window.Topic, warned bool) Status {
	return map[string]Status{window.StateStalled: Stalled, window.StateWarn: Warn, window.StateExited: Exited,
		window.StateOK: OK, window.StateNoData: NoData}[t.State(warned)]
}

// topicRows builds the topic table from a frame; silentSince carries, per
// topic, when it went silent (for topics without gap data).
func topicRows(f *Frame, history map[string][]float64, silentSince map[string]time.Time) []topicRow {
	warned := map[string]bool{}
	for _, w := range f.Warns {
		if w.Topic != "" && w.Kind != health.CannotJudge {
			warned[w.Topic] = true
		}
	}
	rows := make([]topicRow, 0, len(f.W.Topics))
	for i := range f.W.Topics {
		t := &f.W.Topics[i]
		r := topicRow{name: t.Name, pubHz: t.PubAny, recvHz: t.RecvInter + t.RecvIntra, pubs: t.PubCount, subs: t.SubCount,
			intra: math.NaN(), lossPct: math.NaN(), gapMs: math.NaN(), silentMs: math.NaN(), bytesPerS: math.NaN(), spark: history[t.Name]}
		if b := topicBytes(t); b.Measured() {
			r.bytesPerS, r.bytesSampled = b.PerS, b.How == window.BytesSampled
		}
		if t.Loss.Judged > 0 {
			r.lossPct = t.Loss.WorstPct
		}
		if !t.PubMeasured("any") {
			r.pubHz = math.NaN() // not visible on this distro: "-", never 0
		}
		switch {
		case r.recvHz > 0:
			r.intra = t.RecvIntra / r.recvHz
		case t.PubInter+t.PubIntra > 0 && t.PubMeasured("any"):
			r.intra = t.PubIntra / (t.PubInter + t.PubIntra)
		}
		if t.PubGap.HasData || t.RecvGap.HasData {
			r.gapMs = math.Max(t.PubGap.MaxDtMs(), t.RecvGap.MaxDtMs())
		}
		r.status = topicStatus(t, warned[t.Name])
		if r.status == Stalled {
			switch open := math.Max(t.PubGap.OpenMs, t.RecvGap.OpenMs); {
			case open > 0:
				r.silentMs = open
			case !silentSince[t.Name].IsZero():
				r.silentMs = float64(f.At.Sub(silentSince[t.Name]).Milliseconds())
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// nodeRows builds the node table: one row per node per process.
func nodeRows(f *Frame) []nodeRow {
	type ep struct {
		pid  int
		node string
	}
	out, in := map[ep][]string{}, map[ep][]string{}
	active := map[ep]bool{}
	for i := range f.W.Topics {
		t := &f.W.Topics[i]
		for _, e := range t.Pubs {
			k := ep{e.Pid, e.Node}
			out[k] = append(out[k], t.Name)
			// Humble: an intra-process publish fires no tracepoint; its process's deliveries show it published
			active[k] = active[k] || e.Inter+e.Intra > 0 || e.PubHidden && deliveredIntra(t, e.Pid)
		}
		for _, e := range t.Subs {
			k := ep{e.Pid, e.Node}
			in[k] = append(in[k], t.Name)
			active[k] = active[k] || e.Inter+e.Intra > 0
		}
	}
	for _, tm := range f.W.Timers {
		active[ep{tm.Pid, tm.Node}] = active[ep{tm.Pid, tm.Node}] || tm.Hz > 0
	}
	// Every callback the probe sees is a sign of life, a service's too; an
	// rclpy service's callbacks fire no tracepoint, so its node may be busy
	// where nothing shows: "not measured", not quiet.
	unseen := map[ep]bool{}
	for _, sv := range f.W.Services {
		k := ep{sv.Pid, sv.Node}
		active[k] = active[k] || sv.Delta > 0
		unseen[k] = unseen[k] || !sv.Measured
	}
	for _, c := range f.W.Calls { // a call taken, sent or answered is a sign of life, rclpy's too
		k := ep{c.Pid, c.Node}
		if c.Started+c.Answered > 0 {
			active[k], unseen[k] = true, false
		}
	}
	busy := map[ep]float64{}
	for _, b := range f.W.Busy {
		if b.Measured {
			busy[ep{b.Pid, b.Node}] = b.Pct
		}
	}
	for _, c := range f.W.Callbacks {
		k := ep{c.Pid, c.Node}
		active[k] = active[k] || c.Duration.N > 0
	}
	for _, b := range f.W.Busy { // time in its callbacks, or (rclpy) its executor's time outside rcl_wait: it worked
		k := ep{b.Pid, b.Node}
		active[k] = active[k] || b.Measured && b.Pct > 0
	}
	wakeups, procBusy := window.Wakeups(f.W), window.ProcessBusy(f.W.Threads)
	var rows []nodeRow
	for _, p := range f.W.Procs {
		for _, n := range p.Nodes {
			k := ep{p.Pid, n}
			r := nodeRow{name: n, pid: p.Pid, state: "alive", cpuPct: math.NaN(), busyPct: math.NaN(), costMs: math.NaN(), execPct: math.NaN(), out: out[k], in: in[k]}
			if v, ok := busy[k]; ok && p.Alive {
				r.busyPct = v
			}
			if pb, ok := procBusy[p.Pid]; ok && p.Alive {
				r.execPct = pb.BusiestPct
			}
			switch {
			case !p.Alive:
				r.state = "exited"
			case f.Live && !active[k] && unseen[k]:
				r.state = "not measured"
			case f.Live && !active[k]:
				// Quiet needs endpoint data: a replayed log has none, so it never says quiet.
				r.state = "quiet"
			}
			if s, ok := f.CPU[p.Pid]; ok && p.Alive {
				r.cpuPct, r.rssBytes = s.CPUPct, s.RSSBytes
				if n := wakeups[p.Pid]; n > 0 && f.Live { // the process's CPU over the window, per callback or take
					r.costMs = s.CPUPct / 100 * f.W.Seconds * 1e3 / float64(n)
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// deliveredIntra reports whether a subscription of t in process pid took
// messages intra-process in the window.
func deliveredIntra(t *window.Topic, pid int) bool {
	for _, s := range t.Subs {
		if s.Pid == pid && s.Intra > 0 {
			return true
		}
	}
	return false
}

// describe is a warning in a few words, for the warnings pane.
func describe(w *health.Warning) string {
	who := ""
	if w.Pid != 0 {
		who = fmt.Sprintf(" %s[%d]", w.Node, w.Pid)
	}
	switch w.Kind {
	case health.TopicRate:
		s := fmt.Sprintf("%s %s%s %.1f Hz, expected %s", w.Topic, w.Side, who, w.Value, bounds(w.Min, w.Max))
		if w.Cause != "" {
			s += ": " + w.Cause
		}
		return s
	case health.TopicGap:
		return fmt.Sprintf("%s %s gap %.0f ms > %g ms", w.Topic, w.Side, w.Value, w.Bound)
	case health.TopicMissing:
		return fmt.Sprintf("%s: no live %s endpoint", w.Topic, map[bool]string{true: "publisher", false: "subscription"}[w.Side == "pub"])
	case health.NodeMissing:
		return w.Node + " missing"
	case health.TimerRate:
		timer := "timers"
		if w.Timer >= 0 {
			timer = fmt.Sprintf("timer %d", w.Timer)
		}
		return fmt.Sprintf("%s %s %.1f Hz < %g", w.Node, timer, w.Value, w.Min)
	case health.TopicLatency:
		return fmt.Sprintf("%s latency %.1f ms > %g ms", w.Topic, w.Value, w.Bound)
	case health.TopicBytes:
		return fmt.Sprintf("%s %s %s/s, expected %s", w.Topic, w.Side, window.HumanBytes(w.Value), bytesBounds(w.Min, w.Max))
	case health.TopicLoss:
		return fmt.Sprintf("%s%s lost %.1f %% > %g %%", w.Topic, who, w.Value, w.Bound)
	case health.CannotJudge:
		what := w.Topic
		if what == "" {
			what = w.Node
		}
		return fmt.Sprintf("%s: %s rule not judged: %s", what, w.Metric, w.Why())
	case health.SegmentFull:
		return fmt.Sprintf("pid %d (%s): %.0f endpoints did not fit its segment and are not counted (raise ROS_PULSE_MAX_ENDPOINTS)", w.Pid, w.Node, w.Value)
	case health.RecvLag:
		if w.Cause != "" { // it stopped receiving, and why (health.StarvedCause)
			return fmt.Sprintf("%s%s receives %.1f of %.1f Hz: %s", w.Topic, who, w.Value, w.Min, w.CauseAndFix())
		}
		return fmt.Sprintf("%s%s receives %.1f of %.1f Hz", w.Topic, who, w.Value, w.Min)
	case health.Unmatched:
		what := "hears nobody"
		if w.Side == "pub" {
			what = "is heard by nobody"
		}
		s := fmt.Sprintf("%s%s %s: %s", w.Topic, who, what, w.Reason)
		if w.Cause != "" {
			s += " (" + w.Cause + ")"
		}
		return s
	case health.RecvStarved:
		if w.Cause != "" { // why, where health.StarvedCause knows, with the fix
			return fmt.Sprintf("%s%s hears nothing: %s", w.Topic, who, w.CauseAndFix())
		}
		return fmt.Sprintf("%s%s %s", w.Topic, who, health.StarvedWords(w.Min))
	case health.CallbackSlow:
		what := w.Topic
		if w.Metric == "timer" {
			what = fmt.Sprintf("timer %d", w.Timer)
		}
		return fmt.Sprintf("%s%s %s callback took ≥ %.1f ms > %g ms", what, who, w.Metric, w.Value, w.Bound)
	case health.TimerLate:
		return fmt.Sprintf("%s timer %d called %.1f ms late > %g ms", w.Node, w.Timer, w.Value, w.Bound)
	case health.TimerOverrun:
		return fmt.Sprintf("%s timer %d overran its period %.0f times > %g", w.Node, w.Timer, w.Value, w.Bound)
	case health.NodeBusy:
		return fmt.Sprintf("%s%s busy %.0f %% of the window in callbacks > %g %%", w.Node, who, w.Value, w.Bound)
	case health.ServiceMissing:
		return fmt.Sprintf("%s: no live %s here", w.Topic, w.Side)
	case health.ServiceRate:
		return fmt.Sprintf("%s %s%s %.1f calls/s < %g", w.Topic, w.Side, who, w.Value, w.Min)
	case health.ServiceSlow:
		return fmt.Sprintf("%s server%s: %.0f answers later than %g ms", w.Topic, who, w.Value, w.Bound)
	case health.ServiceTimeout:
		return fmt.Sprintf("%s client%s: %.0f calls timed out (%g ms)", w.Topic, who, w.Value, w.Bound)
	case health.ServiceBacklog:
		return fmt.Sprintf("%s %s%s: %.0f calls open > %g", w.Topic, w.Side, who, w.Value, w.Bound)
	case health.ServiceSendFailed:
		return fmt.Sprintf("%s server%s: %s; fix: %s", w.Topic, who, health.SendFailedWords(w.Value), health.SendFailedFix)
	case health.PathSlow:
		return pathWords(w)
	case health.ActionSlow:
		return fmt.Sprintf("action %s %s%s: %.0f %s later than %g ms", w.Topic, w.Side, who, w.Value, map[string]string{"accept": "goals accepted", "result": "results"}[w.Metric], w.Bound)
	}
	return string(w.Kind)
}

func bounds(lo, hi float64) string {
	if math.IsInf(hi, 1) {
		return fmt.Sprintf("≥ %g", lo)
	}
	return fmt.Sprintf("%g–%g", lo, hi)
}

// sortTopics orders rows by the chosen key; names break ties.
func sortTopics(rows []topicRow, by int) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		switch by {
		case 1:
			if ra, rb := math.Max(a.pubHz, a.recvHz), math.Max(b.pubHz, b.recvHz); ra != rb {
				return ra > rb
			}
		case 2:
			if a.status != b.status {
				return a.status < b.status
			}
		}
		return a.name < b.name
	})
}

// unmeasuredLast sorts a NaN (not measured) below every measured share.
func unmeasuredLast(v float64) float64 {
	if math.IsNaN(v) {
		return -1
	}
	return v
}

func sortNodes(rows []nodeRow, by int) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if ea, eb := a.state == "exited", b.state == "exited"; ea != eb {
			return eb // live nodes first: exited ones never push them off the screen
		}
		switch by {
		case 3:
			if ba, bb := unmeasuredLast(a.busyPct), unmeasuredLast(b.busyPct); ba != bb {
				return ba > bb
			}
			if ea, eb := unmeasuredLast(a.execPct), unmeasuredLast(b.execPct); ea != eb {
				return ea > eb
			}
		case 1:
			if ca, cb := unmeasuredLast(a.cpuPct), unmeasuredLast(b.cpuPct); ca != cb {
				return ca > cb
			}
		case 2:
			if a.rssBytes != b.rssBytes {
				return a.rssBytes > b.rssBytes
			}
		}
		if a.name != b.name {
			return a.name < b.name
		}
		return a.pid < b.pid
	})
}

// spark draws a history as block characters, scaled to its own maximum.
func spark(h []float64, width int) string {
	const bars = "▁▂▃▄▅▆▇█"
	if len(h) > width {
		h = h[len(h)-width:]
	}
	top := 0.0
	for _, v := range h {
		top = math.Max(top, v)
	}
	var b strings.Builder
	for i := 0; i < width-len(h); i++ {
		b.WriteByte(' ')
	}
	runes := []rune(bars)
	for _, v := range h {
		if top <= 0 {
			b.WriteRune(' ')
			continue
		}
		b.WriteRune(runes[int(math.Round(v/top*float64(len(runes)-1)))])
	}
	return b.String()
}

// bytesBounds says a bytes rule's bounds: "≥ 1.00 kB/s", "≤ 40.0 MB/s" or "1.00–2.00 MB/s".
func bytesBounds(lo, hi float64) string {
	switch {
	case math.IsInf(hi, 1):
		return "≥ " + window.HumanBytes(lo) + "/s"
	case lo <= 0:
		return "≤ " + window.HumanBytes(hi) + "/s"
	}
	return window.HumanBytes(lo) + "–" + window.HumanBytes(hi) + "/s"
}

// topicBytes is what a topic's row shows of its bytes: its publishers' (what
// left their processes), else its subscriptions' when no publisher here
// measures them (a remote publisher).
func topicBytes(t *window.Topic) window.Bytes {
	if t.PubBytes.How != "" && t.PubCount > 0 {
		return t.PubBytes
	}
	return t.RecvBytes
}

// bytesCell is a bytes rate in a few characters: "27.6M", "~512" when sampled, "-" when not measured.
func bytesCell(v float64, sampled bool) string {
	if math.IsNaN(v) {
		return "-"
	}
	out := strings.TrimSuffix(strings.ReplaceAll(window.HumanBytes(v), " ", ""), "B")
	if sampled {
		out = "~" + out
	}
	return out
}
