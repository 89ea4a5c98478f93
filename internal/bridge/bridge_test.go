package bridge

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

func win() *window.Window {
	return &window.Window{TsNs: 10_500_000_000, Seconds: 1,
		Topics: []window.Topic{ // sorted by name, as windows are
			{Name: "/idle", SubCount: 1},
			{Name: "/scan", PubAny: 10, PubInter: 10, RecvInter: 10, PubCount: 1, SubCount: 2, PubInterSeen: true, RecvSeen: true,
				RecvGap: window.GapStats{HasData: true, N: 10, MeanMs: 100, MaxMs: 104.9, MinMs: 96.3, StddevMs: 2},
				Pubs:    []window.EndpointRate{{Pid: 1, Node: "/lidar", Inter: 10, Alive: true, Delta: [2]uint64{10, 0}, Total: [2]uint64{100, 0}}},
				Subs: []window.EndpointRate{{Pid: 2, Node: "/ctl", Inter: 10, Alive: true, Delta: [2]uint64{10, 0}, Total: [2]uint64{100, 0}},
					{Pid: 3, Node: "/py_listener", Alive: true}}}, // rclpy: never counted
			{Name: "/tf", PubAny: 0, PubCount: 1, PubInterSeen: true, Pubs: []window.EndpointRate{{Pid: 1, Node: "/base", Alive: true, Total: [2]uint64{50, 0}}}},
		},
		Procs: []window.Proc{{Pid: 1, Alive: true, Nodes: []string{"/base", "/lidar"}}, {Pid: 2, Alive: false, Nodes: []string{"/ctl"}}},
	}
}

func TestStatistics(t *testing.T) {
	ms := Statistics(win())
	// /scan: its counted subscriber (/ctl) only; /tf: nobody receives it, so its publisher.
	if len(ms) != 4 || ms[0].SourceName != "/ctl" || ms[0].MetricsSource != "/scan" || ms[0].Unit != "ms" || ms[1].Unit != "Hz" ||
		ms[2].SourceName != "/base" || ms[2].MetricsSource != "/tf" {
		t.Fatalf("%+v", ms)
	}
	p := ms[0].Points // rclcpp's order: avg, max, min, count, stddev
	if p[0] != (DataPoint{Average, 100}) || p[1] != (DataPoint{Maximum, 104.9}) || p[2] != (DataPoint{Minimum, 96.3}) ||
		p[3] != (DataPoint{SampleCount, 10}) || p[4] != (DataPoint{Stddev, 2}) {
		t.Errorf("period points %+v", p)
	}
	if ms[1].Points[0].Data != 10 || ms[1].Points[3].Data != 10 || !math.IsNaN(ms[1].Points[1].Data) {
		t.Errorf("rate points %+v", ms[1].Points)
	}
	// An empty window: NaN values and a zero count, as rclcpp sends.
	if p := ms[2].Points; !math.IsNaN(p[0].Data) || p[3].Data != 0 {
		t.Errorf("silent /tf period %+v", p)
	}
	// With latency data, one message-age statistic per topic, merged over its subscriptions.
	w := win()
	w.Topics[1].Latency = window.GapStats{HasData: true, N: 10, MeanMs: 12.5, MaxMs: 20.48, MinMs: 8.2}
	w.Topics[1].Loss = window.Loss{Judged: 1, WorstPct: 3.25, Node: "/ctl", Pid: 2}
	w.Topics[1].PubBytes = window.Bytes{How: window.BytesSampled, PerS: 72000.4, MeanSize: 7200.04, Messages: 10}
	w.Topics[1].RecvBytes = window.Bytes{How: window.BytesNone, Messages: 3}
	ms = Statistics(w)
	if len(ms) != 5 || ms[2].SourceName != AgeSource || ms[2].MetricsSource != "/scan" || ms[2].Unit != "age_ms" ||
		ms[2].Points[0] != (DataPoint{Average, 12.5}) || ms[2].Points[1] != (DataPoint{Maximum, 20.48}) ||
		ms[2].Points[2] != (DataPoint{Minimum, 8.2}) || ms[2].Points[3] != (DataPoint{SampleCount, 10}) {
		t.Errorf("message age: %+v", ms)
	}
	arr := Diagnostics(w, nil, nil, "robot")
	got := map[string]string{}
	for _, kv := range arr.Status[1].Values {
		got[kv.Key] = kv.Value
	}
	if arr.Status[1].Name != "/scan" || got["current_delay_from_realtime_ms"] != "12.500" || got["max_delay_ms"] != "20.480" || got["worst_loss_pct"] != "3.25" ||
		got["pub_bytes_per_s"] != "72000" || got["pub_bytes"] != "sampled" || got["pub_mean_bytes"] != "7200" || got["recv_bytes"] != "not_measured" {
		t.Errorf("/scan diagnostics: %+v", arr.Status[1])
	}
	if ms[0].Start != (Time{9, 500_000_000}) || ms[0].Stop != (Time{10, 500_000_000}) {
		t.Errorf("window %+v %+v", ms[0].Start, ms[0].Stop)
	}
}

