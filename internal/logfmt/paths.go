package logfmt

import (
	"fmt"
	"strconv"
	"strings"

	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// Latency links and end-to-end paths (issue 47): LINK and PATH lines in
// text, "links" and "paths" arrays in jsonl. A path's hops are not written:
// a reader rebuilds them from the window's links (window.HopsOf).
//
//	LINK from to=… node=… pid=… alive=0|1 rclpy=0|1 n=… unaged=… age_sum_ms=… age_hist=b:n,… own_sum_ms=… own_hist=…
//	     [sampled=1 worst_sum_ms=… worst_hist=…]   (a timer's sampled link only: rule 3)
//	PATH name=… named=0|1 topics=a;b;… measured=0|1 missing=… n=… bound_ms=…
//	     best_mean_ms=… best_p50_ms=… best_p99_ms=… best_max_ms=… worst_mean_ms=… worst_p50_ms=… worst_p99_ms=… worst_max_ms=…

func writeLinkLines(ln *line, w *window.Window, _ Options) {
	b := ln.b
	for i := range w.Links {
		l := &w.Links[i]
		fmt.Fprintf(b, "LINK %s to=%s node=%s pid=%d alive=%s rclpy=%s n=%d unaged=%d age_sum_ms=%s age_hist=%s own_sum_ms=%s own_hist=%s",
			textName(l.From), textName(l.To), dash(l.Node), l.Pid, bit(l.Alive), bit(l.Rclpy), l.N, l.Unaged,
			ms(l.Age.SumMs), histText(l.AgeHist), ms(l.Own.SumMs), histText(l.OwnHist))
		if l.Sampled {
			fmt.Fprintf(b, " sampled=1 worst_sum_ms=%s worst_hist=%s", ms(l.Worst.SumMs), histText(l.WorstHist))
		}
		b.WriteByte('\n')
	}
}

func writePathLines(ln *line, w *window.Window, _ Options) {
	b := ln.b
	for i := range w.Paths {
		p := &w.Paths[i]
		fmt.Fprintf(b, "PATH name=%s named=%s topics=%s measured=%s missing=%s n=%d bound_ms=%s", textName(p.Name), bit(p.Named),
			textName(strings.Join(p.Topics, ";")), bit(p.Measured), dash(strings.Replace(p.Missing, " -> ", "->", 1)), p.N, ms(p.MaxMs))
		for _, l := range []struct {
			side string
			v    *window.Latency
		}{{"best", &p.Best}, {"worst", &p.Worst}} {
			fmt.Fprintf(b, " %s_mean_ms=%s %s_p50_ms=%s %s_p99_ms=%s %s_max_ms=%s", l.side, ms(l.v.MeanMs), l.side, ms(l.v.P50Ms),
				l.side, ms(l.v.P99Ms), l.side, ms(l.v.MaxMs))
		}
		b.WriteByte('\n')
	}
}

// linkLine reads a LINK line's fields after its kind.
func (b *builder) linkLine(f []string) bool {
	if len(f) < 2 {
		return false
	}
	from, ok := unescapeName(f[0])
	kv, ok2 := keyvals(f[1:], "to", "node", "pid", "alive", "rclpy", "n", "unaged", "age_sum_ms", "age_hist", "own_sum_ms", "own_hist")
	if !ok || !ok2 {
		return false
	}
	to, ok := unescapeName(kv["to"])
	node, ok2 := unescapeName(kv["node"])
	sums, ok3 := numbers(kv, "age_sum_ms", "own_sum_ms")
	pid, err1 := strconv.Atoi(kv["pid"])
	n, err2 := strconv.ParseUint(kv["n"], 10, 64)
	unaged, err3 := strconv.ParseUint(kv["unaged"], 10, 64)
	age, ok4 := readHist(kv["age_hist"])
	own, ok5 := readHist(kv["own_hist"])
	if !ok || !ok2 || !ok3 || !ok4 || !ok5 || err1 != nil || err2 != nil || err3 != nil || unaged > n {
		return false
	}
	l := window.Link{Pid: pid, Node: undash(node), From: from, To: to, Alive: kv["alive"] == "1",
		Rclpy: kv["rclpy"] == "1", N: n, Unaged: unaged, AgeHist: age, OwnHist: own,
		Age: window.HistStats(age, sums[0]), Own: window.HistStats(own, sums[1])}
	if kv["sampled"] == "1" {
		sum, ok := number(kv["worst_sum_ms"])
		worst, ok2 := readHist(kv["worst_hist"])
		if !ok || !ok2 || sum < 0 {
			return false
		}
		l.Sampled, l.WorstHist, l.Worst = true, worst, window.HistStats(worst, sum)
	}
	b.w.Links = append(b.w.Links, l)
	return true
}

// pathLine reads a PATH line's fields after its kind.
func (b *builder) pathLine(f []string) bool {
	kv, ok := keyvals(f, "name", "named", "topics", "measured", "missing", "n", "bound_ms")
	if !ok {
		return false
	}
	name, ok1 := unescapeName(kv["name"])
	topics, ok2 := unescapeName(kv["topics"])
	missing, ok3 := unescapeName(kv["missing"])
	v, ok4 := numbers(kv, "bound_ms", "best_mean_ms", "best_p50_ms", "best_p99_ms", "best_max_ms",
		"worst_mean_ms", "worst_p50_ms", "worst_p99_ms", "worst_max_ms")
	n, err := strconv.ParseUint(kv["n"], 10, 64)
	if !ok1 || !ok2 || !ok3 || !ok4 || err != nil {
		return false
	}
	p := window.Path{Topics: strings.Split(topics, ";"), Measured: kv["measured"] == "1", N: n, MaxMs: v[0],
		Best:  window.Latency{MeanMs: v[1], P50Ms: v[2], P99Ms: v[3], MaxMs: v[4]},
		Worst: window.Latency{MeanMs: v[5], P50Ms: v[6], P99Ms: v[7], MaxMs: v[8]}}
	if m := undash(missing); m != "" {
		p.Missing = strings.Replace(m, "->", " -> ", 1)
	}
	return b.addPath(p, name, kv["named"] == "1")
}

// addPath completes a path read back (its hops are rebuilt from the
// window's links at the end: pathHops).
func (b *builder) addPath(p window.Path, name string, named bool) bool {
	if len(p.Topics) < 2 {
		return false
	}
	for _, t := range p.Topics {
		if !strings.HasPrefix(t, "/") {
			return false
		}
	}
	if name == "" {
		return false
	}
	p.Name, p.Named = name, named
	b.w.Paths = append(b.w.Paths, p)
	return true
}

// pathHops gives every path read back its hops from the window's links.
func pathHops(w *window.Window) {
	for i := range w.Paths {
		w.Paths[i].Hops = window.HopsOf(w.Paths[i].Topics, w.Links)
	}
}

// readHist reads "b:n,b:n" ("-": none).
func readHist(h string) ([]window.Bucket, bool) {
	if h == "-" {
		return nil, true
	}
	var out []window.Bucket
	for _, part := range strings.Split(h, ",") {
		bs, ns, found := strings.Cut(part, ":")
		bk, err1 := strconv.Atoi(bs)
		n, err2 := strconv.ParseUint(ns, 10, 64)
		if !found || err1 != nil || err2 != nil || bk < 0 || bk >= segment.TimeBuckets {
			return nil, false
		}
		out = append(out, window.Bucket{B: bk, N: n})
	}
	return out, true
}

// linksJSON writes the "links" and "paths" arrays, when the window has either.
func linksJSON(b *strings.Builder, w *window.Window) {
	if len(w.Links)+len(w.Paths) == 0 {
		return // links off (the default): not a byte more a window
	}
	b.WriteString(`,"links":[`)
	for i := range w.Links {
		l := &w.Links[i]
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"from":`)
		jsonString(b, l.From)
		b.WriteString(`,"to":`)
		jsonString(b, l.To)
		b.WriteString(`,"node":`)
		jsonString(b, l.Node)
		fmt.Fprintf(b, `,"pid":%d,"alive":%t,"rclpy":%t,"n":%d,"unaged":%d,"age_sum_ms":%s,"age_p50_ms":%s,"age_p99_ms":%s,"age_hist":`,
			l.Pid, l.Alive, l.Rclpy, l.N, l.Unaged, ms(l.Age.SumMs), ms(l.Age.P50Ms), ms(l.Age.P99Ms))
		histJSON(b, l.AgeHist)
		fmt.Fprintf(b, `,"own_sum_ms":%s,"own_mean_ms":%s,"own_hist":`, ms(l.Own.SumMs), ms(l.Own.MeanMs))
		histJSON(b, l.OwnHist)
		if l.Sampled {
			fmt.Fprintf(b, `,"sampled":true,"worst_sum_ms":%s,"worst_p99_ms":%s,"worst_hist":`, ms(l.Worst.SumMs), ms(l.Worst.P99Ms))
			histJSON(b, l.WorstHist)
		}
		b.WriteByte('}')
	}
	b.WriteString(`],"paths":[`)
	for i := range w.Paths {
		p := &w.Paths[i]
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":`)
		jsonString(b, p.Name)
		fmt.Fprintf(b, `,"named":%t,"topics":[`, p.Named)
		for k, t := range p.Topics {
			if k > 0 {
				b.WriteByte(',')
			}
			jsonString(b, t)
		}
		fmt.Fprintf(b, `],"measured":%t`, p.Measured)
		if p.Missing != "" {
			b.WriteString(`,"missing":`)
			jsonString(b, p.Missing)
		}
		fmt.Fprintf(b, `,"n":%d,"bound_ms":%s`, p.N, ms(p.MaxMs))
		for _, l := range []struct {
			side string
			v    *window.Latency
		}{{"best", &p.Best}, {"worst", &p.Worst}} {
			fmt.Fprintf(b, `,"%s":{"mean_ms":%s,"p50_ms":%s,"p99_ms":%s,"max_ms":%s}`, l.side, ms(l.v.MeanMs), ms(l.v.P50Ms), ms(l.v.P99Ms), ms(l.v.MaxMs))
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
}

func histJSON(b *strings.Builder, h []window.Bucket) {
	b.WriteByte('[')
	for k, x := range h {
		if k > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, `{"b":%d,"n":%d}`, x.B, x.N)
	}
	b.WriteByte(']')
}

type jsonLink struct {
	From     string          `json:"from"`
	To       string          `json:"to"`
	Node     string          `json:"node"`
	Pid      int             `json:"pid"`
	Alive    bool            `json:"alive"`
	Rclpy    bool            `json:"rclpy"`
	N        uint64          `json:"n"`
	Unaged   uint64          `json:"unaged"`
	AgeSumMs float64         `json:"age_sum_ms"`
	AgeHist  []window.Bucket `json:"age_hist"`
	OwnSumMs float64         `json:"own_sum_ms"`
	OwnHist  []window.Bucket `json:"own_hist"`
	// A timer's sampled link (rule 3): the worst case's ages.
	Sampled    bool            `json:"sampled"`
	WorstSumMs float64         `json:"worst_sum_ms"`
	WorstHist  []window.Bucket `json:"worst_hist"`
}

type jsonLatency struct {
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
}

type jsonPath struct {
	Name     string      `json:"name"`
	Named    bool        `json:"named"`
	Topics   []string    `json:"topics"`
	Measured bool        `json:"measured"`
	Missing  string      `json:"missing"`
	N        uint64      `json:"n"`
	BoundMs  float64     `json:"bound_ms"`
	Best     jsonLatency `json:"best"`
	Worst    jsonLatency `json:"worst"`
}

// jsonLinks reads a jsonl window's links and paths.
func (b *builder) jsonLinks(links []jsonLink, paths []jsonPath) bool {
	for _, l := range links {
		if l.From == "" || l.To == "" || l.Unaged > l.N || l.AgeSumMs < 0 || l.OwnSumMs < 0 || l.WorstSumMs < 0 {
			return false
		}
		for _, h := range [][]window.Bucket{l.AgeHist, l.OwnHist, l.WorstHist} {
			for _, x := range h {
				if x.B < 0 || x.B >= segment.TimeBuckets {
					return false
				}
			}
		}
		b.w.Links = append(b.w.Links, window.Link{Pid: l.Pid, Node: l.Node, From: l.From, To: l.To, Alive: l.Alive, Rclpy: l.Rclpy,
			N: l.N, Unaged: l.Unaged, AgeHist: l.AgeHist, OwnHist: l.OwnHist,
			Age: window.HistStats(l.AgeHist, l.AgeSumMs), Own: window.HistStats(l.OwnHist, l.OwnSumMs)})
		if l.Sampled {
			wl := &b.w.Links[len(b.w.Links)-1]
			wl.Sampled, wl.WorstHist, wl.Worst = true, l.WorstHist, window.HistStats(l.WorstHist, l.WorstSumMs)
		}
	}
	for _, p := range paths {
		for _, v := range []float64{p.BoundMs, p.Best.MeanMs, p.Best.P50Ms, p.Best.P99Ms, p.Best.MaxMs, p.Worst.MeanMs, p.Worst.P50Ms, p.Worst.P99Ms, p.Worst.MaxMs} {
			if v < 0 {
				return false
			}
		}
		wp := window.Path{Topics: p.Topics, Measured: p.Measured, Missing: p.Missing, N: p.N, MaxMs: p.BoundMs,
			Best: window.Latency(p.Best), Worst: window.Latency(p.Worst)}
		if !b.addPath(wp, p.Name, p.Named) {
			return false
		}
	}
	return true
}
