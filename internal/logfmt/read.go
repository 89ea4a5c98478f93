package logfmt

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"ros2_pulse/internal/zlog"
	"sort"
	"strconv"
	"strings"

	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// MaxLine is the longest line Read accepts; a longer one is skipped as
// malformed (a machine-wide jsonl window of 1000 topics is ~150 KiB).
const MaxLine = 4 << 20

// ReadResult is a parsed log.
type ReadResult struct {
	Windows   []*window.Window // in file order
	Malformed int              // lines that could not be read (skipped)
	FirstBad  int              // line number of the first of them, 0 if none
}

// Read parses a log written by pulse or by upstream ros2_pulse: text blocks,
// JSON Lines, or both mixed, sniffed per line as upstream's pulse-check does
// (a line starting with '{' is a jsonl window). Malformed lines are skipped
// and counted; unknown line kinds and unknown keys are ignored, because
// writers add kinds and keys, never fields. Only I/O errors fail.
//
// What a log cannot carry is rebuilt as follows: a topic with a TOPIC or
// PUB line (or pub gap data) has a live publisher, one with a RECV line (or
// recv gap data) a live subscription; the publish "any transport" rate is
// max(inter, intra), exact for one publisher per topic and a lower bound for
// several; per-subscription rates are not in logs.
func Read(r io.Reader) (*ReadResult, error) {
	res := &ReadResult{}
	br := bufio.NewReaderSize(r, 64<<10)
	z, err := zlog.Sniff(br) // a .zst recording
	if err != nil {
		return res, err
	}
	if z != nil {
		defer z.Close()
		br = bufio.NewReaderSize(z, 64<<10)
	}
	var cur *builder
	run := ""     // the RUN line the windows that follow belong to
	detail := 0.0 // that run's detail period (s): its other windows are lean
	add := func(w *window.Window) {
		w.Run = run
		w.Lean = detail > 0 && !w.Detail
		res.Windows = append(res.Windows, w)
	}
	finish := func() {
		if cur != nil {
			add(cur.window())
			cur = nil
		}
	}
	bad := func(lineno int) {
		res.Malformed++
		if res.FirstBad == 0 {
			res.FirstBad = lineno
		}
	}
	for lineno := 1; ; lineno++ {
		line, tooLong, err := readLine(br)
		if err == io.EOF && line == nil {
			break
		}
		if err != nil && err != io.EOF {
			return res, err
		}
		switch {
		case tooLong:
			bad(lineno)
		case len(line) > 0 && line[0] == '{':
			finish()
			if id, d, ok := parseJSONRun(line); ok {
				run, detail = id, d
			} else if w, ok := parseJSONWindow(line); ok {
				add(w)
			} else {
				bad(lineno)
			}
		case bytes.HasPrefix(line, []byte("RUN ")):
			finish()
			if id, d, ok := parseRun(string(line)); ok {
				run, detail = id, d
			} else {
				bad(lineno)
			}
		case len(line) == 0:
			finish()
		case line[0] == '#':
			if w, ok := parseHeader(string(line)); ok {
				finish()
				cur = newBuilder(w)
			} // any other comment is ignored
		case cur == nil:
			bad(lineno) // a data line outside a window
		default:
			if !cur.textLine(string(line)) {
				bad(lineno)
			}
		}
		if err == io.EOF {
			break
		}
	}
	finish()
	if z != nil && z.Err() != nil { // a torn compressed tail (the writer was killed mid-window)
		bad(0)
	}
	return res, nil
}

// readLine returns one line without its newline (and CR). A line longer than
// MaxLine is consumed and reported as tooLong.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			if buf != nil || tooLong {
				return buf, tooLong, io.EOF
			}
			return nil, false, err
		}
		if !tooLong {
			if len(buf)+len(chunk) > MaxLine {
				tooLong, buf = true, []byte{}
			} else {
				buf = append(buf, chunk...)
			}
		}
		if !isPrefix {
			if buf == nil {
				buf = []byte{}
			}
			return bytes.TrimSuffix(buf, []byte{'\r'}), tooLong, nil
		}
	}
}

// parseRun reads a text run header, "RUN id=… host=… version=… start_ns=…
// [detail_s=…]", for its id and detail period (0: none).
func parseRun(s string) (string, float64, bool) {
	kv, ok := keyvals(strings.Fields(s)[1:], "id")
	if !ok || kv["id"] == "" {
		return "", 0, false
	}
	detail := 0.0
	if d, has := kv["detail_s"]; has {
		if detail, ok = number(d); !ok {
			return "", 0, false
		}
	}
	return kv["id"], detail, true
}