func TestDiagnosticsLevels(t *testing.T) {
	s, err := spec.Parse([]byte("topics:\n  /scan: {min_hz: 9, max_hz: 11}\n  /missing: {min_hz: 1}\nnodes: [/ctl, /never]\n"))
	if err != nil {
		t.Fatal(err)
	}
	warns := []health.Warning{
		{Kind: health.TopicRate, Topic: "/scan", Side: spec.Recv, Value: 8, Min: 9, Max: 11},
		{Kind: health.TopicMissing, Topic: "/missing", Side: spec.Recv},
		{Kind: health.NodeMissing, Node: "/ctl"},
		{Kind: health.NodeMissing, Node: "/never"},
	}
	a := Diagnostics(win(), s, warns, "robot-1")
	got := map[string]Status{}
	for _, st := range a.Status {
		got[st.Name] = st
	}
	for name, want := range map[string]uint8{"/scan": WARN, "/tf": ERROR, "/idle": STALE, "/missing": ERROR, "/lidar": OK, "/base": OK, "/ctl": ERROR, "/never": ERROR} {
		if st, ok := got[name]; !ok || st.Level != want {
			t.Errorf("%s: %+v, want level %d", name, st, want)
		}
	}
	scan := got["/scan"]
	values := map[string]string{}
	for _, kv := range scan.Values {
		values[kv.Key] = kv.Value
	}
	if values["recv_hz"] != "10.00" || values["recv_any_min_hz"] != "9" || values["recv_any_max_hz"] != "11" ||
		values["frame_rate_msg"] != "10.00" || values["max_gap_ms"] != "104.9" || scan.HardwareID != "robot-1" ||
		scan.Message != "recv 8.00 Hz outside [9, 11]" {
		t.Errorf("/scan: %q %v", scan.Message, values)
	}
	if got["/tf"].Message != "stalled" || got["/ctl"].Message != "missing" || a.Stamp != (Time{10, 500_000_000}) {
		t.Errorf("messages: %q %q", got["/tf"].Message, got["/ctl"].Message)
	}
}

// env is an environment of the given name, value pairs.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestEnv(t *testing.T) {
	for _, c := range []struct {
		env  func(string) string
		want uint32
		bad  bool
	}{{env(), 0, false}, {env("ROS_DOMAIN_ID", "42"), 42, false}, {env("ROS_DOMAIN_ID", " 7 "), 7, false},
		{env("ROS_DOMAIN_ID", "233"), 0, true}, {env("ROS_DOMAIN_ID", "-1"), 0, true}, {env("ROS_DOMAIN_ID", "x"), 0, true}} {
		got, err := DomainFromEnv(c.env)
		if got != c.want || (err != nil) != c.bad {
			t.Errorf("%v: %d %v", c.env("ROS_DOMAIN_ID"), got, err)
		}
	}
}

