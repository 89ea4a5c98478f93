package health

import (
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

func mustSpec(t *testing.T, y string) *spec.Spec {
	t.Helper()
	s, err := spec.Parse([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func win(topics []window.Topic, nodes []string, timers []window.Timer) *window.Window {
	sort.Slice(topics, func(i, j int) bool { return topics[i].Name < topics[j].Name }) // as Compute leaves them
	return &window.Window{Seconds: 1, Topics: topics, Nodes: nodes, Timers: timers}
}

// judge runs a warm-up window (never judged) and then the window under test.
func judge(e *Evaluator, w *window.Window) []Warning {
	e.Judge(w, false, time.Unix(0, 0))
	return e.Judge(w, false, time.Unix(10, 0))
}

func TestRateRulesBySideAndTransport(t *testing.T) {
	s := mustSpec(t, `
topics:
  /t:
    - {min_hz: 45, max_hz: 55, side: pub}
    - {min_hz: 45, side: recv}
  /only_pub: {min_hz: 10}
`)
	topics := []window.Topic{
		// one publish fires both tracepoints: pub "any" is the max (50), not the sum (100)
		{Name: "/t", PubInter: 50, PubIntra: 50, PubAny: 50, PubCount: 1, RecvInter: 80, SubCount: 2,
			Subs: []window.EndpointRate{{Pid: 1, Node: "/a", Inter: 50, Alive: true}, {Pid: 2, Node: "/slow", Inter: 30, Alive: true}}},
		// a publisher-only topic is never blamed for a missing receive rate... it is missing on that side
		{Name: "/only_pub", PubInter: 10, PubAny: 10, PubCount: 1},
	}
	e := New(s)
	e.Grace = 5
	ws := judge(e, win(topics, nil, nil))
	if len(ws) != 1 || ws[0].Kind != TopicRate || ws[0].Pid != 2 || ws[0].Value != 30 || ws[0].Node != "/slow" {
		t.Fatalf("want only the slow subscription: %+v", ws)
	}
	if ws[0].Age != 0 {
		t.Errorf("a new violation has no age: %v", ws[0].Age)
	}
	// The same violation one window later has aged; the grace ran out for /only_pub's receive side.
	e.Grace = 2
	ws = e.Judge(win(topics, nil, nil), false, time.Unix(12, 0))
	var slow, missing bool
	for _, w := range ws {
		slow = slow || (w.Pid == 2 && w.Age == 2*time.Second)
		missing = missing || (w.Kind == TopicMissing && w.Topic == "/only_pub")
	}
	if !slow || !missing {
		t.Fatalf("%+v", ws)
	}
}

func TestFirstAndFinalWindowsAreNotJudged(t *testing.T) {
	e := New(mustSpec(t, "topics:\n  /t: {min_hz: 100, side: pub}\n"))
	w := win([]window.Topic{{Name: "/t", PubInter: 1, PubAny: 1, PubCount: 1}}, nil, nil)
	if ws := e.Judge(w, false, time.Now()); ws != nil {
		t.Fatalf("first window judged: %+v", ws)
	}
	if ws := e.Judge(w, true, time.Now()); ws != nil {
		t.Fatalf("final window judged: %+v", ws)
	}
	if ws := e.Judge(w, false, time.Now()); len(ws) != 1 {
		t.Fatalf("an interior window must be judged: %+v", ws)
	}
}

func TestGapRuleNeedsGapData(t *testing.T) {
	e := New(mustSpec(t, "topics:\n  /t: {max_gap_ms: 100}\n"))
	topics := []window.Topic{{Name: "/t", RecvInter: 50, SubCount: 1}}
	if ws := judge(e, win(topics, nil, nil)); len(ws) != 1 || ws[0].Kind != CannotJudge {
		t.Fatalf("no gap data must be 'cannot judge', not a pass: %+v", ws)
	}
	topics[0].RecvGap = window.GapStats{HasData: true, N: 40, MaxMs: 21, OpenMs: 420}
	if ws := judge(New(e.Spec), win(topics, nil, nil)); len(ws) != 1 || ws[0].Kind != TopicGap || ws[0].Value != 420 {
		t.Fatalf("a 420 ms silence breaks a 100 ms gap rule: %+v", ws)
	}
	topics[0].RecvGap.OpenMs = 5
	if ws := judge(New(e.Spec), win(topics, nil, nil)); len(ws) != 0 {
		t.Fatalf("healthy gaps: %+v", ws)
	}
}

func TestNodesAndTimers(t *testing.T) {
	e := New(mustSpec(t, "nodes: [/up, /gone, /never]\ntimers:\n  /up: {min_hz: 90}\n"))
	e.Grace = 3
	timers := []window.Timer{{Node: "/up", Hz: 100}}
	e.Judge(win(nil, []string{"/up", "/gone"}, timers), false, time.Now())
	// /gone's process exited: missing at once. /never is still in its grace.
	ws := e.Judge(win(nil, []string{"/up"}, []window.Timer{{Node: "/up", Hz: 0, Ordinal: 0, Pid: 7}}), false, time.Now())
	kinds := map[string]Kind{}
	for _, w := range ws {
		kinds[w.Node] = w.Kind
	}
	if kinds["/gone"] != NodeMissing || kinds["/up"] != TimerRate || len(ws) != 2 {
		t.Fatalf("%+v", ws)
	}
	ws = e.Judge(win(nil, []string{"/up"}, timers), false, time.Now())
	ws = e.Judge(win(nil, []string{"/up"}, timers), false, time.Now())
	found := false
	for _, w := range ws {
		found = found || (w.Kind == NodeMissing && w.Node == "/never")
	}
	if !found || math.IsNaN(0) {
		t.Fatalf("a never-seen node is missing after the grace: %+v", ws)
	}
}

// logWin is a window as a log reads back: a time, a length, topics, nodes.
func logWin(tsMs int64, secs float64, topics []window.Topic, nodes ...string) *window.Window {
	w := win(topics, nodes, nil)
	w.TsNs, w.Seconds = tsMs*1e6, secs
	return w
}

// Upstream's per-process logs: the publisher's and the subscriber's windows
// are out of phase by 400 ms; aligned and merged, the topic exists on both
// sides and the pub rule sees one publisher's rate, the recv rule the sum of
// the receivers'. Gap maxima merge as max of max (600 and 700 against a
// 1000 ms rule pass; a sum would fail).
func TestJudgeLogsAlignsAndMerges(t *testing.T) {
	s := mustSpec(t, `
topics:
  /t:
    - {min_hz: 45, max_hz: 55, side: pub}
    - {min_hz: 90, max_gap_ms: 1000}
nodes: [/talker, /listener_a, /listener_b]
`)
	var pub, subA, subB []*window.Window
	for i := int64(0); i < 6; i++ {
		pub = append(pub, logWin(1000*i, 1, []window.Topic{{Name: "/t", PubInter: 50, PubAny: 50, PubCount: 1}}, "/talker"))
		subA = append(subA, logWin(1000*i+400, 1, []window.Topic{{Name: "/t", RecvInter: 50, SubCount: 1, RecvGap: window.GapStats{HasData: true, MaxMs: 600}}}, "/listener_a"))
		subB = append(subB, logWin(1000*i-300, 1, []window.Topic{{Name: "/t", RecvInter: 50, SubCount: 1, RecvGap: window.GapStats{HasData: true, MaxMs: 700}}}, "/listener_b"))
	}
	ms := New(s).JudgeLogs([][]*window.Window{pub, subA, subB}, false)
	judged := 0
	for i, m := range ms {
		if m.Judged {
			judged++
		}
		if len(m.Warns) != 0 {
			t.Errorf("moment %d: %+v", i, m.Warns)
		}
		if got := m.W.Topic("/t"); got == nil || got.RecvInter != 100 || got.PubAny != 50 || got.RecvGap.MaxMs != 700 {
			t.Fatalf("moment %d merged badly: %+v", i, got)
		}
	}
	if len(ms) != 6 || judged != 5 {
		t.Errorf("%d moments, %d judged; want 6 and 5 (the first is ramp-up)", len(ms), judged)
	}
	// A listener's log that ends early: its node is missing from then on.
	ms = New(s).JudgeLogs([][]*window.Window{pub, subA[:3], subB}, false)
	if w := ms[4].Warns; len(w) != 2 || w[0].Kind != TopicRate || w[0].Value != 50 || w[1].Kind != NodeMissing || w[1].Node != "/listener_a" {
		t.Errorf("after a log ends: %+v", w)
	}
}

// The first window is never judged, --skip-last skips the last, and a final
// sliver (a process's exit) is never judged even without it.
func TestJudgeLogsSkipsTransients(t *testing.T) {
	s := mustSpec(t, "topics:\n  /t: {min_hz: 45}\n")
	ok := []window.Topic{{Name: "/t", RecvInter: 50, SubCount: 1}}
	zero := []window.Topic{{Name: "/t", SubCount: 1}}
	log := []*window.Window{logWin(0, 1, zero), logWin(1000, 1, ok), logWin(2000, 1, ok), logWin(3000, 1, zero)}
	verdicts := func(ms []Moment) (judged, bad int) {
		for _, m := range ms {
			if m.Judged {
				judged++
			}
			if len(m.Warns) > 0 {
				bad++
			}
		}
		return
	}
	if j, b := verdicts(New(s).JudgeLogs([][]*window.Window{log}, false)); j != 3 || b != 1 {
		t.Errorf("plain: %d judged, %d bad; want 3 and 1 (the zero last window)", j, b)
	}
	if j, b := verdicts(New(s).JudgeLogs([][]*window.Window{log}, true)); j != 2 || b != 0 {
		t.Errorf("--skip-last: %d judged, %d bad; want 2 and 0", j, b)
	}
	log[3].Seconds = 0.1
	if j, b := verdicts(New(s).JudgeLogs([][]*window.Window{log}, false)); j != 2 || b != 0 {
		t.Errorf("sliver: %d judged, %d bad; want 2 and 0", j, b)
	}
}

// A latency rule: over the bound is topic_latency with the window's maximum;
// without latency data it cannot be judged (never a pass); a window with no
// take has nothing to judge.
func TestLatencyRule(t *testing.T) {
	s := mustSpec(t, "topics:\n  /cam: {max_latency_ms: 30}\n")
	lat := func(g window.GapStats) []Warning {
		return judge(New(s), win([]window.Topic{{Name: "/cam", SubCount: 1, RecvInter: 30, Latency: g}}, nil, nil))
	}
	if ws := lat(window.GapStats{HasData: true, N: 30, MaxMs: 41.0}); len(ws) != 1 || ws[0].Kind != TopicLatency || ws[0].Value != 41 || ws[0].Bound != 30 {
		t.Errorf("over the bound: %+v", ws)
	}
	if ws := lat(window.GapStats{HasData: true, N: 30, MaxMs: 12}); len(ws) != 0 {
		t.Errorf("under the bound: %+v", ws)
	}
	if ws := lat(window.GapStats{HasData: true, N: 0}); len(ws) != 0 {
		t.Errorf("no take in the window: %+v", ws)
	}
	if ws := lat(window.GapStats{}); len(ws) != 1 || ws[0].Kind != CannotJudge || ws[0].Metric != "latency" {
		t.Errorf("no latency data: %+v", ws)
	}
}

// A loss rule judges every subscription the window judged for loss, names
// the lossy one, ignores late joiners, and cannot judge a topic whose
// publishers are all elsewhere. From a log, only the worst one is known.
func TestLossRule(t *testing.T) {
	s := mustSpec(t, "topics:\n  /pts: {max_loss_pct: 2}\n")
	subs := []window.EndpointRate{
		{Pid: 10, Node: "/ok", Alive: true, LossJudged: true, LossPct: 1},
		{Pid: 11, Node: "/lossy", Alive: true, LossJudged: true, LossPct: 20},
		{Pid: 12, Node: "/late", Alive: true, LossPct: 50}, // not judged: joined in the window
	}
	ws := judge(New(s), win([]window.Topic{{Name: "/pts", PubCount: 1, SubCount: 3, RecvInter: 30, Subs: subs,
		Loss: window.Loss{Judged: 2, WorstPct: 20, Node: "/lossy", Pid: 11}}}, nil, nil))
	if len(ws) != 1 || ws[0].Kind != TopicLoss || ws[0].Value != 20 || ws[0].Bound != 2 || ws[0].Node != "/lossy" || ws[0].Pid != 11 {
		t.Errorf("one lossy subscription: %+v", ws)
	}
	ws = judge(New(s), win([]window.Topic{{Name: "/pts", PubCount: 0, SubCount: 1, RecvInter: 30, Subs: subs[:1]}}, nil, nil))
	if len(ws) != 1 || ws[0].Kind != CannotJudge || ws[0].Metric != "loss" {
		t.Errorf("no publisher on this machine: %+v", ws)
	}
	fromLog := window.Topic{Name: "/pts", PubCount: 1, SubCount: 1, RecvInter: 30, Loss: window.Loss{Judged: 3, WorstPct: 7.5, Node: "/lossy", Pid: 11}}
	if ws := judge(New(s), win([]window.Topic{fromLog}, nil, nil)); len(ws) != 1 || ws[0].Kind != TopicLoss || ws[0].Value != 7.5 || ws[0].Pid != 11 {
		t.Errorf("from a log: %+v", ws)
	}
}

// A bytes rule (design note 0033) judges its side's bytes a second, exact
// or sampled; without bytes data, or with messages nothing could size, it
// says it cannot judge rather than pass.
func TestBytesRule(t *testing.T) {
	s := mustSpec(t, "topics:\n  /img: {max_bytes_per_s: 1e6, side: pub}\n  /scan: {min_bytes_per_s: 1000}\n")
	img := window.Topic{Name: "/img", PubCount: 1, PubInter: 30, PubBytes: window.Bytes{How: window.BytesSampled, PerS: 2.7e7}}
	scan := window.Topic{Name: "/scan", SubCount: 1, RecvInter: 10, RecvBytes: window.Bytes{How: window.BytesExact, PerS: 5000}}
	ws := judge(New(s), win([]window.Topic{img, scan}, nil, nil))
	if len(ws) != 1 || ws[0].Kind != TopicBytes || ws[0].Topic != "/img" || ws[0].Value != 2.7e7 || ws[0].Max != 1e6 {
		t.Errorf("an image stream over its bound, a scan within: %+v", ws)
	}
	scan.RecvBytes.PerS = 10
	img.PubBytes.PerS = 5e5
	if ws := judge(New(s), win([]window.Topic{img, scan}, nil, nil)); len(ws) != 1 || ws[0].Topic != "/scan" || ws[0].Min != 1000 {
		t.Errorf("a scan under its floor: %+v", ws)
	}
	img.PubBytes, scan.RecvBytes = window.Bytes{}, window.Bytes{How: window.BytesNone, Messages: 10}
	ws = judge(New(s), win([]window.Topic{img, scan}, nil, nil))
	if len(ws) != 2 || ws[0].Kind != CannotJudge || ws[0].Reason != NoBytesData || ws[1].Kind != CannotJudge || ws[1].Reason != BytesNotMeasured {
		t.Errorf("bytes off, bytes not measured: %+v", ws)
	}
}

// Two runs appended to one recording are judged as two: the second run's
// first window is its ramp-up, and a verdict's age does not carry over.
// Parallel logs of one run are still merged.
func TestJudgeRunsOneByOne(t *testing.T) {
	s := mustSpec(t, "topics:\n  /t: {min_hz: 45}\n")
	slow := []window.Topic{{Name: "/t", RecvInter: 10, SubCount: 1}}
	var log []*window.Window
	for i := int64(0); i < 4; i++ { // run a: slow throughout
		w := logWin(1000*i, 1, slow)
		w.Run = "a"
		log = append(log, w)
	}
	for i := int64(0); i < 3; i++ { // run b, a minute later: slow too
		w := logWin(60000+1000*i, 1, slow)
		w.Run = "b"
		log = append(log, w)
	}
	ms := JudgeRuns(s, [][]*window.Window{log}, false)
	var judged []Moment
	for _, m := range ms {
		if m.Judged {
			judged = append(judged, m)
		}
	}
	if len(ms) != 7 || len(judged) != 5 {
		t.Fatalf("%d moments, %d judged; want 7 and 5 (each run's first window is a ramp-up)", len(ms), len(judged))
	}
	if b := judged[3]; b.W.Run != "b" || len(b.Warns) != 1 || b.Warns[0].Age != 0 {
		t.Errorf("run b's first judged window: %+v", b)
	}
	// One run split over two parallel logs is one group, merged as before.
	other := []*window.Window{logWin(400, 1, slow), logWin(1400, 1, slow), logWin(2400, 1, slow), logWin(3400, 1, slow)}
	for _, w := range other {
		w.Run = "c"
	}
	ms = JudgeRuns(s, [][]*window.Window{log[:4], other}, false)
	if len(ms) != 4 || ms[1].W.Topic("/t").RecvInter != 20 {
		t.Errorf("parallel logs of one span: %d moments, %+v", len(ms), ms[1].W.Topic("/t"))
	}
}

// A timer rule on a live node with no timer the probe sees (rclpy's fire no
// tracepoint) cannot be judged, with its reason; never a violation at 0 Hz.
// A node that is not there at all still fails its timer rule.
func TestTimerRuleWithoutTimers(t *testing.T) {
	e := New(mustSpec(t, "timers:\n  /py_talker: {min_hz: 5}\n  /gone: {min_hz: 5}\n"))
	e.Grace = 1
	var ws []Warning
	for i := 0; i < 3; i++ {
		ws = e.Judge(win(nil, []string{"/py_talker"}, nil), false, time.Now())
	}
	byNode := map[string]Warning{}
	for _, w := range ws {
		byNode[w.Node] = w
	}
	if w := byNode["/py_talker"]; w.Kind != CannotJudge || w.Metric != "timer" || w.Reason != NoTimerTracepoint ||
		!strings.Contains(w.Why(), "rclpy timers fire none") {
		t.Errorf("an rclpy node's timer rule: %+v", w)
	}
	if w := byNode["/gone"]; w.Kind != TimerRate || w.Value != 0 {
		t.Errorf("an absent node's timer rule: %+v", w)
	}
}

// A violated receive rule, and a starved subscription, carry the cause the
// window's diagnosis found (issue 25); a healthy subscription's does not.
func TestReceiveVerdictsCarryTheCause(t *testing.T) {
	s := mustSpec(t, "topics:\n  /chatter: {min_hz: 15, side: recv}\n")
	w := win([]window.Topic{{Name: "/chatter", PubInter: 20, PubAny: 20, PubCount: 1, PubInterSeen: true, SubCount: 1, RecvSeen: true, Published: 20,
		Pubs: []window.EndpointRate{{Pid: 1, Node: "/talker", Inter: 20, Alive: true, Exposure: 1, Total: [2]uint64{40, 0}}},
		Subs: []window.EndpointRate{{Pid: 2, Node: "/listener", Alive: true, Exposure: 1}}}}, nil, nil)
	w.Unmatched = []window.Unmatched{
		{Topic: "/chatter", Node: "/talker", Pid: 1, Pub: true, Reason: "qos_incompatible", Error: true, Detail: "pub side"},
		{Topic: "/chatter", Node: "/listener", Pid: 2, Reason: "qos_incompatible", Error: true,
			Detail: "reliability: publisher best_effort, subscription reliable"},
	}
	const want = "qos_incompatible (reliability: publisher best_effort, subscription reliable)"
	ws := judge(New(s), w)
	for _, v := range ws { // the topic's receive rate, and the subscription's own
		if v.Kind != TopicRate || v.Cause != want {
			t.Errorf("receive rule: %+v, want cause %q", v, want)
		}
	}
	if len(ws) == 0 {
		t.Error("the receive rule holds on a subscription that hears nothing")
	}
	d := NewLagDetector()
	var starved []Warning
	for i := 0; i < 4; i++ {
		starved = d.Observe(w, false, time.Unix(int64(i), 0))
	}
	if len(starved) != 1 || starved[0].Kind != RecvStarved || starved[0].Cause != want {
		t.Errorf("starved: %+v, want cause %q", starved, want)
	}
	// The publisher's finding becomes a warning; the subscription's is said by recv_starved already.
	if um := UnmatchedWarnings(w, starved); len(um) != 1 || um[0].Kind != Unmatched || um[0].Side != spec.Pub || um[0].Node != "/talker" ||
		um[0].Reason != "qos_incompatible" {
		t.Errorf("unmatched warnings %+v", um)
	}
	if um := UnmatchedWarnings(w, nil); len(um) != 2 {
		t.Errorf("without recv_starved, both findings are warnings: %+v", um)
	}
	if c := Cause(w, "/chatter", "/other", 3); c != "" {
		t.Errorf("another subscription's cause: %q", c)
	}
}

// A live view's warnings name a starved subscription once (the recorder's
// detector said it; the view's own adds only the lagging ones) and a
// lagging one once.
func TestViewWarningsSayEachSubscriptionOnce(t *testing.T) {
	w := win([]window.Topic{{Name: "/chatter", PubInter: 20, PubAny: 20, PubCount: 1, PubInterSeen: true, SubCount: 2, RecvSeen: true, Published: 20,
		Pubs: []window.EndpointRate{{Pid: 1, Node: "/talker", Inter: 20, Alive: true, Exposure: 1, Total: [2]uint64{40, 0}}},
		Subs: []window.EndpointRate{{Pid: 2, Node: "/deaf", Alive: true, Exposure: 1},
			{Pid: 3, Node: "/slow", Inter: 5, Alive: true, Exposure: 1, Total: [2]uint64{10, 0}}}}}, nil, nil)
	recorder, view := NewLagDetector(), NewLagDetector()
	var got []Warning
	for i := 0; i < 4; i++ {
		now := time.Unix(int64(i), 0)
		var recorded []Warning
		for _, m := range recorder.Observe(w, false, now) { // as internal/recorder passes them
			if m.Kind == RecvStarved {
				recorded = append(recorded, m)
			}
		}
		got = view.ViewWarnings(w, recorded, false, now)
	}
	count := map[string]int{}
	for _, x := range got {
		count[string(x.Kind)+" "+x.Node]++
	}
	if len(got) != 2 || count["recv_starved /deaf"] != 1 || count["recv_lag /slow"] != 1 {
		t.Errorf("view warnings %v, want recv_starved /deaf and recv_lag /slow once each", count)
	}
}
