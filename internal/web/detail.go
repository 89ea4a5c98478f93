package web

import (
	"math"
	"strconv"
	"strings"

	"ros2_pulse/internal/compat"
	"ros2_pulse/internal/window"
)

// Detail is what the page shows of one clicked entity in one window: every
// endpoint with its process, rates, loss, QoS and type, and the timing the
// probe measured where it did (a subscription's or timer's callback, a
// timer's lateness, a service's handling or round trip), and a topic's gaps
// and latency. It is computed when a page asks (GET /api/detail), not sent
// every window: most windows nobody looks.
type Detail struct {
	Key       string      `json:"key"`
	Endpoints []DetailRow `json:"endpoints"`
	// A topic's gaps between messages, published and received, and its
	// receive latency, merged over its endpoints (gap tracking on).
	PubGap  *Spread `json:"pub_gap,omitempty"`
	RecvGap *Spread `json:"recv_gap,omitempty"`
	Latency *Spread `json:"latency,omitempty"`
}

// DetailRow is one endpoint, timer or service side of the entity.
type DetailRow struct {
	Kind  string   `json:"kind"`  // pub, sub, timer, server, client
	Other string   `json:"other"` // the topic or service (a node's row), or the node (a topic's or service's row); a timer's period
	Pid   int      `json:"pid"`
	Exe   string   `json:"exe,omitempty"`
	Hz    *float64 `json:"hz,omitempty"` // nil: not measured on this distro
	// LossPct: the share of this machine's publishes the subscription missed (judged windows only).
	LossPct *float64 `json:"loss_pct,omitempty"`
	QoS     string   `json:"qos,omitempty"`
	Type    string   `json:"type,omitempty"`
	// Time: the callback's duration (subscription, timer), a call's
	// handling (server) or round trip (client); Late: a timer's lateness.
	Time *Spread `json:"time,omitempty"`
	Late *Spread `json:"late,omitempty"`
	Open int     `json:"open,omitempty"` // calls open at the window's end
	// Failed: a server's responses rcl_send_response refused in the window
	// (ABI 1.8): their client went away before the answer.
	Failed uint64 `json:"failed,omitempty"`
	Why    string `json:"why,omitempty"` // why the timing is not measured
	// A publisher's or subscription's bytes a second and mean message
	// size, with how they were measured (design note 0033); BytesHow
	// "none": messages whose size could not be read; "": bytes are off.
	BytesPerS *float64 `json:"bytes_per_s,omitempty"`
	MeanBytes *float64 `json:"mean_bytes,omitempty"`
	BytesHow  string   `json:"bytes_how,omitempty"`
}

