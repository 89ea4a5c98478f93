package logfmt

import (
	"encoding/json"
	"errors"
	"strconv"

	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

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
