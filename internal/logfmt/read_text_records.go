package logfmt

import (
	"strconv"
	"strings"

	"ros2_pulse/internal/window"
)

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

func (b *builder) timerLine(node string, f []string) bool {
	kv, ok := keyvals(f, "timer", "period_ms", "hz")
	if !ok {
		return false
	}
	ord, err := strconv.Atoi(kv["timer"])
	v, ok := numbers(kv, "period_ms", "hz")
	if err != nil || !ok || ord < 0 {
		return false
	}
	pid, _ := strconv.Atoi(kv["pid"]) // absent before pulse 0.2: no pid
	tm := window.Timer{Node: node, Ordinal: ord, PeriodMs: v[0], Hz: v[1], Pid: pid}
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
	return true
}

// callbackLine reads "CALLBACK node kind name=… [timer=…] [function=…] (n=… mean_ms=… … unended=… | not_measured=…) pid=…".
func (b *builder) callbackLine(node string, f []string) bool {
	if len(f) < 1 {
		return false
	}
	kv, ok := keyvals(f[1:], "name", "pid")
	pid, err := strconv.Atoi(kv["pid"])
	cbName, nameOK := unescapeName(kv["name"])
	if !ok || err != nil || !nameOK {
		return false
	}
	c := window.Callback{Pid: pid, Kind: f[0], Name: undash(cbName), Node: undash(node)}
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
	return b.callback(c)
}

func (b *builder) busyLine(node string, f []string) bool {
	kv, ok := keyvals(f, "pid")
	pid, err := strconv.Atoi(kv["pid"])
	if !ok || err != nil {
		return false
	}
	nb := window.NodeBusy{Node: node, Pid: pid, FromWait: kv["source"] == "rcl_wait"}
	if _, hidden := kv["not_measured"]; !hidden {
		if nb.Pct, ok = number(kv["pct"]); !ok {
			return false
		}
		nb.Measured = true
	}
	b.w.Busy = append(b.w.Busy, nb)
	return true
}
