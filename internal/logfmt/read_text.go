package logfmt

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"ros2_pulse/internal/window"
)

// parseHeader reads "# ts_ns=N window_s=S", and " detail=1" on a detail window.
func parseHeader(s string) (*window.Window, bool) {
	f := strings.Fields(strings.TrimPrefix(s, "#"))
	detail := len(f) == 3 && f[2] == "detail=1"
	if len(f) != 2 && !detail {
		return nil, false
	}
	kv, ok := keyvals(f[:2], "ts_ns", "window_s")
	if !ok {
		return nil, false
	}
	ts, err := strconv.ParseInt(kv["ts_ns"], 10, 64)
	secs, ok := number(kv["window_s"])
	if err != nil || !ok {
		return nil, false
	}
	return &window.Window{TsNs: ts, Seconds: secs, Detail: detail}, true
}

// number parses a finite, non-negative decimal (logs never hold anything else).
func number(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, false
	}
	return v, true
}

// keyvals reads k=v fields and requires every key in want (others are ignored).
func keyvals(fields []string, want ...string) (map[string]string, bool) {
	kv := make(map[string]string, len(fields))
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, false
		}
		kv[k] = v
	}
	for _, k := range want {
		if _, ok := kv[k]; !ok {
			return nil, false
		}
	}
	return kv, true
}

// numbers reads the wanted keys of kv as numbers.
func numbers(kv map[string]string, want ...string) ([]float64, bool) {
	out := make([]float64, len(want))
	for i, k := range want {
		v, ok := number(kv[k])
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// unescapeName reverses textName: \xNN is one byte.
func unescapeName(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, s != ""
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+4 > len(s) || s[i+1] != 'x' {
			return "", false
		}
		v, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(v))
		i += 3
	}
	return b.String(), true
}

// builder collects one window's lines.
type builder struct {
	w      *window.Window
	topics map[string]*window.Topic
	eps    map[string]bool // topics with EP lines: their live endpoints are known, not rebuilt
}

func newBuilder(w *window.Window) *builder {
	return &builder{w: w, topics: map[string]*window.Topic{}, eps: map[string]bool{}}
}

// endpoint adds a live endpoint read from an EP line or a jsonl endpoints item.
func (b *builder) endpoint(topic, side string, e window.EndpointRate) bool {
	t := b.topic(topic)
	e.Alive = true
	switch side {
	case "pub":
		t.Pubs = append(t.Pubs, e)
	case "recv":
		t.Subs = append(t.Subs, e)
	default:
		return false
	}
	b.eps[topic] = true
	return true
}

// loss records a topic's worst subscription loss: a log writes it only when
// something was lost, and only with a publisher on the machine.
func (b *builder) loss(name string, published uint64, l window.Loss) {
	t := b.topic(name)
	t.Published, t.Loss = published, l
	t.PubCount, t.SubCount = max(t.PubCount, 1), max(t.SubCount, 1)
}

func (b *builder) topic(name string) *window.Topic {
	t := b.topics[name]
	if t == nil {
		t = &window.Topic{Name: name}
		b.topics[name] = t
	}
	return t
}

// window finishes the window: topics sorted, live endpoints inferred.
func (b *builder) window() *window.Window {
	w := b.w
	pathHops(w)
	w.Topics = make([]window.Topic, 0, len(b.topics))
	for name, t := range b.topics {
		t.PubAny = math.Max(t.PubInter, t.PubIntra)
		if b.eps[name] { // the writer listed the live endpoints: take them as they were
			t.PubCount, t.SubCount, t.PubAny = len(t.Pubs), len(t.Subs), 0
			for _, p := range t.Pubs {
				t.PubAny += math.Max(p.Inter, p.Intra)
				t.PubHidden = t.PubHidden || p.PubHidden
			}
		}
		w.Topics = append(w.Topics, *t)
	}
	sort.Slice(w.Topics, func(i, j int) bool { return w.Topics[i].Name < w.Topics[j].Name })
	sort.SliceStable(w.Timers, func(i, j int) bool { return w.Timers[i].Node < w.Timers[j].Node })
	for i := range w.Timers { // a timer's callbacks are timed when its CALLBACK line says so
		tm := &w.Timers[i]
		for _, c := range w.Callbacks {
			if c.Kind == "timer" && c.Pid == tm.Pid && c.Node == tm.Node && c.Ordinal == tm.Ordinal {
				tm.Timed, tm.Why = c.Measured, c.Why
			}
		}
	}
	return w
}

func (b *builder) gap(name, side string) *window.GapStats {
	t := b.topic(name)
	switch side {
	case "pub":
		t.PubCount = max(t.PubCount, 1)
		return &t.PubGap
	case "recv":
		t.SubCount = max(t.SubCount, 1)
		return &t.RecvGap
	}
	return nil
}

// The readers of a topic's lines and of the window's named lines: f is the
// line's fields after its kind and name (kinds.go).

func (b *builder) endpointLine(name string, f []string) bool {
	if len(f) < 1 {
		return false
	}
	kv, ok := keyvals(f[1:], "pid", "node", "inter", "intra")
	rates, ok2 := numbers(kv, "inter", "intra")
	pid, err := strconv.Atoi(kv["pid"])
	if !ok || !ok2 || err != nil {
		return false
	}
	e := window.EndpointRate{Pid: pid, Inter: rates[0], Intra: rates[1], PubHidden: kv["not_measured"] == "1"}
	if node, ok := unescapeName(kv["node"]); ok && node != "-" {
		e.Node = node
	}
	if v, ok := number(kv["loss_pct"]); ok {
		e.LossPct, e.LossJudged = v, true
	}
	if how, ok := kv["bytes"]; ok {
		v, ok := numbers(kv, "bytes_per_s", "mean_bytes")
		if !ok || !knownBytes(how) || v[0] < 0 || v[1] < 0 {
			return false
		}
		e.Bytes = window.Bytes{How: how, PerS: v[0], MeanSize: v[1]}
	}
	return b.endpoint(name, f[0], e)
}