// The configuration is rmw_cyclonedds' fragment for the distro's rules, then
// CYCLONEDDS_URI (never instead of it); rcl's warnings and fallbacks for bad
// values come with it.
func TestComposeDiscovery(t *testing.T) {
	const uri = "file:///etc/cyclonedds.xml"
	auto := "<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>"
	for _, c := range []struct {
		distro string
		env    func(string) string
		config string
		warn   string
	}{
		{"humble", env(), "", ""},
		{"humble", env("ROS_LOCALHOST_ONLY", "0", "CYCLONEDDS_URI", uri), uri, ""},
		{"humble", env("ROS_LOCALHOST_ONLY", "1", "CYCLONEDDS_URI", uri), humbleLocalhost + uri, ""},
		{"humble", env("ROS_LOCALHOST_ONLY", "yes"), "", ""}, // Humble's rcl: only "1" enables it
		{"jazzy", env(), "<CycloneDDS><Domain>" + auto + "</Discovery></Domain></CycloneDDS>,", ""},
		{"jazzy", env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST", "ROS_STATIC_PEERS", "10.0.0.2;;robot2", "CYCLONEDDS_URI", uri),
			"<CycloneDDS><Domain><General><AllowMulticast>false</AllowMulticast></General>" + auto +
				`<Peers><Peer address="localhost"/><Peer address="10.0.0.2"/><Peer address="robot2"/></Peers></Discovery></Domain></CycloneDDS>,` + uri, ""},
		{"jazzy", env("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET", "ROS_STATIC_PEERS", "127.0.0.1"),
			"<CycloneDDS><Domain>" + auto + `<Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>,`, ""},
		{"kilted", env("ROS_AUTOMATIC_DISCOVERY_RANGE", "SYSTEM_DEFAULT", "ROS_STATIC_PEERS", "127.0.0.1", "CYCLONEDDS_URI", uri), uri,
			"1 static peers were specified, but discovery is set to use the RMW implementation default"},
		{"jazzy", env("ROS_LOCALHOST_ONLY", "1", "ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET", "ROS_STATIC_PEERS", "10.0.0.2"),
			"<CycloneDDS><Domain><General><AllowMulticast>false</AllowMulticast></General>" + auto +
				`<Peers><Peer address="localhost"/></Peers></Discovery></Domain></CycloneDDS>,`, "'localhost_only' is enabled"},
		{"jazzy", env("ROS_AUTOMATIC_DISCOVERY_RANGE", "everywhere"),
			"<CycloneDDS><Domain><General><AllowMulticast>false</AllowMulticast></General>" + auto +
				`<Peers><Peer address="localhost"/></Peers></Discovery></Domain></CycloneDDS>,`,
			"Invalid value 'everywhere' specified for 'ROS_AUTOMATIC_DISCOVERY_RANGE', assuming localhost only"},
		{"jazzy", env("ROS_STATIC_PEERS", strings.Repeat("x", 300)), "<CycloneDDS><Domain>" + auto + "</Discovery></Domain></CycloneDDS>,",
			"is too long (maximum of 255); skipping"},
	} {
		d := ComposeDiscovery(c.distro, c.env, Host{LoopbackMulticast: true})
		warns := strings.Join(d.Warnings, "\n")
		if d.Config != c.config || (c.warn == "") != (warns == "") || !strings.Contains(warns, c.warn) {
			t.Errorf("%s %v:\n got %q\nwant %q\nwarnings %q", c.distro, c.env("ROS_AUTOMATIC_DISCOVERY_RANGE"), d.Config, c.config, warns)
		}
	}
	// Humble localhost-only on a loopback that cannot multicast: the bridge
	// adds 127.0.0.1 as a peer, and says so.
	d := ComposeDiscovery("humble", env("ROS_LOCALHOST_ONLY", "1", "CYCLONEDDS_URI", uri), Host{})
	if d.Config != humbleLocalhost+humbleLoopbackPeer+uri || len(d.Peers) != 1 || !strings.Contains(d.PeersFrom, "cannot multicast") {
		t.Errorf("humble localhost, no loopback multicast: %q %v %q", d.Config, d.Peers, d.PeersFrom)
	}
	// OFF: multicast off, a tag of this process, no peers (rcl does not read them).
	d = ComposeDiscovery("jazzy", env("ROS_AUTOMATIC_DISCOVERY_RANGE", "OFF", "ROS_STATIC_PEERS", "127.0.0.1"), Host{})
	if !strings.Contains(d.Config, "<AllowMulticast>false</AllowMulticast>") || !strings.Contains(d.Config, "<ParticipantIndex>none</ParticipantIndex><Tag>ros_discovery_off_") ||
		strings.Contains(d.Config, "Peer") || len(d.Peers) != 0 {
		t.Errorf("OFF: %q %v", d.Config, d.Peers)
	}
	if err := CheckURI("file:///nonexistent/cyclonedds.xml"); err == nil || !strings.Contains(err.Error(), "/nonexistent/cyclonedds.xml") {
		t.Errorf("a missing CYCLONEDDS_URI file: %v", err)
	}
	if err := CheckURI("<CycloneDDS/>"); err != nil {
		t.Errorf("inline XML: %v", err)
	}
}

