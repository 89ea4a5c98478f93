package logfmt

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ros2_pulse/internal/window"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixture covers every emit rule: a plain inter topic, an intra topic with a
// publish-side PUB line, a stalled subscription (RECV at zero), a stalled
// publisher (TOPIC at zero), an idle declared topic, a hostile name, a live
// and an exited process.
func fixture() *window.Window {
	return &window.Window{
		TsNs: 1764460800123456789, Seconds: 2.0004,
		Topics: []window.Topic{
			{Name: "/camera/image", PubIntra: 30, PubAny: 30, RecvIntra: 30, PubIntraSeen: true, RecvSeen: true},
			{Name: "/chatter", PubInter: 10, PubAny: 10, RecvInter: 9.5, PubInterSeen: true, RecvSeen: true,
				PubGap:    window.GapStats{HasData: true, N: 20, MeanMs: 100.0004, StddevMs: 0.51284, P50Ms: 100.352, P90Ms: 102.4, P99Ms: 102.4, MaxMs: 102.4, OpenMs: 12.5},
				RecvGap:   window.GapStats{HasData: true, N: 19, MeanMs: 105.26, P50Ms: 100.352, P90Ms: 102.4, P99Ms: 851.968, MaxMs: 851.968, OpenMs: 901.2},
				Latency:   window.GapStats{HasData: true, N: 19, MeanMs: 1.25, P50Ms: 1.088, P90Ms: 2.048, P99Ms: 3.584, MaxMs: 3.584},
				Published: 20, Loss: window.Loss{Judged: 1, WorstPct: 5, Node: "/listener", Pid: 200}},
			{Name: "/idle", PubCount: 1},
			{Name: "/stalled_pub", PubInterSeen: true, PubCount: 1},
			{Name: "/stalled_sub", RecvSeen: true, SubCount: 1},
			{Name: "/weird name\n\"q\"", PubInter: 1, PubInterSeen: true},
		},
		Nodes: []string{"/camera_driver", "/talker"},
		Timers: []window.Timer{{Node: "/talker", Ordinal: 0, PeriodMs: 100, Hz: 9.5, LateKnown: true, Overruns: 1,
			Late: window.Durations{N: 19, MeanMs: 0.05, P99Ms: 2.1, MaxMs: 2.3}}, {Node: "/talker", Ordinal: 1, PeriodMs: 1000, Hz: 0}},
		Callbacks: []window.Callback{
			{Pid: 100, Node: "/talker", Kind: "timer", Ordinal: 0, PeriodMs: 100, Measured: true,
				Duration: window.Durations{N: 19, SumMs: 38, MeanMs: 2, P50Ms: 1.9, P90Ms: 2.2, P99Ms: 120.5, MaxMs: 131}},
			{Pid: 200, Node: "/listener", Kind: "subscription", Name: "/chatter", Measured: true, Unended: 1, Function: "Listener::on_chatter(std::shared_ptr<std_msgs::msg::String>)",
				Duration: window.Durations{N: 19, SumMs: 1.9, MeanMs: 0.1, P50Ms: 0.1, P90Ms: 0.1, P99Ms: 0.1, MaxMs: 0.11}},
			{Pid: 300, Node: "/odometry", Kind: "subscription", Name: "/cmd_vel", Why: window.NoCallbackTracepoint}},
		Busy: []window.NodeBusy{{Node: "/listener", Pid: 200, Pct: 0.095, Measured: true}, {Node: "/odometry", Pid: 300, Pct: 41.25, Measured: true, FromWait: true},
			{Node: "/talker", Pid: 100, Pct: 1.9, Measured: true}, {Node: "/py_idle", Pid: 400}},
		Threads: []window.Thread{{Pid: 100, Tid: 101, Name: "talker", Node: "/talker", BusyPct: 1.9, Callbacks: 19, Waiter: true, OutsideWaitPct: 2.5},
			{Pid: 300, Tid: 301, Name: "python3", Node: "/odometry", Waiter: true, OutsideWaitPct: 41.25}},
		Calls: []window.Call{
			{Pid: 100, Node: "/talker", Name: "/add two", Alive: true, Started: 20, Answered: 19, Hz: 10, Unmatched: 1, SendFailed: 2, FailKnown: true,
				Time: window.Durations{N: 19, SumMs: 95, MeanMs: 5, P50Ms: 5, P90Ms: 5, P99Ms: 5, MaxMs: 5}, Hist: []window.Bucket{{B: 42, N: 19}}, Open: []float64{1.25}},
			{Pid: 200, Node: "/listener", Name: "/add two", Client: true, HasServer: true, Started: 20, Answered: 18, Hz: 10, Evicted: 1,
				Time: window.Durations{N: 18, SumMs: 99, MeanMs: 5.5, P50Ms: 5.3, P90Ms: 5.9, P99Ms: 6.1, MaxMs: 6}, Hist: []window.Bucket{{B: 42, N: 10}, {B: 43, N: 8}}},
		},
		Unmatched: []window.Unmatched{
			{Topic: "/chatter", Node: "/listener", Pid: 200, Reason: "qos_incompatible", Error: true, Silent: true,
				Detail: "reliability: publisher best_effort, subscription reliable", Fix: "make the subscription best_effort (or the publisher reliable)",
				Peers: []string{"/talker 100", "/talker2 101"}},
			{Topic: "/ok", Node: "/c", Pid: 300, Reason: "cross_vendor", Detail: "publisher on rmw_fastrtps_cpp, subscription on rmw_cyclonedds_cpp"}},
		Procs: []window.Proc{
			{Pid: 100, Exe: "/opt/ros/lib/talker", Alive: true, Nodes: []string{"/talker"}},
			{Pid: 200, Exe: "/opt/ros/lib/listener", Alive: false, Nodes: []string{"/listener"}},
		},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs\n--- got\n%s--- want\n%s", name, got, want)
	}
}