// Spread is a duration's mean, p99 and max over the window, in ms.
type Spread struct {
	N      uint64  `json:"n"`
	MeanMs float64 `json:"mean_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
}

func spreadOf(d window.Durations) *Spread {
	if d.N == 0 {
		return nil
	}
	return &Spread{N: d.N, MeanMs: milli(d.MeanMs), P99Ms: milli(d.P99Ms), MaxMs: milli(d.MaxMs)}
}

func gapSpread(g window.GapStats) *Spread {
	if !g.HasData || g.N == 0 {
		return nil
	}
	return &Spread{N: g.N, MeanMs: milli(g.MeanMs), P99Ms: milli(g.P99Ms), MaxMs: milli(g.MaxDtMs())}
}

// timed gives the row its callback's time, or why it has none (c nil: no callback seen).
func (r *DetailRow) timed(c *window.Callback) {
	switch {
	case c == nil:
	case c.Measured:
		r.Time = spreadOf(c.Duration)
	default:
		r.Why = c.Why
	}
}

func hzPtr(v float64) *float64 { v = milli(v); return &v }

// DetailOf is the detail of key ("n:<node>@<pid>", "t:<topic>", "s:<service>") in w.
func DetailOf(w *window.Window, key string) Detail {
	d := Detail{Key: key, Endpoints: []DetailRow{}}
	exe := map[int]string{}
	for _, p := range w.Procs {
		exe[p.Pid] = p.Exe
	}
	callback := map[string]*window.Callback{} // by kind, pid, node, topic
	for i := range w.Callbacks {
		c := &w.Callbacks[i]
		callback[c.Kind+"\x00"+strconv.Itoa(c.Pid)+"\x00"+c.Node+"\x00"+c.Name] = c
	}
	row := func(kind, other string, topic string, e *window.EndpointRate) DetailRow {
		r := DetailRow{Kind: kind, Other: other, Pid: e.Pid, Exe: exe[e.Pid]}
		if !(kind == "pub" && e.PubHidden) && !(kind == "sub" && e.RecvHidden && e.Inter+e.Intra == 0) {
			r.Hz = hzPtr(e.Inter + e.Intra)
		}
		if e.LossJudged {
			v := milli(e.LossPct)
			r.LossPct = &v
		}
		if q := e.QoS; q != nil {
			r.QoS, r.Type = compat.Summary(q), q.Type
		}
		if b := e.Bytes; b.How != "" {
			r.BytesHow = b.How
			if b.Measured() {
				perS, mean := math.Round(b.PerS), milli(b.MeanSize)
				r.BytesPerS, r.MeanBytes = &perS, &mean
			}
		}
		if kind == "sub" {
			r.timed(callback["subscription\x00"+strconv.Itoa(e.Pid)+"\x00"+e.Node+"\x00"+topic])
		}
		return r
	}
	kind, name, _ := strings.Cut(key, ":")
	node, pid := "", 0
	if kind == "n" {
		i := strings.LastIndexByte(name, '@')
		if i < 0 {
			return d
		}
		node = name[:i]
		pid, _ = strconv.Atoi(name[i+1:])
	}
	for ti := range w.Topics {
		t := &w.Topics[ti]
		switch kind {
		case "t":
			if t.Name != name {
				continue
			}
			for i := range t.Pubs {
				d.Endpoints = append(d.Endpoints, row("pub", t.Pubs[i].Node, t.Name, &t.Pubs[i]))
			}
			for i := range t.Subs {
				d.Endpoints = append(d.Endpoints, row("sub", t.Subs[i].Node, t.Name, &t.Subs[i]))
			}
			d.PubGap, d.RecvGap, d.Latency = gapSpread(t.PubGap), gapSpread(t.RecvGap), gapSpread(t.Latency)
		case "n":
			for i := range t.Pubs {
				if e := &t.Pubs[i]; e.Node == node && e.Pid == pid {
					d.Endpoints = append(d.Endpoints, row("pub", t.Name, t.Name, e))
				}
			}
			for i := range t.Subs {
				if e := &t.Subs[i]; e.Node == node && e.Pid == pid {
					d.Endpoints = append(d.Endpoints, row("sub", t.Name, t.Name, e))
				}
			}
		}
	}
	if kind == "n" {
		for i := range w.Timers {
			tm := &w.Timers[i]
			if tm.Node != node || tm.Pid != pid {
				continue
			}
			r := DetailRow{Kind: "timer", Other: strconv.FormatFloat(tm.PeriodMs, 'f', -1, 64) + " ms", Pid: pid, Exe: exe[pid], Hz: hzPtr(tm.Hz)}
			if tm.LateKnown {
				r.Late = spreadOf(tm.Late)
			}
			for j := range w.Callbacks {
				if c := &w.Callbacks[j]; c.Kind == "timer" && c.Pid == pid && c.Node == node && c.Ordinal == tm.Ordinal {
					r.timed(c)
				}
			}
			d.Endpoints = append(d.Endpoints, r)
		}
	}
	for i := range w.Calls {
		c := &w.Calls[i]
		shown, _, _ := c.ShownAs()
		mine := kind == "n" && c.Node == node && c.Pid == pid || kind == "s" && (c.Name == name || shown == name)
		if !mine || c.Idle() {
			continue
		}
		other := c.Node
		if kind == "n" {
			other = c.Name
		}
		d.Endpoints = append(d.Endpoints, DetailRow{Kind: c.Side(), Other: other, Pid: c.Pid, Exe: exe[c.Pid], Hz: hzPtr(c.Hz), Time: spreadOf(c.Time), Open: len(c.Open),
			Failed: c.SendFailed})
	}
	return d
}