// A publisher whose publishes Humble cannot see gives no pub_* figure in
// /statistics or /diagnostics: absent, never a zero.
func TestHiddenPublishesHaveNoFigure(t *testing.T) {
	w := &window.Window{TsNs: 1e9, Seconds: 1, Topics: []window.Topic{{Name: "/image", PubCount: 1, PubHidden: true, PubAny: 0,
		Pubs: []window.EndpointRate{{Pid: 1, Node: "/camera", Alive: true, PubHidden: true, Total: [2]uint64{5, 0}}}}},
		Procs: []window.Proc{{Pid: 1, Alive: true, Nodes: []string{"/camera"}}}}
	if ms := Statistics(w); len(ms) != 0 {
		t.Errorf("statistics of an unmeasured publisher: %+v", ms)
	}
	diag := Diagnostics(w, nil, nil, "host")
	seen := false
	for _, st := range diag.Status {
		seen = seen || strings.Contains(st.Name, "/image")
		for _, kv := range st.Values {
			if kv.Key == "pub_hz" || kv.Key == "frame_rate_msg" {
				t.Errorf("%s: %s=%s for an unmeasured publisher", st.Name, kv.Key, kv.Value)
			}
		}
	}
	if !seen {
		t.Errorf("no diagnostics status for /image: %+v", diag)
	}
}

