package logfmt

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"ros2_pulse/internal/window"
)

// endpointLines writes an EP line (a new line kind) per live publisher and
// subscription of the topic: what the evaluator judges live (which sides have
// live endpoints, each subscription's rate and loss), so that a recording is
// judged offline exactly as it was live.
func writeEndpointLines(r *topicText) {
	ln, name := r.ln, r.name
	eachLiveEndpoint(r.t, func(side string, e *window.EndpointRate) {
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

// bytesOf writes a topic side's bytes (design note 0033), when its processes measure them.
func bytesOf(side string) func(r *topicText) {
	return func(r *topicText) {
		b := &r.t.PubBytes
		if side == "recv" {
			b = &r.t.RecvBytes
		}
		if b.How != "" {
			r.ln.s("BYTES ").s(r.name).s(" ").s(side).s(" how=").s(b.How).s(" per_s=").ms(b.PerS).s(" mean=").ms(b.MeanSize).
				s(" max=").u(uint64(b.MaxSize)).s(" messages=").u(b.Messages).end()
		}
	}
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

func renderText(w *window.Window, opt Options) []byte {
	var b strings.Builder
	b.Grow(textSize(w)) // once: growing by doubling copied a robot's window ~20 times
	ln := &line{b: &b}
	ln.s("# ts_ns=").s(strconv.FormatInt(w.TsNs, 10)).s(" window_s=").ms(w.Seconds)
	if w.Detail {
		b.WriteString(" detail=1")
	}
	b.WriteByte('\n')
	// One topicText for every topic: the rows are called through function
	// values, so it escapes to the heap, once a window rather than once a topic.
	var r topicText
	for i := range w.Topics { // the kinds and their order: kinds.go
		r = topicText{ln: ln, t: &w.Topics[i], name: textName(w.Topics[i].Name), l: decide(&w.Topics[i], opt)}
		for _, k := range topicKinds {
			k.topic(&r)
		}
	}
	for _, k := range windowKinds {
		if k.win != nil {
			k.win(ln, w, opt)
		}
	}
	b.WriteString("\n")
	return builderBytes(&b)
}

// builderBytes is what b built, not a copy: at robot size a copy was ~650 kB
// a window of text, allocated afresh. Render's callers never write into it.
func builderBytes(b *strings.Builder) []byte {
	s := b.String()
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

func writeTopicLine(r *topicText) {
	if r.l.topic {
		r.ln.s("TOPIC ").s(r.name).s(" ").hz(r.t.PubInter).end()
	}
}

func writePubLine(r *topicText) {
	if r.l.pub {
		r.ln.s("PUB ").s(r.name).s(" inter=").hz(r.t.PubInter).s(" intra=").hz(r.t.PubIntra).end()
	}
}

func writeRecvLine(r *topicText) {
	if r.l.recv {
		r.ln.s("RECV ").s(r.name).s(" inter=").hz(r.t.RecvInter).s(" intra=").hz(r.t.RecvIntra).end()
	}
}

// jitterOf writes a side's longest gap between messages.
func jitterOf(side string) func(r *topicText) {
	return func(r *topicText) {
		if g, ok := r.gap(side); ok {
			fmt.Fprintf(r.ln.b, "JITTER %s %s max_dt_ms=%s\n", r.name, side, ms(g.MaxDtMs()))
		}
	}
}

// periodOf writes a side's period statistics (a new line kind).
func periodOf(side string) func(r *topicText) {
	return func(r *topicText) {
		if g, ok := r.gap(side); ok {
			fmt.Fprintf(r.ln.b, "PERIOD %s %s n=%d mean_ms=%s stddev_ms=%s p50_ms=%s p90_ms=%s p99_ms=%s silent_ms=%s\n",
				r.name, side, g.N, ms(g.MeanMs), ms(g.StddevMs), ms(g.P50Ms), ms(g.P90Ms), ms(g.P99Ms), ms(g.OpenMs))
		}
	}
}

// gap is a side's gap statistics, when this window writes them.
func (r *topicText) gap(side string) (*window.GapStats, bool) {
	if side == "pub" {
		return &r.t.PubGap, r.l.pubGap
	}
	return &r.t.RecvGap, r.l.recvGap
}

func writeLatencyLine(r *topicText) {
	if r.l.latency {
		g := &r.t.Latency
		fmt.Fprintf(r.ln.b, "LATENCY %s n=%d mean_ms=%s p50_ms=%s p90_ms=%s p99_ms=%s max_ms=%s\n",
			r.name, g.N, ms(g.MeanMs), ms(g.P50Ms), ms(g.P90Ms), ms(g.P99Ms), ms(g.MaxMs))
	}
}

func writeLossLine(r *topicText) {
	if r.l.loss {
		t := r.t
		fmt.Fprintf(r.ln.b, "LOSS %s published=%d judged=%d worst_pct=%s node=%s pid=%d\n",
			r.name, t.Published, t.Loss.Judged, pct(t.Loss.WorstPct), dash(t.Loss.Node), t.Loss.Pid)
	}
}

func writeTimerLines(ln *line, w *window.Window, _ Options) {
	for _, tm := range w.Timers {
		ln.s("TIMER ").s(textName(tm.Node)).s(" timer=").i(tm.Ordinal).s(" period_ms=").ms(tm.PeriodMs).s(" hz=").hz(tm.Hz).s(" pid=").i(tm.Pid)
		if tm.LateKnown {
			ln.s(" calls=").u(tm.Late.N).s(" late_mean_ms=").ms(tm.Late.MeanMs).s(" late_p99_ms=").ms(tm.Late.P99Ms).
				s(" late_max_ms=").ms(tm.Late.MaxMs).s(" overruns=").u(tm.Overruns)
		}
		ln.end()
	}
}

func writeCallbackLines(ln *line, w *window.Window, _ Options) {
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
}

func writeBusyLines(ln *line, w *window.Window, _ Options) {
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
}

func writeThreadLines(ln *line, w *window.Window, _ Options) {
	for _, t := range w.Threads {
		ln.s("THREAD pid=").i(t.Pid).s(" tid=").i(t.Tid).s(" name=").s(dash(t.Name)).s(" node=").s(dash(t.Node)).
			s(" busy_pct=").ms(t.BusyPct).s(" callbacks=").u(t.Callbacks)
		if t.Waiter {
			ln.s(" outside_wait_pct=").ms(t.OutsideWaitPct)
		}
		ln.end()
	}
}

func writeCallLines(ln *line, w *window.Window, _ Options) {
	b := ln.b
	for i := range w.Calls {
		c := &w.Calls[i]
		fmt.Fprintf(b, "CALL %s side=%s node=%s pid=%d alive=%s started=%d answered=%d hz=%s evicted=%d unmatched=%d",
			textName(c.Name), c.Side(), dash(c.Node), c.Pid, bit(c.Alive), c.Started, c.Answered, hz(c.Hz), c.Evicted, c.Unmatched)
		if c.Client {
			fmt.Fprintf(b, " has_server=%s", bit(c.HasServer))
		}
		d := &c.Time
		fmt.Fprintf(b, " n=%d sum_ms=%s mean_ms=%s p50_ms=%s p90_ms=%s p99_ms=%s max_ms=%s hist=%s open=%s",
			d.N, ms(d.SumMs), ms(d.MeanMs), ms(d.P50Ms), ms(d.P90Ms), ms(d.P99Ms), ms(d.MaxMs), histText(c.Hist), openText(c.Open))
		if c.FailKnown { // ABI 1.8, servers: last, so readers from before it still parse the line
			fmt.Fprintf(b, " send_failed=%d", c.SendFailed)
		}
		b.WriteByte('\n')
	}
}

func writeUnmatchedLines(ln *line, w *window.Window, _ Options) {
	for _, u := range w.Unmatched {
		fmt.Fprintf(ln.b, "UNMATCHED %s side=%s node=%s pid=%d reason=%s level=%s silent=%s detail=%s fix=%s peers=%s\n",
			textName(u.Topic), side(u.Pub), dash(u.Node), u.Pid, dash(u.Reason), level(u.Error), bit(u.Silent),
			dash(u.Detail), dash(u.Fix), dash(strings.Join(u.Peers, ";")))
	}
}

func writeNodeLines(ln *line, w *window.Window, _ Options) {
	for _, n := range w.Nodes {
		ln.s("NODE ").s(textName(n)).end()
	}
}

func writeProcLines(ln *line, w *window.Window, _ Options) {
	for _, p := range w.Procs {
		fmt.Fprintf(ln.b, "PROC pid=%d state=%s nodes=%s exe=%s\n", p.Pid, p.State(), textName(p.NodeNames()), textName(p.Exe))
	}
}

// writeFullLines: a full segment, in every window: its entities beyond the table are not counted.
func writeFullLines(ln *line, w *window.Window, _ Options) {
	for _, p := range w.Procs {
		if p.Dropped > 0 {
			fmt.Fprintf(ln.b, "FULL pid=%d dropped_endpoints=%d\n", p.Pid, p.Dropped)
		}
	}
}

func writeWarnLines(ln *line, _ *window.Window, opt Options) {
	for _, line := range WarnLines(opt.Warns) {
		ln.b.WriteString(line + "\n")
	}
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
