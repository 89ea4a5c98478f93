package logfmt

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/window"
)

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
	return builderBytes(&b)
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
