// Package logfmt renders windows in the upstream log grammar
// (shared/reference/upstream-ros2_pulse.md §1b-1c): text blocks and JSON
// Lines. New information goes into new line kinds (PROC) or new keys that
// old readers ignore, never into extra fields of old lines. Both formats are
// built from the same decisions, so they never disagree.
package logfmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/window"
)

// Format is an output format.
type Format string

const (
	Text  Format = "text"
	JSONL Format = "jsonl"
)

// ParseFormat accepts exactly "text" or "jsonl" after trimming.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.TrimSpace(s)); f {
	case Text, JSONL:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q (expected 'text' or 'jsonl')", s)
}

// Options shape what is emitted.
type Options struct {
	EmitIdle bool             // ROS_PULSE_EMIT_IDLE: a zero TOPIC line for topics with no traffic at all
	Warns    []health.Warning // the window's verdicts, when a spec is loaded
}

// bound formats an upper bound as upstream does: %g, or inf.
func bound(v float64) string {
	if math.IsInf(v, 1) {
		return "inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// upstreamWarn is upstream's WARN line for w, when upstream had one.
func upstreamWarn(w *health.Warning) (string, bool) {
	switch w.Kind {
	case health.TopicRate:
		if w.Pid != 0 {
			return "", false // per-subscription verdicts are new: ALERT only
		}
		return fmt.Sprintf("WARN TOPIC %s hz=%s expected=[%s,%s]", textName(w.Topic), hz(w.Value), bound(w.Min), bound(w.Max)), true
	case health.TopicMissing:
		if w.Min <= 0 {
			return "", false // 0 Hz breaks no rate bound: ALERT only
		}
		// Upstream judged a topic absent from the logs at 0 Hz.
		return fmt.Sprintf("WARN TOPIC %s hz=%s expected=[%s,%s]", textName(w.Topic), hz(0), bound(w.Min), bound(w.Max)), true
	case health.TopicGap:
		return fmt.Sprintf("WARN TOPIC %s max_dt_ms=%s expected_max_gap_ms=%s", textName(w.Topic), ms(w.Value), bound(w.Bound)), true
	case health.NodeMissing:
		return fmt.Sprintf("WARN NODE %s missing", textName(w.Node)), true
	}
	return "", false
}

// WarnLines renders verdicts as text lines: upstream's WARN line where
// upstream had that verdict, then the ALERT line every verdict gets.
func WarnLines(warns []health.Warning) []string {
	var out []string
	for i := range warns {
		if line, ok := upstreamWarn(&warns[i]); ok {
			out = append(out, line)
		}
		out = append(out, alertLine(&warns[i]))
	}
	return out
}

// alertLine is the new line kind: every verdict with its side, value, bound and age.
func alertLine(w *health.Warning) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ALERT %s", w.Kind)
	if fields, ok := timingFields(w); ok {
		for _, f := range fields {
			if f[0] == "name" || f[0] == "node" || f[0] == "cause" {
				f[1] = textName(f[1])
			}
			fmt.Fprintf(&b, " %s=%s", f[0], f[1])
		}
		fmt.Fprintf(&b, " for_s=%.1f", w.Age.Seconds())
		return b.String()
	}
	if w.Topic != "" {
		fmt.Fprintf(&b, " topic=%s side=%s transport=%s", textName(w.Topic), w.Side, w.Transport)
	}
	if w.Node != "" {
		fmt.Fprintf(&b, " node=%s", textName(w.Node))
	}
	if w.Pid != 0 {
		fmt.Fprintf(&b, " pid=%d", w.Pid)
	}
	if (w.Kind == health.TimerRate || w.Metric == "timer") && w.Timer >= 0 {
		fmt.Fprintf(&b, " timer=%d", w.Timer)
	}
	switch w.Kind {
	case health.TopicRate, health.TimerRate:
		fmt.Fprintf(&b, " hz=%s min_hz=%s max_hz=%s", hz(w.Value), bound(w.Min), bound(w.Max))
	case health.TopicGap:
		fmt.Fprintf(&b, " max_dt_ms=%s max_gap_ms=%s", ms(w.Value), bound(w.Bound))
	case health.TopicLatency:
		fmt.Fprintf(&b, " max_ms=%s max_latency_ms=%s", ms(w.Value), bound(w.Bound))
	case health.TopicLoss:
		fmt.Fprintf(&b, " loss_pct=%s max_loss_pct=%s", pct(w.Value), bound(w.Bound))
	case health.TopicBytes:
		fmt.Fprintf(&b, " bytes_per_s=%s min_bytes_per_s=%s max_bytes_per_s=%s", ms(w.Value), bound(w.Min), bound(w.Max))
	case health.CannotJudge:
		switch w.Metric {
		case "rate", "timer":
			fmt.Fprintf(&b, " min_hz=%s max_hz=%s", bound(w.Min), bound(w.Max))
		case "bytes":
			fmt.Fprintf(&b, " min_bytes_per_s=%s max_bytes_per_s=%s", bound(w.Min), bound(w.Max))
		case "latency":
			fmt.Fprintf(&b, " max_latency_ms=%s", bound(w.Bound))
		case "loss":
			fmt.Fprintf(&b, " max_loss_pct=%s", bound(w.Bound))
		default:
			fmt.Fprintf(&b, " max_gap_ms=%s", bound(w.Bound))
		}
		fmt.Fprintf(&b, " reason=%s", w.Reason)
	case health.Unmatched:
		fmt.Fprintf(&b, " reason=%s", textName(w.Reason))
	case health.RecvLag:
		fmt.Fprintf(&b, " hz=%s pub_hz=%s", hz(w.Value), hz(w.Min))
	case health.RecvStarved:
		fmt.Fprintf(&b, " received=0 pub_hz=%s", hz(w.Min))
	}
	if w.Cause != "" { // why its subscriptions cannot hear the publishers (internal/diagnose)
		fmt.Fprintf(&b, " cause=%s", textName(w.Cause))
	}
	fmt.Fprintf(&b, " for_s=%.1f", w.Age.Seconds())
	return b.String()
}

// timingFields are the fields of a timing verdict (callbacks, timer timing,
// busy nodes), in order, for both formats; false for every other verdict.
func timingFields(w *health.Warning) ([][2]string, bool) {
	var f [][2]string
	add := func(k, v string) { f = append(f, [2]string{k, v}) }
	who := func() {
		if w.Topic != "" {
			add("name", w.Topic) // raw: each format escapes names its way
		}
		if w.Node != "" {
			add("node", w.Node)
		}
		if w.Pid != 0 {
			add("pid", strconv.Itoa(w.Pid))
		}
		if w.Timer >= 0 {
			add("timer", strconv.Itoa(w.Timer))
		}
	}
	switch {
	case w.Kind == health.CallbackSlow:
		who()
		add("callback", w.Metric)
		add("max_ms", ms(w.Value))
		add("bound_ms", bound(w.Bound))
	case w.Kind == health.TimerLate:
		who()
		add("late_ms", ms(w.Value))
		add("max_late_ms", bound(w.Bound))
	case w.Kind == health.TimerOverrun:
		who()
		add("overruns", strconv.FormatFloat(w.Value, 'f', 0, 64))
		add("max_overruns", bound(w.Bound))
	case w.Kind == health.NodeBusy:
		who()
		add("busy_pct", pct(w.Value))
		add("max_busy_pct", bound(w.Bound))
	case w.Kind == health.ServiceMissing:
		add("name", w.Topic)
		add("side", string(w.Side))
		add("min_hz", bound(w.Min))
	case w.Kind == health.ServiceRate:
		who()
		add("side", string(w.Side))
		add("hz", hz(w.Value))
		add("min_hz", bound(w.Min))
	case w.Kind == health.ServiceSlow || w.Kind == health.ServiceTimeout:
		who()
		add("side", string(w.Side))
		add("late", strconv.FormatFloat(w.Value, 'f', 0, 64))
		add("max_response_ms", bound(w.Bound))
	case w.Kind == health.ServiceBacklog:
		who()
		add("side", string(w.Side))
		add("outstanding", strconv.FormatFloat(w.Value, 'f', 0, 64))
		add("max_outstanding", bound(w.Bound))
	case w.Kind == health.ServiceSendFailed:
		who()
		add("side", string(w.Side))
		add("send_failed", strconv.FormatFloat(w.Value, 'f', 0, 64))
	case w.Kind == health.ActionSlow:
		who()
		add("side", string(w.Side))
		add("part", w.Metric)
		add("late", strconv.FormatFloat(w.Value, 'f', 0, 64))
		add("max_"+w.Metric+"_ms", bound(w.Bound))
	case w.Kind == health.PathSlow:
		add("name", w.Topic)
		add("p99_ms", ms(w.Value))
		add("max_ms", bound(w.Bound))
	case w.Kind == health.CannotJudge && w.Metric == "path":
		add("name", w.Topic)
		add("metric", w.Metric)
		add("max_ms", bound(w.Bound))
		add("reason", w.Reason)
		if w.Cause != "" {
			add("cause", w.Cause)
		}
	case w.Kind == health.CannotJudge && w.Metric == "service":
		who()
		add("metric", w.Metric)
		add("side", string(w.Side))
		add("max_response_ms", bound(w.Bound))
		add("reason", w.Reason)
	case w.Kind == health.CannotJudge && timingMetric[w.Metric] != "":
		who()
		add("metric", w.Metric)
		add(timingMetric[w.Metric], bound(w.Bound))
		add("reason", w.Reason)
	default:
		return nil, false
	}
	return f, true
}

// timingMetric names the bound of each timing rule.
var timingMetric = map[string]string{"callback": "bound_ms", "timer_late": "max_late_ms", "timer_overrun": "max_overruns", "busy": "max_busy_pct"}

// lines decides, once for both formats, which lines a topic gets.
type lines struct{ topic, pub, recv, pubGap, recvGap, latency, loss bool }

func decide(t *window.Topic, opt Options) lines {
	var l lines
	l.topic = t.PubInter > 0 || t.PubInterSeen || (opt.EmitIdle && !t.Active() && !t.PubIntraSeen && !t.RecvSeen)
	l.pub = t.PubIntra > 0 || t.PubIntraSeen
	l.recv = t.RecvInter+t.RecvIntra > 0 || t.RecvSeen
	// Gap lines need gap data; a zero maximum means "not measured" (upstream).
	l.pubGap = t.PubGap.HasData && t.PubGap.MaxDtMs() > 0
	l.recvGap = t.RecvGap.HasData && t.RecvGap.MaxDtMs() > 0
	// A new line kind: the window's receive latency; n=0 when tracking is on
	// and nothing was taken (a latency rule is then judged, not unjudgeable).
	l.latency = t.Latency.HasData
	// A new line kind, only for a loss: a line per topic per window would
	// grow every log for what is usually 0. No line reads as nothing lost.
	l.loss = t.Loss.Judged > 0 && pct(t.Loss.WorstPct) != pct(0)
	return l
}

// endpointLines writes an EP line (a new line kind) per live publisher and
// subscription of the topic: what the evaluator judges live (which sides have
// live endpoints, each subscription's rate and loss), so that a recording is
// judged offline exactly as it was live.
func endpointLines(ln *line, name string, t *window.Topic) {
	eachLiveEndpoint(t, func(side string, e *window.EndpointRate) {
		ln.s("EP ").s(name).s(" ").s(side).s(" pid=").i(e.Pid).s(" node=").s(dash(e.Node)).s(" inter=").hz(e.Inter).s(" intra=").hz(e.Intra)
		if e.LossJudged {
			ln.s(" loss_pct=").ms(e.LossPct)
		}
		if e.PubHidden {
			ln.s(" not_measured=1")
		}
		if e.Bytes.How != "" {
			ln.s(" bytes=").s(e.Bytes.How).s(" bytes_per_s=").ms(e.Bytes.PerS).s(" mean_bytes=").ms(e.Bytes.MeanSize)
		}
		ln.end()
	})
}

// bytesLine is a topic side's bytes (design note 0033), when its processes measure them.
func bytesLine(ln *line, name, side string, b *window.Bytes) {
	if b.How == "" {
		return
	}
	ln.s("BYTES ").s(name).s(" ").s(side).s(" how=").s(b.How).s(" per_s=").ms(b.PerS).s(" mean=").ms(b.MeanSize).
		s(" max=").u(uint64(b.MaxSize)).s(" messages=").u(b.Messages).end()
}

// eachLiveEndpoint calls f for the topic's live publishers ("pub"), then subscriptions ("recv").
func eachLiveEndpoint(t *window.Topic, f func(side string, e *window.EndpointRate)) {
	for _, side := range []struct {
		name string
		eps  []window.EndpointRate
	}{{"pub", t.Pubs}, {"recv", t.Subs}} {
		for i := range side.eps {
			if side.eps[i].Alive {
				f(side.name, &side.eps[i])
			}
		}
	}
}

func ms(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

func pct(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// dash stands in for an empty name in the text grammar.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return textName(s)
}

// periodLine is the new line kind carrying a side's period statistics.
func periodLine(b *strings.Builder, name, side string, g *window.GapStats) {
	fmt.Fprintf(b, "PERIOD %s %s n=%d mean_ms=%s stddev_ms=%s p50_ms=%s p90_ms=%s p99_ms=%s silent_ms=%s\n",
		name, side, g.N, ms(g.MeanMs), ms(g.StddevMs), ms(g.P50Ms), ms(g.P90Ms), ms(g.P99Ms), ms(g.OpenMs))
}

// Render formats a window in f.
func Render(f Format, w *window.Window, opt Options) []byte {
	if f == JSONL {
		return renderJSONL(w, opt)
	}
	return renderText(w, opt)
}

// RunInfo opens one run's part of a recording: readers tell a file's runs
// apart by it, and judge each on its own.
type RunInfo struct {
	ID      string // random, 16 hex digits
	Host    string
	Version string // of pulse
	StartNs int64  // wall clock at the start
	// DetailS: the run's detail period in seconds (pulse record --detail),
	// 0 when every window is whole. Its other windows are lean.
	DetailS float64
}

// RenderRun is the run header, a line kind of its own written before the
// run's first window: "RUN id=… host=… version=… start_ns=…" and an empty
// line in text, {"run":{…}} in jsonl. Readers of either grammar that do not
// know it skip it.
func RenderRun(f Format, r RunInfo) []byte {
	if f == JSONL {
		var b strings.Builder
		b.WriteString(`{"run":{"id":`)
		jsonString(&b, r.ID)
		b.WriteString(`,"host":`)
		jsonString(&b, r.Host)
		b.WriteString(`,"version":`)
		jsonString(&b, r.Version)
		fmt.Fprintf(&b, `,"start_ns":"%d"`, r.StartNs)
		if r.DetailS > 0 {
			fmt.Fprintf(&b, `,"detail_s":%s`, strconv.FormatFloat(r.DetailS, 'f', -1, 64))
		}
		b.WriteString("}}\n")
		return []byte(b.String())
	}
	detail := ""
	if r.DetailS > 0 {
		detail = " detail_s=" + strconv.FormatFloat(r.DetailS, 'f', -1, 64)
	}
	return []byte(fmt.Sprintf("RUN id=%s host=%s version=%s start_ns=%d%s\n\n", textName(r.ID), textName(r.Host), textName(r.Version), r.StartNs, detail))
}

// textName escapes bytes that would break the line grammar. Legal ROS names
// never contain them, so ordinary output is byte-identical to the raw name.
func textName(s string) string {
	plain := true // the usual name, printable ASCII, checked byte by byte (by rune it was a fifth of a window's text)
	for i := 0; i < len(s) && plain; i++ {
		plain = s[i] > ' ' && s[i] < 0x7f && s[i] != '\\'
	}
	if plain || !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' || r == utf8.RuneError }) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == 0x7f || c == '\\' || c >= 0x80 && !utf8.ValidString(s) {
			fmt.Fprintf(&b, "\\x%02x", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func hz(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

func renderText(w *window.Window, opt Options) []byte {
	var b strings.Builder
	b.Grow(textSize(w)) // once: growing by doubling copied a robot's window ~20 times
	ln := &line{b: &b}
	ln.s("# ts_ns=").s(strconv.FormatInt(w.TsNs, 10)).s(" window_s=").ms(w.Seconds)
	if w.Detail {
		b.WriteString(" detail=1")
	}
	b.WriteByte('\n')
	for i := range w.Topics {
		t := &w.Topics[i]
		l := decide(t, opt)
		name := textName(t.Name)
		if l.topic {
			ln.s("TOPIC ").s(name).s(" ").hz(t.PubInter).end()
		}
		if l.pub {
			ln.s("PUB ").s(name).s(" inter=").hz(t.PubInter).s(" intra=").hz(t.PubIntra).end()
		}
		if l.pubGap {
			fmt.Fprintf(&b, "JITTER %s pub max_dt_ms=%s\n", name, ms(t.PubGap.MaxDtMs()))
			periodLine(&b, name, "pub", &t.PubGap)
		}
		if l.recv {
			ln.s("RECV ").s(name).s(" inter=").hz(t.RecvInter).s(" intra=").hz(t.RecvIntra).end()
		}
		if l.recvGap {
			fmt.Fprintf(&b, "JITTER %s recv max_dt_ms=%s\n", name, ms(t.RecvGap.MaxDtMs()))
			periodLine(&b, name, "recv", &t.RecvGap)
		}
		if l.latency {
			g := &t.Latency
			fmt.Fprintf(&b, "LATENCY %s n=%d mean_ms=%s p50_ms=%s p90_ms=%s p99_ms=%s max_ms=%s\n",
				name, g.N, ms(g.MeanMs), ms(g.P50Ms), ms(g.P90Ms), ms(g.P99Ms), ms(g.MaxMs))
		}
		if l.loss {
			fmt.Fprintf(&b, "LOSS %s published=%d judged=%d worst_pct=%s node=%s pid=%d\n",
				name, t.Published, t.Loss.Judged, pct(t.Loss.WorstPct), dash(t.Loss.Node), t.Loss.Pid)
		}
		bytesLine(ln, name, "pub", &t.PubBytes)
		bytesLine(ln, name, "recv", &t.RecvBytes)
		endpointLines(ln, name, t)
	}
	for _, tm := range w.Timers {
		ln.s("TIMER ").s(textName(tm.Node)).s(" timer=").i(tm.Ordinal).s(" period_ms=").ms(tm.PeriodMs).s(" hz=").hz(tm.Hz).s(" pid=").i(tm.Pid)
		if tm.LateKnown {
			ln.s(" calls=").u(tm.Late.N).s(" late_mean_ms=").ms(tm.Late.MeanMs).s(" late_p99_ms=").ms(tm.Late.P99Ms).
				s(" late_max_ms=").ms(tm.Late.MaxMs).s(" overruns=").u(tm.Overruns)
		}
		ln.end()
	}
	for _, c := range w.Callbacks {
		ln.s("CALLBACK ").s(dash(c.Node)).s(" ").s(c.Kind).s(" name=").s(dash(c.Name))
		if c.Kind == "timer" {
			ln.s(" timer=").i(c.Ordinal)
		}
		if c.Function != "" {
			ln.s(" function=").s(textName(c.Function))
		}
		if c.Measured {
			d := &c.Duration
			ln.s(" n=").u(d.N).s(" mean_ms=").ms(d.MeanMs).s(" p50_ms=").ms(d.P50Ms).s(" p90_ms=").ms(d.P90Ms).
				s(" p99_ms=").ms(d.P99Ms).s(" max_ms=").ms(d.MaxMs).s(" unended=").u(c.Unended)
		} else {
			ln.s(" not_measured=").s(dash(c.Why))
		}
		ln.s(" pid=").i(c.Pid).end()
	}
	for _, n := range w.Busy {
		ln.s("BUSY ").s(textName(n.Node))
		if n.Measured || n.FromWait {
			ln.s(" pct=").ms(n.Pct).s(" pid=").i(n.Pid)
		} else {
			ln.s(" not_measured=1 pid=").i(n.Pid)
		}
		if n.FromWait {
			ln.s(" source=rcl_wait")
		}
		ln.end()
	}
	for _, t := range w.Threads {
		ln.s("THREAD pid=").i(t.Pid).s(" tid=").i(t.Tid).s(" name=").s(dash(t.Name)).s(" node=").s(dash(t.Node)).
			s(" busy_pct=").ms(t.BusyPct).s(" callbacks=").u(t.Callbacks)
		if t.Waiter {
			ln.s(" outside_wait_pct=").ms(t.OutsideWaitPct)
		}
		ln.end()
	}
	for i := range w.Calls { // service calls (ABI 1.6)
		c := &w.Calls[i]
		fmt.Fprintf(&b, "CALL %s side=%s node=%s pid=%d alive=%s started=%d answered=%d hz=%s evicted=%d unmatched=%d",
			textName(c.Name), c.Side(), dash(c.Node), c.Pid, bit(c.Alive), c.Started, c.Answered, hz(c.Hz), c.Evicted, c.Unmatched)
		if c.Client {
			fmt.Fprintf(&b, " has_server=%s", bit(c.HasServer))
		}
		d := &c.Time
		fmt.Fprintf(&b, " n=%d sum_ms=%s mean_ms=%s p50_ms=%s p90_ms=%s p99_ms=%s max_ms=%s hist=%s open=%s",
			d.N, ms(d.SumMs), ms(d.MeanMs), ms(d.P50Ms), ms(d.P90Ms), ms(d.P99Ms), ms(d.MaxMs), histText(c.Hist), openText(c.Open))
		if c.FailKnown { // ABI 1.8, servers: last, so readers from before it still parse the line
			fmt.Fprintf(&b, " send_failed=%d", c.SendFailed)
		}
		b.WriteByte('\n')
	}
	for i := range w.Links { // latency links and end-to-end paths (ABI 1.9): paths.go
		linkText(&b, &w.Links[i])
	}
	for i := range w.Paths {
		pathText(&b, &w.Paths[i])
	}
	for _, u := range w.Unmatched { // why a publisher or subscription meets nobody (ABI 1.5)
		fmt.Fprintf(&b, "UNMATCHED %s side=%s node=%s pid=%d reason=%s level=%s silent=%s detail=%s fix=%s peers=%s\n",
			textName(u.Topic), side(u.Pub), dash(u.Node), u.Pid, dash(u.Reason), level(u.Error), bit(u.Silent),
			dash(u.Detail), dash(u.Fix), dash(strings.Join(u.Peers, ";")))
	}
	for _, n := range w.Nodes {
		ln.s("NODE ").s(textName(n)).end()
	}
	for _, p := range w.Procs {
		fmt.Fprintf(&b, "PROC pid=%d state=%s nodes=%s exe=%s\n", p.Pid, p.State(), textName(p.NodeNames()), textName(p.Exe))
	}
	for _, p := range w.Procs { // a full segment, in every window: its entities beyond the table are not counted
		if p.Dropped > 0 {
			fmt.Fprintf(&b, "FULL pid=%d dropped_endpoints=%d\n", p.Pid, p.Dropped)
		}
	}
	for _, line := range WarnLines(opt.Warns) {
		b.WriteString(line + "\n")
	}
	b.WriteString("\n")
	return []byte(b.String())
}

// textSize is about the size of w in text: a little more, usually.
func textSize(w *window.Window) int {
	n := 4096 + 64*len(w.Nodes) + 200*len(w.Timers) + 280*len(w.Callbacks) + 120*len(w.Busy) + 160*len(w.Threads) + 400*len(w.Calls) + 400*len(w.Unmatched)
	for i := range w.Topics {
		t := &w.Topics[i]
		n += 3*(len(t.Name)+40) + (len(t.Pubs)+len(t.Subs))*(len(t.Name)+140)
	}
	for _, p := range w.Procs {
		n += 80 + len(p.Exe) + 64*len(p.Nodes)
	}
	return n
}

// histText writes duration buckets as "b:n,b:n" ("-" when none).
func histText(h []window.Bucket) string {
	if len(h) == 0 {
		return "-"
	}
	parts := make([]string, len(h))
	for i, x := range h {
		parts[i] = strconv.Itoa(x.B) + ":" + strconv.FormatUint(x.N, 10)
	}
	return strings.Join(parts, ",")
}

// openText writes open calls' ages in ms as "a;b" ("-" when none).
func openText(ages []float64) string {
	if len(ages) == 0 {
		return "-"
	}
	parts := make([]string, len(ages))
	for i, a := range ages {
		parts[i] = ms(a)
	}
	return strings.Join(parts, ";")
}

// jsonString escapes per RFC 8259: quote, backslash, \b\f\n\r\t, other C0 as \u00XX.
func jsonString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				fmt.Fprintf(b, `\u%04x`, c)
			} else if c >= 0x80 && !utf8.ValidString(s) {
				b.WriteString(`\ufffd`) // keep the line valid JSON whatever a segment holds
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// jsonWarn writes upstream's warn object keys (kind, topic, hz, min_hz,
// max_hz, max_dt_ms, max_gap_ms, node) plus the new ones; absent = not applicable.
func jsonWarn(b *strings.Builder, w *health.Warning) {
	fmt.Fprintf(b, `{"kind":"%s"`, w.Kind)
	if fields, ok := timingFields(w); ok {
		for _, f := range fields {
			fmt.Fprintf(b, `,"%s":`, f[0])
			if f[0] == "name" || f[0] == "node" || f[0] == "callback" || f[0] == "reason" || f[0] == "metric" || f[0] == "side" || f[0] == "part" || f[0] == "cause" {
				jsonString(b, f[1])
			} else {
				b.WriteString(f[1])
			}
		}
		fmt.Fprintf(b, `,"for_s":%.1f}`, w.Age.Seconds())
		return
	}
	if w.Topic != "" {
		b.WriteString(`,"topic":`)
		jsonString(b, w.Topic)
		fmt.Fprintf(b, `,"side":"%s","transport":"%s"`, w.Side, w.Transport)
	}
	if w.Node != "" {
		b.WriteString(`,"node":`)
		jsonString(b, w.Node)
	}
	if w.Pid != 0 {
		fmt.Fprintf(b, `,"pid":%d`, w.Pid)
	}
	if (w.Kind == health.TimerRate || w.Metric == "timer") && w.Timer >= 0 {
		fmt.Fprintf(b, `,"timer":%d`, w.Timer)
	}
	switch w.Kind {
	case health.TopicRate, health.TimerRate:
		fmt.Fprintf(b, `,"hz":%s,"min_hz":%s`, hz(w.Value), bound(w.Min))
		if !math.IsInf(w.Max, 1) { // JSON has no Infinity: absent means unbounded
			fmt.Fprintf(b, `,"max_hz":%s`, bound(w.Max))
		}
	case health.TopicGap:
		fmt.Fprintf(b, `,"max_dt_ms":%s,"max_gap_ms":%s`, ms(w.Value), bound(w.Bound))
	case health.TopicLatency:
		fmt.Fprintf(b, `,"max_ms":%s,"max_latency_ms":%s`, ms(w.Value), bound(w.Bound))
	case health.TopicLoss:
		fmt.Fprintf(b, `,"loss_pct":%s,"max_loss_pct":%s`, pct(w.Value), bound(w.Bound))
	case health.TopicBytes:
		fmt.Fprintf(b, `,"bytes_per_s":%s,"min_bytes_per_s":%s`, ms(w.Value), bound(w.Min))
		if !math.IsInf(w.Max, 1) {
			fmt.Fprintf(b, `,"max_bytes_per_s":%s`, bound(w.Max))
		}
	case health.CannotJudge:
		switch w.Metric {
		case "rate", "timer":
			fmt.Fprintf(b, `,"min_hz":%s`, bound(w.Min))
			if !math.IsInf(w.Max, 1) {
				fmt.Fprintf(b, `,"max_hz":%s`, bound(w.Max))
			}
		case "bytes":
			fmt.Fprintf(b, `,"min_bytes_per_s":%s`, bound(w.Min))
			if !math.IsInf(w.Max, 1) {
				fmt.Fprintf(b, `,"max_bytes_per_s":%s`, bound(w.Max))
			}
		case "latency":
			fmt.Fprintf(b, `,"max_latency_ms":%s`, bound(w.Bound))
		case "loss":
			fmt.Fprintf(b, `,"max_loss_pct":%s`, bound(w.Bound))
		default:
			fmt.Fprintf(b, `,"max_gap_ms":%s`, bound(w.Bound))
		}
		fmt.Fprintf(b, `,"reason":"%s"`, w.Reason)
	case health.Unmatched:
		b.WriteString(`,"reason":`)
		jsonString(b, w.Reason)
	case health.RecvLag:
		fmt.Fprintf(b, `,"hz":%s,"pub_hz":%s`, hz(w.Value), hz(w.Min))
	case health.RecvStarved:
		fmt.Fprintf(b, `,"received":0,"pub_hz":%s`, hz(w.Min))
	}
	if w.Cause != "" {
		b.WriteString(`,"cause":`)
		jsonString(b, w.Cause)
	}
	fmt.Fprintf(b, `,"for_s":%.1f}`, w.Age.Seconds())
}

func renderJSONL(w *window.Window, opt Options) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"ts_ns":"%d","window_s":%.3f,`, w.TsNs, w.Seconds)
	if w.Detail {
		b.WriteString(`"detail":true,`)
	}
	b.WriteString(`"topics":[`)
	first := true
	for i := range w.Topics {
		t := &w.Topics[i]
		l := decide(t, opt)
		if !l.topic && !l.pub && !l.recv && !l.pubGap && !l.recvGap {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(`{"topic":`)
		jsonString(&b, t.Name)
		if l.topic || l.pub {
			fmt.Fprintf(&b, `,"pub_inter_hz":%s,"pub_intra_hz":%s`, hz(t.PubInter), hz(t.PubIntra))
		}
		if l.recv {
			fmt.Fprintf(&b, `,"recv_inter_hz":%s,"recv_intra_hz":%s,"recv_endpoint_seen":true`, hz(t.RecvInter), hz(t.RecvIntra))
		}
		if l.pubGap {
			fmt.Fprintf(&b, `,"pub_max_dt_ms":%s`, ms(t.PubGap.MaxDtMs()))
		}
		if l.recvGap {
			fmt.Fprintf(&b, `,"recv_max_dt_ms":%s`, ms(t.RecvGap.MaxDtMs()))
		}
		b.WriteByte('}')
	}
	b.WriteString(`],"nodes":[`)
	for i, n := range w.Nodes {
		if i > 0 {
			b.WriteByte(',')
		}
		jsonString(&b, n)
	}
	b.WriteString(`],"warns":[`)
	for i := range opt.Warns {
		if i > 0 {
			b.WriteByte(',')
		}
		jsonWarn(&b, &opt.Warns[i])
	}
	b.WriteString(`],"procs":[`)
	for i, p := range w.Procs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"pid":%d,"state":"%s","exe":`, p.Pid, p.State())
		jsonString(&b, p.Exe)
		b.WriteString(`,"nodes":[`)
		for j, n := range p.Nodes {
			if j > 0 {
				b.WriteByte(',')
			}
			jsonString(&b, n)
		}
		b.WriteString("]")
		if p.Dropped > 0 {
			fmt.Fprintf(&b, `,"dropped_endpoints":%d`, p.Dropped)
		}
		b.WriteString("}")
	}
	// Timers: a new array (old readers ignore unknown keys).
	b.WriteString(`],"timers":[`)
	for i, tm := range w.Timers {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"node":`)
		jsonString(&b, tm.Node)
		fmt.Fprintf(&b, `,"timer":%d,"period_ms":%s,"hz":%s,"pid":%d`, tm.Ordinal, ms(tm.PeriodMs), hz(tm.Hz), tm.Pid)
		if tm.LateKnown {
			fmt.Fprintf(&b, `,"calls":%d,"late_mean_ms":%s,"late_p99_ms":%s,"late_max_ms":%s,"overruns":%d`,
				tm.Late.N, ms(tm.Late.MeanMs), ms(tm.Late.P99Ms), ms(tm.Late.MaxMs), tm.Overruns)
		}
		b.WriteByte('}')
	}
	// Callback timing (ABI 1.4): callbacks, node busy shares, threads.
	b.WriteString(`],"callbacks":[`)
	for i, c := range w.Callbacks {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"node":`)
		jsonString(&b, c.Node)
		fmt.Fprintf(&b, `,"kind":"%s","name":`, c.Kind)
		jsonString(&b, c.Name)
		if c.Kind == "timer" {
			fmt.Fprintf(&b, `,"timer":%d`, c.Ordinal)
		}
		if c.Function != "" {
			b.WriteString(`,"function":`)
			jsonString(&b, c.Function)
		}
		fmt.Fprintf(&b, `,"pid":%d`, c.Pid)
		if c.Measured {
			d := &c.Duration
			fmt.Fprintf(&b, `,"n":%d,"mean_ms":%s,"p50_ms":%s,"p90_ms":%s,"p99_ms":%s,"max_ms":%s,"unended":%d}`,
				d.N, ms(d.MeanMs), ms(d.P50Ms), ms(d.P90Ms), ms(d.P99Ms), ms(d.MaxMs), c.Unended)
		} else {
			fmt.Fprintf(&b, `,"not_measured":"%s"}`, c.Why)
		}
	}
	b.WriteString(`],"busy":[`)
	for i, n := range w.Busy {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"node":`)
		jsonString(&b, n.Node)
		if n.FromWait {
			fmt.Fprintf(&b, `,"pid":%d,"pct":%s,"source":"rcl_wait"}`, n.Pid, pct(n.Pct))
		} else if n.Measured {
			fmt.Fprintf(&b, `,"pid":%d,"pct":%s}`, n.Pid, pct(n.Pct))
		} else {
			fmt.Fprintf(&b, `,"pid":%d,"not_measured":true}`, n.Pid)
		}
	}
	b.WriteString(`],"threads":[`)
	for i, t := range w.Threads {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"pid":%d,"tid":%d,"name":`, t.Pid, t.Tid)
		jsonString(&b, t.Name)
		b.WriteString(`,"node":`)
		jsonString(&b, t.Node)
		fmt.Fprintf(&b, `,"busy_pct":%s,"callbacks":%d`, pct(t.BusyPct), t.Callbacks)
		if t.Waiter {
			fmt.Fprintf(&b, `,"outside_wait_pct":%s`, pct(t.OutsideWaitPct))
		}
		b.WriteByte('}')
	}
	b.WriteString(`],"calls":[`)
	for i := range w.Calls {
		c := &w.Calls[i]
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"service":`)
		jsonString(&b, c.Name)
		fmt.Fprintf(&b, `,"side":"%s","node":`, c.Side())
		jsonString(&b, c.Node)
		fmt.Fprintf(&b, `,"pid":%d,"alive":%t,"started":%d,"answered":%d,"hz":%s,"evicted":%d,"unmatched":%d`,
			c.Pid, c.Alive, c.Started, c.Answered, hz(c.Hz), c.Evicted, c.Unmatched)
		if c.Client {
			fmt.Fprintf(&b, `,"has_server":%t`, c.HasServer)
		}
		d := &c.Time
		fmt.Fprintf(&b, `,"n":%d,"sum_ms":%s,"mean_ms":%s,"p50_ms":%s,"p90_ms":%s,"p99_ms":%s,"max_ms":%s,"hist":[`,
			d.N, ms(d.SumMs), ms(d.MeanMs), ms(d.P50Ms), ms(d.P90Ms), ms(d.P99Ms), ms(d.MaxMs))
		for k, x := range c.Hist {
			if k > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"b":%d,"n":%d}`, x.B, x.N)
		}
		b.WriteString(`],"open_ms":[`)
		for k, a := range c.Open {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(ms(a))
		}
		b.WriteByte(']')
		if c.FailKnown { // ABI 1.8, servers; absent: not measured
			fmt.Fprintf(&b, `,"send_failed":%d`, c.SendFailed)
		}
		b.WriteByte('}')
	}
	b.WriteString(`],"unmatched":[`)
	for i, u := range w.Unmatched {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"topic":`)
		jsonString(&b, u.Topic)
		fmt.Fprintf(&b, `,"side":"%s","node":`, side(u.Pub))
		jsonString(&b, u.Node)
		fmt.Fprintf(&b, `,"pid":%d,"reason":`, u.Pid)
		jsonString(&b, u.Reason)
		fmt.Fprintf(&b, `,"level":"%s","silent":%t,"detail":`, level(u.Error), u.Silent)
		jsonString(&b, u.Detail)
		b.WriteString(`,"fix":`)
		jsonString(&b, u.Fix)
		b.WriteString(`,"peers":[`)
		for k, p := range u.Peers {
			if k > 0 {
				b.WriteByte(',')
			}
			jsonString(&b, p)
		}
		b.WriteString("]}")
	}
	b.WriteString("]")
	linksJSON(&b, w)
	// New arrays (old readers ignore unknown keys): receive latency, loss
	// (only for topics that lost messages), period statistics per side.
	// Live endpoints, as the EP lines of the text grammar.
	topicArray(&b, "endpoints", w, func(t *window.Topic, _ lines, item func() *strings.Builder) {
		eachLiveEndpoint(t, func(side string, e *window.EndpointRate) {
			ib := item()
			fmt.Fprintf(ib, `,"side":"%s","pid":%d,"node":`, side, e.Pid)
			jsonString(ib, e.Node)
			fmt.Fprintf(ib, `,"inter_hz":%s,"intra_hz":%s`, hz(e.Inter), hz(e.Intra))
			if e.LossJudged {
				fmt.Fprintf(ib, `,"loss_pct":%s`, pct(e.LossPct))
			}
			if e.PubHidden {
				ib.WriteString(`,"not_measured":true`)
			}
			if e.Bytes.How != "" {
				fmt.Fprintf(ib, `,"bytes":"%s","bytes_per_s":%s,"mean_bytes":%s`, e.Bytes.How, ms(e.Bytes.PerS), ms(e.Bytes.MeanSize))
			}
			ib.WriteByte('}')
		})
	}, opt)
	if hasBytes(w) { // only where processes measure bytes: other logs stay as they were
		bytesArray(&b, w, opt)
	}
	topicArray(&b, "latencies", w, func(t *window.Topic, l lines, item func() *strings.Builder) {
		if l.latency {
			g := &t.Latency
			fmt.Fprintf(item(), `,"n":%d,"mean_ms":%s,"p50_ms":%s,"p90_ms":%s,"p99_ms":%s,"max_ms":%s}`,
				g.N, ms(g.MeanMs), ms(g.P50Ms), ms(g.P90Ms), ms(g.P99Ms), ms(g.MaxMs))
		}
	}, opt)
	topicArray(&b, "losses", w, func(t *window.Topic, l lines, item func() *strings.Builder) {
		if l.loss {
			ib := item()
			fmt.Fprintf(ib, `,"published":%d,"judged":%d,"worst_pct":%s,"node":`, t.Published, t.Loss.Judged, pct(t.Loss.WorstPct))
			jsonString(ib, t.Loss.Node)
			fmt.Fprintf(ib, `,"pid":%d}`, t.Loss.Pid)
		}
	}, opt)
	topicArray(&b, "periods", w, func(t *window.Topic, l lines, item func() *strings.Builder) {
		for _, side := range []struct {
			on   bool
			name string
			g    *window.GapStats
		}{{l.pubGap, "pub", &t.PubGap}, {l.recvGap, "recv", &t.RecvGap}} {
			if side.on {
				g := side.g
				fmt.Fprintf(item(), `,"side":"%s","n":%d,"mean_ms":%s,"stddev_ms":%s,"p50_ms":%s,"p90_ms":%s,"p99_ms":%s,"silent_ms":%s}`,
					side.name, g.N, ms(g.MeanMs), ms(g.StddevMs), ms(g.P50Ms), ms(g.P90Ms), ms(g.P99Ms), ms(g.OpenMs))
			}
		}
	}, opt)
	b.WriteString("}\n")
	return []byte(b.String())
}

// topicArray writes `,"key":[…]` with the items each(topic) opens through
// item(), which writes the separator and `{"topic":<name>` first.
func topicArray(b *strings.Builder, key string, w *window.Window, each func(t *window.Topic, l lines, item func() *strings.Builder), opt Options) {
	fmt.Fprintf(b, `,"%s":[`, key)
	first := true
	for i := range w.Topics {
		t := &w.Topics[i]
		each(t, decide(t, opt), func() *strings.Builder {
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(`{"topic":`)
			jsonString(b, t.Name)
			return b
		})
	}
	b.WriteString("]")
}

func side(pub bool) string {
	if pub {
		return "pub"
	}
	return "sub"
}

func level(err bool) string {
	if err {
		return "error"
	}
	return "warning"
}

func bit(v bool) string {
	if v {
		return "1"
	}
	return "0"
}

// hasBytes reports a window with bytes measured on some topic.
func hasBytes(w *window.Window) bool {
	for i := range w.Topics {
		if w.Topics[i].PubBytes.How != "" || w.Topics[i].RecvBytes.How != "" {
			return true
		}
	}
	return false
}

// bytesArray writes the topics' sides' bytes, as the BYTES lines of the text grammar.
func bytesArray(b *strings.Builder, w *window.Window, opt Options) {
	topicArray(b, "bytes", w, func(t *window.Topic, _ lines, item func() *strings.Builder) {
		for _, side := range []struct {
			name string
			b    *window.Bytes
		}{{"pub", &t.PubBytes}, {"recv", &t.RecvBytes}} {
			if by := side.b; by.How != "" {
				fmt.Fprintf(item(), `,"side":"%s","how":"%s","per_s":%s,"mean":%s,"max":%d,"messages":%d}`,
					side.name, by.How, ms(by.PerS), ms(by.MeanSize), by.MaxSize, by.Messages)
			}
		}
	}, opt)
}
