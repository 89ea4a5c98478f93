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

// Render formats a window in f. The bytes may be a string's (the text's, not
// copied): read them, write them out or append to them, never write into them.
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

func hz(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

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