func (b *builder) bytesLine(name string, f []string) bool {
	if len(f) < 2 || f[0] != "pub" && f[0] != "recv" {
		return false
	}
	kv, ok := keyvals(f[1:], "how", "per_s", "mean", "max", "messages")
	if !ok || !knownBytes(kv["how"]) {
		return false
	}
	v, ok := numbers(kv, "per_s", "mean")
	maxSize, err1 := strconv.ParseUint(kv["max"], 10, 32)
	n, err2 := strconv.ParseUint(kv["messages"], 10, 64)
	if !ok || err1 != nil || err2 != nil || v[0] < 0 || v[1] < 0 {
		return false
	}
	t := b.topic(name)
	side := &t.PubBytes
	if f[0] == "recv" {
		side = &t.RecvBytes
	}
	*side = window.Bytes{How: kv["how"], PerS: v[0], MeanSize: v[1], MaxSize: uint32(maxSize), Messages: n,
		Total: v[1] * float64(n)}
	return true
}

func (b *builder) nodeLine(name string, f []string) bool {
	if len(f) != 0 {
		return false
	}
	b.w.Nodes = append(b.w.Nodes, name)
	return true
}

func (b *builder) topicLine(name string, f []string) bool {
	if len(f) != 1 {
		return false
	}
	v, ok := number(f[0])
	if !ok {
		return false
	}
	t := b.topic(name)
	t.PubInter, t.PubCount, t.PubInterSeen = v, max(t.PubCount, 1), true
	return true
}

// rates reads a PUB or RECV line's "inter=… intra=…".
func rates(f []string) ([]float64, bool) {
	kv, ok := keyvals(f, "inter", "intra")
	if !ok || len(f) != 2 {
		return nil, false
	}
	return numbers(kv, "inter", "intra")
}

func (b *builder) pubLine(name string, f []string) bool {
	v, ok := rates(f)
	if !ok {
		return false
	}
	t := b.topic(name)
	t.PubInter, t.PubIntra, t.PubCount = v[0], v[1], max(t.PubCount, 1)
	t.PubInterSeen, t.PubIntraSeen = t.PubInterSeen || v[0] > 0, true
	return true
}

func (b *builder) recvLine(name string, f []string) bool {
	v, ok := rates(f)
	if !ok {
		return false
	}
	t := b.topic(name)
	t.RecvInter, t.RecvIntra, t.SubCount, t.RecvSeen = v[0], v[1], max(t.SubCount, 1), true
	return true
}

func (b *builder) jitterLine(name string, f []string) bool {
	if len(f) != 2 {
		return false
	}
	kv, ok := keyvals(f[1:], "max_dt_ms")
	g := b.gap(name, f[0])
	if !ok || g == nil {
		return false
	}
	v, ok := number(kv["max_dt_ms"])
	if !ok {
		return false
	}
	g.HasData, g.MaxMs = true, v
	return true
}

func (b *builder) periodLine(name string, f []string) bool {
	if len(f) < 1 {
		return false
	}
	kv, ok := keyvals(f[1:], "n", "mean_ms", "stddev_ms", "p50_ms", "p90_ms", "p99_ms", "silent_ms")
	g := b.gap(name, f[0])
	if !ok || g == nil {
		return false
	}
	n, err := strconv.ParseUint(kv["n"], 10, 64)
	v, ok := numbers(kv, "mean_ms", "stddev_ms", "p50_ms", "p90_ms", "p99_ms", "silent_ms")
	if err != nil || !ok {
		return false
	}
	g.HasData, g.N = true, n
	g.MeanMs, g.StddevMs, g.P50Ms, g.P90Ms, g.P99Ms, g.OpenMs = v[0], v[1], v[2], v[3], v[4], v[5]
	return true
}

func (b *builder) latencyLine(name string, f []string) bool {
	kv, ok := keyvals(f, "n", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms")
	if !ok {
		return false
	}
	n, err := strconv.ParseUint(kv["n"], 10, 64)
	v, ok := numbers(kv, "mean_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms")
	if err != nil || !ok {
		return false
	}
	t := b.topic(name)
	t.SubCount = max(t.SubCount, 1)
	t.Latency = window.GapStats{HasData: true, N: n, MeanMs: v[0], P50Ms: v[1], P90Ms: v[2], P99Ms: v[3], MaxMs: v[4]}
	return true
}

func (b *builder) lossLine(name string, f []string) bool {
	kv, ok := keyvals(f, "published", "judged", "worst_pct", "node", "pid")
	if !ok {
		return false
	}
	published, err1 := strconv.ParseUint(kv["published"], 10, 64)
	judged, err2 := strconv.Atoi(kv["judged"])
	pid, err3 := strconv.Atoi(kv["pid"])
	worst, ok := number(kv["worst_pct"])
	node, nameOK := unescapeName(kv["node"])
	if err1 != nil || err2 != nil || err3 != nil || !ok || !nameOK || judged < 1 || pid < 0 || worst > 100 {
		return false
	}
	b.loss(name, published, window.Loss{Judged: judged, WorstPct: worst, Node: undash(node), Pid: pid})
	return true
}

func undash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// knownBytes reports a window.Bytes.How a record may carry.
func knownBytes(how string) bool {
	return how == window.BytesExact || how == window.BytesSampled || how == window.BytesNone
}