func TestTextGolden(t *testing.T) {
	golden(t, "window.txt", Render(Text, fixture(), Options{}))
	golden(t, "window_idle.txt", Render(Text, fixture(), Options{EmitIdle: true}))
}

func TestJSONLGolden(t *testing.T) {
	out := Render(JSONL, fixture(), Options{})
	golden(t, "window.jsonl", out)
	if strings.Count(string(out), "\n") != 1 || !strings.HasSuffix(string(out), "\n") {
		t.Fatal("a jsonl window must be exactly one line")
	}
	var v struct {
		TsNs    string           `json:"ts_ns"`
		WindowS float64          `json:"window_s"`
		Topics  []map[string]any `json:"topics"`
		Nodes   []string         `json:"nodes"`
		Warns   []any            `json:"warns"`
		Procs   []map[string]any `json:"procs"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("not valid JSON: %v", err)
	}
	if v.TsNs != "1764460800123456789" || v.Warns == nil || len(v.Procs) != 2 {
		t.Fatalf("decoded: %+v", v)
	}
	names := map[string]map[string]any{}
	for _, tp := range v.Topics {
		names[tp["topic"].(string)] = tp
	}
	if _, ok := names["/weird name\n\"q\""]; !ok {
		t.Error("hostile name did not round-trip through JSON escaping")
	}
	if _, ok := names["/idle"]; ok {
		t.Error("idle topic emitted without EmitIdle")
	}
	if _, ok := names["/stalled_sub"]["pub_inter_hz"]; ok {
		t.Error("absent key must mean not measured: a receive-only topic has no pub keys")
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"text": Text, " jsonl\n": JSONL} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "JSON", "csv"} {
		if _, err := ParseFormat(bad); err == nil {
			t.Errorf("ParseFormat(%q) accepted", bad)
		}
	}
}

// EP lines, byte for byte: a publisher not measured, a subscription with a
// loss and no node.
func TestEndpointLines(t *testing.T) {
	w := &window.Window{TsNs: 5, Seconds: 1, Topics: []window.Topic{{Name: "/t", PubInter: 10, PubInterSeen: true,
		Pubs: []window.EndpointRate{{Pid: 7, Node: "/n", Inter: 10, Intra: 0.5, Alive: true, PubHidden: true}, {Pid: 9, Alive: false}},
		Subs: []window.EndpointRate{{Pid: 8, Inter: 9.25, Alive: true, LossJudged: true, LossPct: 7.5}}}}}
	want := "# ts_ns=5 window_s=1.000\nTOPIC /t 10.000000\n" +
		"EP /t pub pid=7 node=/n inter=10.000000 intra=0.500000 not_measured=1\n" +
		"EP /t recv pid=8 node=- inter=9.250000 intra=0.000000 loss_pct=7.500\n\n"
	if got := string(Render(Text, w, Options{})); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}