// parseJSONRun reads a jsonl run header, {"run":{"id":…}}, for its id and detail period.
func parseJSONRun(line []byte) (string, float64, bool) {
	if !bytes.HasPrefix(line, []byte(`{"run":`)) {
		return "", 0, false
	}
	var j struct {
		Run *struct {
			ID      string  `json:"id"`
			DetailS float64 `json:"detail_s"`
		} `json:"run"`
	}
	if err := json.Unmarshal(line, &j); err != nil || j.Run == nil || j.Run.ID == "" || !(j.Run.DetailS >= 0) {
		return "", 0, false
	}
	return j.Run.ID, j.Run.DetailS, true
}

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

// textLine applies one line of a text block; false if it is malformed.
func (b *builder) textLine(s string) bool {
	f := strings.Fields(s)
	if len(f) == 0 {
		return false
	}
	kind := f[0]
	switch kind {
	case "WARN", "ALERT", "LOAN":
		return true // verdicts are re-judged from the numbers; loans are not modelled
	case "TOPIC", "PUB", "RECV", "BYTES", "JITTER", "PERIOD", "LATENCY", "LOSS", "TIMER", "NODE", "PROC", "FULL", "EP", "CALLBACK", "BUSY", "THREAD", "UNMATCHED", "CALL", "LINK", "PATH":
	default:
		return true // a line kind from a newer writer
	}
	if kind == "FULL" {
		return b.fullLine(f[1:])
	}
	if kind == "PROC" {
		return b.procLine(f[1:])
	}
	if kind == "THREAD" {
		return b.threadLine(f[1:])
	}
	if kind == "UNMATCHED" {
		return b.unmatchedLine(f[1:])
	}
	if kind == "CALL" {
		return b.callLine(f[1:])
	}
	if kind == "LINK" {
		return b.linkLine(f[1:])
	}
	if kind == "PATH" {
		return b.pathLine(f[1:])
	}
	if len(f) < 2 {
		return false
	}
	name, ok := unescapeName(f[1])
	if !ok {
		return false
	}
	switch kind {
	case "EP":
		if len(f) < 3 {
			return false
		}
		kv, ok := keyvals(f[3:], "pid", "node", "inter", "intra")
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
		return b.endpoint(name, f[2], e)
	case "BYTES":
		kv, ok := keyvals(f[3:], "how", "per_s", "mean", "max", "messages")
		if !ok || len(f) < 4 || f[2] != "pub" && f[2] != "recv" || !knownBytes(kv["how"]) {
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
		if f[2] == "recv" {
			side = &t.RecvBytes
		}
		*side = window.Bytes{How: kv["how"], PerS: v[0], MeanSize: v[1], MaxSize: uint32(maxSize), Messages: n,
			Total: v[1] * float64(n)}
	case "NODE":
		if len(f) != 2 {
			return false
		}
		b.w.Nodes = append(b.w.Nodes, name)
	case "TOPIC":
		if len(f) != 3 {
			return false
		}
		v, ok := number(f[2])
		if !ok {
			return false
		}
		t := b.topic(name)
		t.PubInter, t.PubCount, t.PubInterSeen = v, max(t.PubCount, 1), true
	case "PUB", "RECV":
		kv, ok := keyvals(f[2:], "inter", "intra")
		if !ok || len(f) != 4 {
			return false
		}
		v, ok := numbers(kv, "inter", "intra")
		if !ok {
			return false
		}
		t := b.topic(name)
		if kind == "PUB" {
			t.PubInter, t.PubIntra, t.PubCount = v[0], v[1], max(t.PubCount, 1)
			t.PubInterSeen, t.PubIntraSeen = t.PubInterSeen || v[0] > 0, true
		} else {
			t.RecvInter, t.RecvIntra, t.SubCount, t.RecvSeen = v[0], v[1], max(t.SubCount, 1), true
		}
	case "JITTER":
		if len(f) != 4 {
			return false
		}
		kv, ok := keyvals(f[3:], "max_dt_ms")
		g := b.gap(name, f[2])
		if !ok || g == nil {
			return false
		}
		v, ok := number(kv["max_dt_ms"])
		if !ok {
			return false
		}
		g.HasData, g.MaxMs = true, v
	case "PERIOD":
		if len(f) < 3 {
			return false
		}
		kv, ok := keyvals(f[3:], "n", "mean_ms", "stddev_ms", "p50_ms", "p90_ms", "p99_ms", "silent_ms")
		g := b.gap(name, f[2])
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
	case "LATENCY":
		kv, ok := keyvals(f[2:], "n", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms")
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
	case "LOSS":
		kv, ok := keyvals(f[2:], "published", "judged", "worst_pct", "node", "pid")
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
		if node == "-" {
			node = ""
		}
		b.loss(name, published, window.Loss{Judged: judged, WorstPct: worst, Node: node, Pid: pid})
	case "TIMER":
		kv, ok := keyvals(f[2:], "timer", "period_ms", "hz")
		if !ok {
			return false
		}
		ord, err := strconv.Atoi(kv["timer"])
		v, ok := numbers(kv, "period_ms", "hz")
		if err != nil || !ok || ord < 0 {
			return false
		}
		pid, _ := strconv.Atoi(kv["pid"]) // absent before pulse 0.2: no pid
		tm := window.Timer{Node: name, Ordinal: ord, PeriodMs: v[0], Hz: v[1], Pid: pid}
		if _, ok := kv["calls"]; ok { // timing (ABI 1.4)
			calls, err := strconv.ParseUint(kv["calls"], 10, 64)
			late, ok := numbers(kv, "late_mean_ms", "late_p99_ms", "late_max_ms")
			over, err2 := strconv.ParseUint(kv["overruns"], 10, 64)
			if err != nil || err2 != nil || !ok {
				return false
			}
			tm.LateKnown, tm.Overruns = true, over
			tm.Late = window.Durations{N: calls, MeanMs: late[0], P99Ms: late[1], MaxMs: late[2]}
		}
		b.w.Timers = append(b.w.Timers, tm)
	case "CALLBACK":
		if len(f) < 3 {
			return false
		}
		kv, ok := keyvals(f[3:], "name", "pid")
		pid, err := strconv.Atoi(kv["pid"])
		cbName, nameOK := unescapeName(kv["name"])
		if !ok || err != nil || !nameOK {
			return false
		}
		c := window.Callback{Pid: pid, Kind: f[2], Name: undash(cbName), Node: undash(name)}
		if fn, ok := kv["function"]; ok {
			if c.Function, ok = unescapeName(fn); !ok {
				return false
			}
		}
		if c.Kind == "timer" {
			if c.Ordinal, err = strconv.Atoi(kv["timer"]); err != nil || c.Ordinal < 0 {
				return false
			}
		}
		if why, ok := kv["not_measured"]; ok {
			c.Why = undash(why)
		} else {
			v, ok := numbers(kv, "mean_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms")
			n, err1 := strconv.ParseUint(kv["n"], 10, 64)
			unended, err2 := strconv.ParseUint(kv["unended"], 10, 64)
			if !ok || err1 != nil || err2 != nil {
				return false
			}
			c.Measured, c.Unended = true, unended
			c.Duration = window.Durations{N: n, SumMs: v[0] * float64(n), MeanMs: v[0], P50Ms: v[1], P90Ms: v[2], P99Ms: v[3], MaxMs: v[4]}
		}
		if !b.callback(c) {
			return false
		}
	case "BUSY":
		kv, ok := keyvals(f[2:], "pid")
		pid, err := strconv.Atoi(kv["pid"])
		if !ok || err != nil {
			return false
		}
		nb := window.NodeBusy{Node: name, Pid: pid, FromWait: kv["source"] == "rcl_wait"}
		if _, hidden := kv["not_measured"]; !hidden {
			if nb.Pct, ok = number(kv["pct"]); !ok {
				return false
			}
			nb.Measured = true
		}
		b.w.Busy = append(b.w.Busy, nb)
	}
	return true
}

func undash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// callback adds a callback line's entity; false for an unknown kind.
func (b *builder) callback(c window.Callback) bool {
	switch c.Kind {
	case "subscription", "timer", "service":
		b.w.Callbacks = append(b.w.Callbacks, c)
		return true
	}
	return false
}

func (b *builder) threadLine(f []string) bool {
	kv, ok := keyvals(f, "pid", "tid", "name", "node", "busy_pct", "callbacks")
	if !ok {
		return false
	}
	pid, err1 := strconv.Atoi(kv["pid"])
	tid, err2 := strconv.Atoi(kv["tid"])
	calls, err3 := strconv.ParseUint(kv["callbacks"], 10, 64)
	busy, ok := number(kv["busy_pct"])
	name, ok1 := unescapeName(kv["name"])
	node, ok2 := unescapeName(kv["node"])
	if err1 != nil || err2 != nil || err3 != nil || !ok || !ok1 || !ok2 {
		return false
	}
	th := window.Thread{Pid: pid, Tid: tid, Name: undash(name), Node: undash(node), BusyPct: busy, Callbacks: calls}
	if v, ok := kv["outside_wait_pct"]; ok {
		if th.OutsideWaitPct, ok = number(v); !ok {
			return false
		}
		th.Waiter = true
	}
	b.w.Threads = append(b.w.Threads, th)
	return true
}

// callLine reads "CALL service side=… node=… pid=… alive=… started=… answered=… hz=… evicted=…
// unmatched=… [has_server=…] n=… sum_ms=… mean_ms=… p50_ms=… p90_ms=… p99_ms=… max_ms=… hist=… open=…
// [send_failed=…]" (send_failed: a server's, ABI 1.8; absent: not measured).
func (b *builder) callLine(f []string) bool {
	if len(f) < 2 {
		return false
	}
	name, ok := unescapeName(f[0])
	kv, ok2 := keyvals(f[1:], "side", "node", "pid", "alive", "started", "answered", "hz", "evicted", "unmatched", "n",
		"sum_ms", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms", "hist", "open")
	if !ok || !ok2 {
		return false
	}
	node, ok := unescapeName(kv["node"])
	v, ok2 := numbers(kv, "hz", "sum_ms", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms")
	if !ok || !ok2 {
		return false
	}
	var counts [5]uint64
	for i, k := range []string{"started", "answered", "evicted", "unmatched", "n"} {
		var err error
		if counts[i], err = strconv.ParseUint(kv[k], 10, 64); err != nil {
			return false
		}
	}
	pid, err := strconv.Atoi(kv["pid"])
	side := kv["side"]
	if err != nil || side != "server" && side != "client" {
		return false
	}
	c := window.Call{Pid: pid, Node: undash(node), Name: name, Client: side == "client", Alive: kv["alive"] == "1",
		Started: counts[0], Answered: counts[1], Hz: v[0], Evicted: counts[2], Unmatched: counts[3], HasServer: kv["has_server"] == "1",
		Time: window.Durations{N: counts[4], SumMs: v[1], MeanMs: v[2], P50Ms: v[3], P90Ms: v[4], P99Ms: v[5], MaxMs: v[6]}}
	if f, ok := kv["send_failed"]; ok {
		if c.SendFailed, err = strconv.ParseUint(f, 10, 64); err != nil {
			return false
		}
		c.FailKnown = true
	}
	if c.Hist, ok = readHist(kv["hist"]); !ok {
		return false
	}
	if o := kv["open"]; o != "-" {
		for _, part := range strings.Split(o, ";") {
			age, ok := number(part)
			if !ok {
				return false
			}
			c.Open = append(c.Open, age)
		}
	}
	b.w.Calls = append(b.w.Calls, c)
	return true
}

// unmatchedLine reads "UNMATCHED topic side=… node=… pid=… reason=… level=… silent=… detail=… fix=… peers=…".
func (b *builder) unmatchedLine(f []string) bool {
	if len(f) < 2 {
		return false
	}
	topic, ok := unescapeName(f[0])
	kv, ok2 := keyvals(f[1:], "side", "node", "pid", "reason", "level")
	pid, err := strconv.Atoi(kv["pid"])
	if !ok || !ok2 || err != nil || (kv["side"] != "pub" && kv["side"] != "sub") || (kv["level"] != "error" && kv["level"] != "warning") {
		return false
	}
	u := window.Unmatched{Topic: topic, Pid: pid, Pub: kv["side"] == "pub", Error: kv["level"] == "error", Silent: kv["silent"] == "1"}
	for key, dst := range map[string]*string{"node": &u.Node, "reason": &u.Reason, "detail": &u.Detail, "fix": &u.Fix} {
		v, ok := unescapeName(kv[key])
		if kv[key] != "" && !ok {
			return false
		}
		*dst = undash(v)
	}
	if peers, ok := unescapeName(kv["peers"]); ok && peers != "-" {
		u.Peers = strings.Split(peers, ";")
	}
	b.w.Unmatched = append(b.w.Unmatched, u)
	return true
}

func (b *builder) procLine(f []string) bool {
	kv, ok := keyvals(f, "pid", "state")
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(kv["pid"])
	if err != nil || pid <= 0 {
		return false
	}
	p := window.Proc{Pid: pid, Alive: kv["state"] == "alive"}
	if exe, ok := unescapeName(kv["exe"]); ok {
		p.Exe = exe
	}
	if nodes, ok := unescapeName(kv["nodes"]); ok {
		p.Nodes = strings.Split(nodes, ",")
	}
	b.w.Procs = append(b.w.Procs, p)
	return true
}

// fullLine reads "FULL pid=N dropped_endpoints=M" onto the process's PROC line.
func (b *builder) fullLine(f []string) bool {
	kv, ok := keyvals(f, "pid", "dropped_endpoints")
	if !ok {
		return false
	}
	pid, err1 := strconv.Atoi(kv["pid"])
	n, err2 := strconv.ParseUint(kv["dropped_endpoints"], 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	for i := range b.w.Procs {
		if b.w.Procs[i].Pid == pid {
			b.w.Procs[i].Dropped = n
			return true
		}
	}
	return false
}

// The jsonl window, as renderJSONL and upstream write it. Pointers tell an
// absent key ("not measured") from a zero.
type jsonWindow struct {
	TsNs    *string     `json:"ts_ns"`
	WindowS *float64    `json:"window_s"`
	Detail  bool        `json:"detail"`
	Topics  []jsonTopic `json:"topics"`
	Nodes   []string    `json:"nodes"`
	Procs   []struct {
		Pid     int      `json:"pid"`
		State   string   `json:"state"`
		Exe     string   `json:"exe"`
		Nodes   []string `json:"nodes"`
		Dropped uint64   `json:"dropped_endpoints"`
	} `json:"procs"`
	Timers []struct {
		Node       string  `json:"node"`
		Timer      int     `json:"timer"`
		PeriodMs   float64 `json:"period_ms"`
		Hz         float64 `json:"hz"`
		Pid        int     `json:"pid"`
		Calls      *uint64 `json:"calls"`
		LateMeanMs float64 `json:"late_mean_ms"`
		LateP99Ms  float64 `json:"late_p99_ms"`
		LateMaxMs  float64 `json:"late_max_ms"`
		Overruns   uint64  `json:"overruns"`
	} `json:"timers"`
	Callbacks []struct {
		Node        string  `json:"node"`
		Kind        string  `json:"kind"`
		Name        string  `json:"name"`
		Timer       int     `json:"timer"`
		Pid         int     `json:"pid"`
		N           uint64  `json:"n"`
		MeanMs      float64 `json:"mean_ms"`
		P50Ms       float64 `json:"p50_ms"`
		P90Ms       float64 `json:"p90_ms"`
		P99Ms       float64 `json:"p99_ms"`
		MaxMs       float64 `json:"max_ms"`
		Unended     uint64  `json:"unended"`
		NotMeasured *string `json:"not_measured"`
		Function    string  `json:"function"`
	} `json:"callbacks"`
	Busy []struct {
		Node        string  `json:"node"`
		Pid         int     `json:"pid"`
		Pct         float64 `json:"pct"`
		NotMeasured bool    `json:"not_measured"`
		Source      string  `json:"source"`
	} `json:"busy"`
	Threads []struct {
		Pid       int      `json:"pid"`
		Tid       int      `json:"tid"`
		Name      string   `json:"name"`
		Node      string   `json:"node"`
		BusyPct   float64  `json:"busy_pct"`
		Callbacks uint64   `json:"callbacks"`
		Outside   *float64 `json:"outside_wait_pct"`
	} `json:"threads"`
	Calls []struct {
		Service    string          `json:"service"`
		Side       string          `json:"side"`
		Node       string          `json:"node"`
		Pid        int             `json:"pid"`
		Alive      bool            `json:"alive"`
		Started    uint64          `json:"started"`
		Answered   uint64          `json:"answered"`
		Hz         float64         `json:"hz"`
		Evicted    uint64          `json:"evicted"`
		Unmatched  uint64          `json:"unmatched"`
		HasServer  bool            `json:"has_server"`
		N          uint64          `json:"n"`
		SumMs      float64         `json:"sum_ms"`
		MeanMs     float64         `json:"mean_ms"`
		P50Ms      float64         `json:"p50_ms"`
		P90Ms      float64         `json:"p90_ms"`
		P99Ms      float64         `json:"p99_ms"`
		MaxMs      float64         `json:"max_ms"`
		Hist       []window.Bucket `json:"hist"`
		OpenMs     []float64       `json:"open_ms"`
		SendFailed *uint64         `json:"send_failed"` // ABI 1.8, servers; absent: not measured
	} `json:"calls"`
	Unmatched []struct {
		Topic  string   `json:"topic"`
		Side   string   `json:"side"`
		Node   string   `json:"node"`
		Pid    int      `json:"pid"`
		Reason string   `json:"reason"`
		Level  string   `json:"level"`
		Silent bool     `json:"silent"`
		Detail string   `json:"detail"`
		Fix    string   `json:"fix"`
		Peers  []string `json:"peers"`
	} `json:"unmatched"`
	Links     []jsonLink `json:"links"`
	Paths     []jsonPath `json:"paths"`
	Endpoints []struct {
		Topic       string   `json:"topic"`
		Side        string   `json:"side"`
		Pid         int      `json:"pid"`
		Node        string   `json:"node"`
		InterHz     float64  `json:"inter_hz"`
		IntraHz     float64  `json:"intra_hz"`
		LossPct     *float64 `json:"loss_pct"`
		NotMeasured bool     `json:"not_measured"`
		Bytes       string   `json:"bytes"`
		BytesPerS   float64  `json:"bytes_per_s"`
		MeanBytes   float64  `json:"mean_bytes"`
	} `json:"endpoints"`
	Bytes []struct {
		Topic    string  `json:"topic"`
		Side     string  `json:"side"`
		How      string  `json:"how"`
		PerS     float64 `json:"per_s"`
		Mean     float64 `json:"mean"`
		Max      uint32  `json:"max"`
		Messages uint64  `json:"messages"`
	} `json:"bytes"`
	Latencies []struct {
		Topic  string  `json:"topic"`
		N      uint64  `json:"n"`
		MeanMs float64 `json:"mean_ms"`
		P50Ms  float64 `json:"p50_ms"`
		P90Ms  float64 `json:"p90_ms"`
		P99Ms  float64 `json:"p99_ms"`
		MaxMs  float64 `json:"max_ms"`
	} `json:"latencies"`
	Losses []struct {
		Topic     string  `json:"topic"`
		Published uint64  `json:"published"`
		Judged    int     `json:"judged"`
		WorstPct  float64 `json:"worst_pct"`
		Node      string  `json:"node"`
		Pid       int     `json:"pid"`
	} `json:"losses"`
	Periods []struct {
		Topic    string  `json:"topic"`
		Side     string  `json:"side"`
		N        uint64  `json:"n"`
		MeanMs   float64 `json:"mean_ms"`
		StddevMs float64 `json:"stddev_ms"`
		P50Ms    float64 `json:"p50_ms"`
		P90Ms    float64 `json:"p90_ms"`
		P99Ms    float64 `json:"p99_ms"`
		SilentMs float64 `json:"silent_ms"`
	} `json:"periods"`
}

type jsonTopic struct {
	Topic        *string  `json:"topic"`
	PubInterHz   *float64 `json:"pub_inter_hz"`
	PubIntraHz   *float64 `json:"pub_intra_hz"`
	RecvInterHz  *float64 `json:"recv_inter_hz"`
	RecvIntraHz  *float64 `json:"recv_intra_hz"`
	PubMaxDtMs   *float64 `json:"pub_max_dt_ms"`
	RecvMaxDtMs  *float64 `json:"recv_max_dt_ms"`
	RecvEndpoint bool     `json:"recv_endpoint_seen"`
}

var errNotWindow = errors.New("not a probe window")

// nonNeg reads an optional number; absent is 0, negative is an error.
func nonNeg(p *float64, err *error) float64 {
	if p == nil {
		return 0
	}
	if *p < 0 {
		*err = errNotWindow
	}
	return *p
}

// parseJSONWindow reads one jsonl window; false for anything else (including
// valid JSON that is not a probe window).
func parseJSONWindow(line []byte) (*window.Window, bool) {
	var j jsonWindow
	if err := json.Unmarshal(line, &j); err != nil || j.TsNs == nil || j.WindowS == nil || j.Topics == nil || j.Nodes == nil {
		return nil, false
	}
	ts, err := strconv.ParseInt(*j.TsNs, 10, 64)
	if err != nil || *j.WindowS < 0 {
		return nil, false
	}
	b := newBuilder(&window.Window{TsNs: ts, Seconds: *j.WindowS, Nodes: j.Nodes, Detail: j.Detail})
	for _, jt := range j.Topics {
		if jt.Topic == nil {
			return nil, false
		}
		t := b.topic(*jt.Topic)
		if jt.PubInterHz != nil || jt.PubIntraHz != nil {
			t.PubInter, t.PubIntra, t.PubCount = nonNeg(jt.PubInterHz, &err), nonNeg(jt.PubIntraHz, &err), 1
			t.PubInterSeen, t.PubIntraSeen = true, jt.PubIntraHz != nil && *jt.PubIntraHz > 0
		}
		if jt.RecvInterHz != nil || jt.RecvIntraHz != nil || jt.RecvEndpoint {
			t.RecvInter, t.RecvIntra, t.SubCount, t.RecvSeen = nonNeg(jt.RecvInterHz, &err), nonNeg(jt.RecvIntraHz, &err), 1, true
		}
		if jt.PubMaxDtMs != nil {
			g := b.gap(*jt.Topic, "pub")
			g.HasData, g.MaxMs = true, nonNeg(jt.PubMaxDtMs, &err)
		}
		if jt.RecvMaxDtMs != nil {
			g := b.gap(*jt.Topic, "recv")
			g.HasData, g.MaxMs = true, nonNeg(jt.RecvMaxDtMs, &err)
		}
	}
	for _, p := range j.Periods {
		g := b.gap(p.Topic, p.Side)
		if g == nil || p.MeanMs < 0 || p.StddevMs < 0 || p.P50Ms < 0 || p.P90Ms < 0 || p.P99Ms < 0 || p.SilentMs < 0 {
			return nil, false
		}
		g.HasData, g.N = true, p.N
		g.MeanMs, g.StddevMs, g.P50Ms, g.P90Ms, g.P99Ms, g.OpenMs = p.MeanMs, p.StddevMs, p.P50Ms, p.P90Ms, p.P99Ms, p.SilentMs
	}
	for _, by := range j.Bytes {
		if by.Topic == "" || by.Side != "pub" && by.Side != "recv" || !knownBytes(by.How) || by.PerS < 0 || by.Mean < 0 {
			return nil, false
		}
		t := b.topic(by.Topic)
		side := &t.PubBytes
		if by.Side == "recv" {
			side = &t.RecvBytes
		}
		*side = window.Bytes{How: by.How, PerS: by.PerS, MeanSize: by.Mean, MaxSize: by.Max, Messages: by.Messages,
			Total: by.Mean * float64(by.Messages)}
	}
	for _, l := range j.Latencies {
		if l.MeanMs < 0 || l.P50Ms < 0 || l.P90Ms < 0 || l.P99Ms < 0 || l.MaxMs < 0 {
			return nil, false
		}
		t := b.topic(l.Topic)
		t.SubCount = max(t.SubCount, 1)
		t.Latency = window.GapStats{HasData: true, N: l.N, MeanMs: l.MeanMs, P50Ms: l.P50Ms, P90Ms: l.P90Ms, P99Ms: l.P99Ms, MaxMs: l.MaxMs}
	}
	for _, l := range j.Losses {
		if l.Judged < 1 || l.Pid < 0 || l.WorstPct < 0 || l.WorstPct > 100 {
			return nil, false
		}
		b.loss(l.Topic, l.Published, window.Loss{Judged: l.Judged, WorstPct: l.WorstPct, Node: l.Node, Pid: l.Pid})
	}
	for _, tm := range j.Timers {
		if tm.Timer < 0 || tm.PeriodMs < 0 || tm.Hz < 0 {
			return nil, false
		}
		t := window.Timer{Node: tm.Node, Ordinal: tm.Timer, PeriodMs: tm.PeriodMs, Hz: tm.Hz, Pid: tm.Pid}
		if tm.Calls != nil {
			t.LateKnown, t.Overruns = true, tm.Overruns
			t.Late = window.Durations{N: *tm.Calls, MeanMs: nonNeg(&tm.LateMeanMs, &err), P99Ms: nonNeg(&tm.LateP99Ms, &err), MaxMs: nonNeg(&tm.LateMaxMs, &err)}
		}
		b.w.Timers = append(b.w.Timers, t)
	}
	for _, jc := range j.Callbacks {
		c := window.Callback{Pid: jc.Pid, Node: jc.Node, Kind: jc.Kind, Name: jc.Name, Ordinal: jc.Timer, Function: jc.Function}
		if jc.NotMeasured != nil {
			c.Why = *jc.NotMeasured
		} else {
			c.Measured, c.Unended = true, jc.Unended
			c.Duration = window.Durations{N: jc.N, SumMs: jc.MeanMs * float64(jc.N), MeanMs: nonNeg(&jc.MeanMs, &err), P50Ms: nonNeg(&jc.P50Ms, &err),
				P90Ms: nonNeg(&jc.P90Ms, &err), P99Ms: nonNeg(&jc.P99Ms, &err), MaxMs: nonNeg(&jc.MaxMs, &err)}
		}
		if jc.Timer < 0 || !b.callback(c) {
			return nil, false
		}
	}
	for _, jb := range j.Busy {
		b.w.Busy = append(b.w.Busy, window.NodeBusy{Node: jb.Node, Pid: jb.Pid, Pct: nonNeg(&jb.Pct, &err), Measured: !jb.NotMeasured, FromWait: jb.Source == "rcl_wait"})
	}
	for _, jc := range j.Calls {
		if jc.Side != "server" && jc.Side != "client" {
			return nil, false
		}
		c := window.Call{Pid: jc.Pid, Node: jc.Node, Name: jc.Service, Client: jc.Side == "client", Alive: jc.Alive, Started: jc.Started,
			Answered: jc.Answered, Hz: nonNeg(&jc.Hz, &err), Evicted: jc.Evicted, Unmatched: jc.Unmatched, HasServer: jc.HasServer,
			Time: window.Durations{N: jc.N, SumMs: nonNeg(&jc.SumMs, &err), MeanMs: nonNeg(&jc.MeanMs, &err), P50Ms: nonNeg(&jc.P50Ms, &err),
				P90Ms: nonNeg(&jc.P90Ms, &err), P99Ms: nonNeg(&jc.P99Ms, &err), MaxMs: nonNeg(&jc.MaxMs, &err)}}
		for _, h := range jc.Hist {
			if h.B < 0 || h.B >= segment.TimeBuckets {
				return nil, false
			}
			c.Hist = append(c.Hist, h)
		}
		for i := range jc.OpenMs {
			c.Open = append(c.Open, nonNeg(&jc.OpenMs[i], &err))
		}
		if jc.SendFailed != nil {
			c.SendFailed, c.FailKnown = *jc.SendFailed, true
		}
		b.w.Calls = append(b.w.Calls, c)
	}
	for _, jt := range j.Threads {
		th := window.Thread{Pid: jt.Pid, Tid: jt.Tid, Name: jt.Name, Node: jt.Node, BusyPct: nonNeg(&jt.BusyPct, &err), Callbacks: jt.Callbacks}
		if jt.Outside != nil {
			th.OutsideWaitPct, th.Waiter = nonNeg(jt.Outside, &err), true
		}
		b.w.Threads = append(b.w.Threads, th)
	}
	for _, u := range j.Unmatched {
		if u.Topic == "" || (u.Side != "pub" && u.Side != "sub") || (u.Level != "error" && u.Level != "warning") {
			return nil, false
		}
		if len(u.Peers) == 0 {
			u.Peers = nil // as the text grammar reads "peers=-"
		}
		b.w.Unmatched = append(b.w.Unmatched, window.Unmatched{Topic: u.Topic, Node: u.Node, Pid: u.Pid, Pub: u.Side == "pub",
			Reason: u.Reason, Error: u.Level == "error", Detail: u.Detail, Fix: u.Fix, Peers: u.Peers, Silent: u.Silent})
	}
	for _, e := range j.Endpoints {
		ep := window.EndpointRate{Pid: e.Pid, Node: e.Node, Inter: e.InterHz, Intra: e.IntraHz, PubHidden: e.NotMeasured}
		if e.LossPct != nil {
			ep.LossPct, ep.LossJudged = *e.LossPct, true
		}
		if e.Bytes != "" {
			if !knownBytes(e.Bytes) || e.BytesPerS < 0 || e.MeanBytes < 0 {
				return nil, false
			}
			ep.Bytes = window.Bytes{How: e.Bytes, PerS: e.BytesPerS, MeanSize: e.MeanBytes}
		}
		if e.Topic == "" || e.InterHz < 0 || e.IntraHz < 0 || !b.endpoint(e.Topic, e.Side, ep) {
			return nil, false
		}
	}
	for _, p := range j.Procs {
		b.w.Procs = append(b.w.Procs, window.Proc{Pid: p.Pid, Alive: p.State == "alive", Exe: p.Exe, Nodes: p.Nodes, Dropped: p.Dropped})
	}
	if !b.jsonLinks(j.Links, j.Paths) {
		return nil, false
	}
	if err != nil {
		return nil, false
	}
	return b.window(), true
}

// String describes a read for messages: "12 windows, 3 malformed lines (first: line 7)".
func (r *ReadResult) String() string {
	s := fmt.Sprintf("%d windows", len(r.Windows))
	if r.Malformed > 0 {
		s += fmt.Sprintf(", %d malformed lines skipped (first: line %d)", r.Malformed, r.FirstBad)
	}
	return s
}

// knownBytes reports a window.Bytes.How a record may carry.
func knownBytes(how string) bool {
	return how == window.BytesExact || how == window.BytesSampled || how == window.BytesNone
}