func TestParseNodeName(t *testing.T) {
	for in, want := range map[string]Node{
		"/pulse_bridge":        {"/", "pulse_bridge"},
		"pulse_bridge":         {"/", "pulse_bridge"},
		"/robot1/pulse_bridge": {"/robot1", "pulse_bridge"},
		"/a/_b/C9":             {"/a/_b", "C9"},
	} {
		got, err := ParseNodeName(in)
		if err != nil || got != want {
			t.Errorf("ParseNodeName(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if got.FullName() != "/"+strings.TrimPrefix(in, "/") {
			t.Errorf("FullName of %q = %q", in, got.FullName())
		}
	}
	for _, in := range []string{"", "/", "/9lives", "/robot/", "/ro-bot/x", "//x", "/x y", "/robot/9x", "/" + strings.Repeat("a", 256)} {
		if n, err := ParseNodeName(in); err == nil {
			t.Errorf("ParseNodeName(%q) = %+v, want an error", in, n)
		} else if !strings.Contains(err.Error(), "--node-name") {
			t.Errorf("ParseNodeName(%q): error %q does not name the flag", in, err)
		}
	}
}

func TestStatisticsGap(t *testing.T) {
	for _, c := range []struct {
		n      int
		period time.Duration
		want   time.Duration
	}{
		{0, time.Second, 0}, {1, time.Second, 0}, {40, time.Second, 4 * time.Millisecond},
		{1001, time.Second, 500 * time.Microsecond}, {11, 100 * time.Millisecond, 4 * time.Millisecond}, {51, 100 * time.Millisecond, time.Millisecond},
	} {
		if got := StatisticsGap(c.n, c.period); got != c.want {
			t.Errorf("StatisticsGap(%d, %v) = %v, want %v", c.n, c.period, got, c.want)
		}
		if c.n > 1 && StatisticsGap(c.n, c.period)*time.Duration(c.n-1) > c.period/2 {
			t.Errorf("%d messages spread over more than half of %v", c.n, c.period)
		}
	}
}

// A node's status carries its busy share and slowest callback (rclcpp; an
// rclpy node has neither key), and a callback_slow verdict is said on the
// node, not on the topic the callback serves.
func TestDiagnosticsCallbackTiming(t *testing.T) {
	w := &window.Window{
		Procs: []window.Proc{{Pid: 1, Alive: true, Nodes: []string{"/planner"}}, {Pid: 2, Alive: true, Nodes: []string{"/py"}},
			{Pid: 3, Alive: true, Nodes: []string{"/hog", "/starved"}}},
		Busy: []window.NodeBusy{{Node: "/planner", Pid: 1, Pct: 97.25, Measured: true}, {Node: "/py", Pid: 2},
			{Node: "/hog", Pid: 3, Pct: 95, Measured: true}, {Node: "/starved", Pid: 3, Pct: 1, Measured: true}},
		Callbacks: []window.Callback{{Pid: 1, Node: "/planner", Kind: "subscription", Name: "/map", Measured: true,
			Duration: window.Durations{N: 3, MaxMs: 41.9}}},
		// pid 3's one thread serves /hog and /starved: /starved's own callbacks are idle, its thread is not
		Threads: []window.Thread{{Pid: 2, Tid: 21, Waiter: true, OutsideWaitPct: 12.5}, {Pid: 3, Tid: 31, BusyPct: 96, Waiter: true, OutsideWaitPct: 97}},
	}
	warns := []health.Warning{{Kind: health.CallbackSlow, Node: "/planner", Pid: 1, Topic: "/map", Metric: "subscription", Value: 41.9, Bound: 20, Timer: -1}}
	arr := Diagnostics(w, nil, warns, "robot")
	byName := map[string]Status{}
	for _, st := range arr.Status {
		byName[st.Name] = st
	}
	p := byName["/planner"]
	vals := map[string]string{}
	for _, kv := range p.Values {
		vals[kv.Key] = kv.Value
	}
	if vals["busy_pct"] != "97.2" && vals["busy_pct"] != "97.3" || vals["slowest_callback_ms"] != "41.900" || p.Level != WARN ||
		!strings.Contains(p.Message, "subscription callback /map took at least 41.9 ms > 20 ms") {
		t.Errorf("/planner: %+v", p)
	}
	for _, kv := range byName["/py"].Values {
		if kv.Key == "busy_pct" || kv.Key == "slowest_callback_ms" {
			t.Errorf("/py is not timed, yet has %s=%s", kv.Key, kv.Value)
		}
	}
	if st := byName["/starved"]; st.Level != WARN || st.Message != "executor thread 31 of its process 97 % busy: no time left for its callbacks" {
		t.Errorf("/starved, served by a saturated thread: %+v", st)
	}
	thread := func(node string) string {
		for _, kv := range byName[node].Values {
			if kv.Key == "executor_thread_pct" {
				return kv.Value
			}
		}
		return ""
	}
	if thread("/py") != "12.5" || thread("/starved") != "97.0" || thread("/planner") != "" || byName["/py"].Level != OK {
		t.Errorf("executor_thread_pct: /py %q, /starved %q, /planner %q (no thread seen: absent)", thread("/py"), thread("/starved"), thread("/planner"))
	}
	if _, ok := byName["/map"]; ok {
		t.Errorf("the callback verdict made a topic status: %+v", byName["/map"])
	}
}

// A node whose subscription meets nobody is a warning on /diagnostics, with
// the reason and both sides' values; a healthy node stays OK (issue 25).
func TestDiagnosticsSayWhySilent(t *testing.T) {
	w := &window.Window{
		Procs: []window.Proc{{Pid: 1, Alive: true, Nodes: []string{"/talker"}}, {Pid: 2, Alive: true, Nodes: []string{"/listener", "/calm"}}},
		Unmatched: []window.Unmatched{
			{Topic: "/chatter", Node: "/listener", Pid: 2, Reason: "qos_incompatible", Error: true, Detail: "reliability: publisher best_effort, subscription reliable"},
			{Topic: "/ok", Node: "/calm", Pid: 2, Reason: "cross_vendor", Detail: "a warning only"},
		},
	}
	byName := map[string]Status{}
	for _, st := range Diagnostics(w, nil, nil, "robot").Status {
		byName[st.Name] = st
	}
	l := byName["/listener"]
	if l.Level != WARN || l.Message != "hears nothing of /chatter: qos_incompatible (reliability: publisher best_effort, subscription reliable)" {
		t.Errorf("/listener: %+v", l)
	}
	found := false
	for _, kv := range l.Values {
		found = found || kv == KeyValue{"unmatched /chatter", "qos_incompatible"}
	}
	if !found {
		t.Errorf("/listener's values %+v", l.Values)
	}
	if byName["/calm"].Level != OK || byName["/talker"].Level != OK {
		t.Errorf("healthy nodes: %+v %+v", byName["/calm"], byName["/talker"])
	}
}

// Each service and action here has a status of its own with its servers,
// clients, rate, times and open calls; a client with no server here warns,
// a verdict raises the level and says why (issue 26).
func TestDiagnosticsServices(t *testing.T) {
	w := &window.Window{TsNs: 1, Seconds: 1, Calls: []window.Call{
		{Pid: 1, Node: "/srv", Name: "/reset", Alive: true, Started: 20, Answered: 20, Hz: 20, Time: window.Durations{N: 20, P99Ms: 5.1}},
		{Pid: 2, Node: "/cli", Name: "/reset", Client: true, HasServer: true, Alive: true, Started: 20, Answered: 20, Hz: 20, Time: window.Durations{N: 20, P99Ms: 5.6}},
		{Pid: 2, Node: "/cli", Name: "/map", Client: true, Alive: true, Started: 1, Hz: 1, Open: []float64{3000}},
		{Pid: 3, Node: "/nav", Name: "/navigate/_action/send_goal", Alive: true, Started: 1, Answered: 1, Hz: 1},
	}}
	warns := []health.Warning{{Kind: health.ServiceSlow, Topic: "/reset", Node: "/srv", Pid: 1, Side: "server", Value: 2, Bound: 5},
		{Kind: health.ServiceMissing, Topic: "/plan", Side: "server", Min: 1}}
	got := map[string]Status{}
	for _, st := range Diagnostics(w, nil, warns, "robot").Status {
		got[st.Name] = st
	}
	if st := got["service:/reset"]; st.Level != WARN || st.Message != "server /srv: 2 answers later than 5 ms" ||
		!slices.Contains(st.Values, KeyValue{"handling_p99_ms", "5.100"}) || !slices.Contains(st.Values, KeyValue{"round_trip_p99_ms", "5.600"}) {
		t.Errorf("/reset: %+v", st)
	}
	if st := got["service:/map"]; st.Level != WARN || !strings.Contains(st.Message, "no process on this machine serves it") ||
		!slices.Contains(st.Values, KeyValue{"open_calls", "1"}) {
		t.Errorf("/map: %+v", st)
	}
	if st := got["action:/navigate"]; st.Level != OK || !slices.Contains(st.Values, KeyValue{"servers", "1"}) {
		t.Errorf("/navigate: %+v", st)
	}
	if st := got["service:/plan"]; st.Level != ERROR || st.Message != "no live server" {
		t.Errorf("/plan: %+v", st)
	}
	if _, ok := got["/reset"]; ok {
		t.Errorf("a service verdict made a topic status")
	}
}
