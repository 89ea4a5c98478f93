package top

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"ros2_pulse/internal/cpu"
	"ros2_pulse/internal/health"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

var update = flag.Bool("update", false, "rewrite golden screens")

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// frame builds the fixture robot at second i: /scan steady, /imu stalled
// from the third frame on (with gap data), /cmd_vel warned by the spec,
// /idle never carrying traffic, /doomed's process exited in the last frame,
// /scan's subscription losing 9.1 % of what is published.
func frame(i int) Frame {
	imu := window.Topic{Name: "/imu", PubInter: 100, PubAny: 100, RecvInter: 100, PubCount: 1, SubCount: 1, PubInterSeen: true, RecvSeen: true,
		PubGap: window.GapStats{HasData: true, MaxMs: 10.5, OpenMs: 2},
		Pubs:   []window.EndpointRate{{Pid: 100, Node: "/imu_driver", Inter: 100, Alive: true}},
		Subs:   []window.EndpointRate{{Pid: 300, Node: "/controller", Inter: 100, Alive: true, Total: [2]uint64{500, 0}}}}
	if i >= 2 {
		imu.PubInter, imu.PubAny, imu.RecvInter = 0, 0, 0
		imu.Pubs[0].Inter, imu.Subs[0].Inter = 0, 0
		imu.PubGap = window.GapStats{HasData: true, MaxMs: 10.5, OpenMs: float64(1000*(i-1)) + 840}
	}
	topics := []window.Topic{
		{Name: "/cmd_vel", PubInter: 12, PubAny: 12, RecvInter: 12, PubCount: 1, SubCount: 1, PubInterSeen: true, RecvSeen: true,
			Pubs: []window.EndpointRate{{Pid: 300, Node: "/controller", Inter: 12, Alive: true}},
			Subs: []window.EndpointRate{{Pid: 200, Node: "/base", Inter: 12, Alive: true, LossJudged: true, Delta: [2]uint64{12, 0}}}, // 0.4 % of a core over 12 callbacks: 0.333 ms each
			Loss: window.Loss{Judged: 1, Node: "/base", Pid: 200}},
		{Name: "/idle", SubCount: 1, Subs: []window.EndpointRate{{Pid: 200, Node: "/base", Alive: true}}},
		imu,
		{Name: "/scan", PubInter: 10, PubAny: 10, RecvInter: 5, RecvIntra: 5, PubCount: 1, SubCount: 1, PubInterSeen: true, RecvSeen: true,
			Pubs: []window.EndpointRate{{Pid: 100, Node: "/lidar", Inter: 10 + float64(i%2), Alive: true}},
			Subs: []window.EndpointRate{{Pid: 300, Node: "/controller", Inter: 5, Intra: 5, Alive: true, LossJudged: true, LossPct: 9.1}},
			Loss: window.Loss{Judged: 1, WorstPct: 9.1, Node: "/controller", Pid: 300}},
	}
	topics[3].PubAny = 10 + float64(i%2)
	procs := []window.Proc{
		{Pid: 100, Exe: "/opt/ros/lib/drivers", Alive: true, Nodes: []string{"/imu_driver", "/lidar"}},
		{Pid: 200, Exe: "/opt/ros/lib/base", Alive: true, Nodes: []string{"/base"}},
		{Pid: 300, Exe: "/opt/ros/lib/controller", Alive: true, Nodes: []string{"/controller"}},
		{Pid: 400, Exe: "/opt/ros/lib/doomed", Alive: i < 3, Nodes: []string{"/doomed"}},
	}
	at := t0.Add(time.Duration(i) * time.Second)
	f := Frame{W: &window.Window{TsNs: at.UnixNano(), Seconds: 1, Topics: topics, Procs: procs,
		Nodes: []string{"/base", "/controller", "/imu_driver", "/lidar"},
		// /controller's callbacks fill 97 % of the window: its executor is saturated; /base's an rclpy node's are not measured
		Busy: []window.NodeBusy{{Node: "/controller", Pid: 300, Pct: 97.3, Measured: true}, {Node: "/lidar", Pid: 100, Pct: 2.5, Measured: true},
			{Node: "/imu_driver", Pid: 100, Pct: 93.1, Measured: true}, {Node: "/base", Pid: 200}},
		// /lidar shares its one executor thread with /imu_driver, which fills it: /lidar is starved, though idle itself
		Threads: []window.Thread{{Pid: 100, Tid: 101, Name: "drivers", Node: "/imu_driver", BusyPct: 95.6, Waiter: true, OutsideWaitPct: 98.2, Callbacks: 1100},
			{Pid: 300, Tid: 301, Name: "controller", Node: "/controller", BusyPct: 97.3, Callbacks: 130},
			{Pid: 300, Tid: 302, Name: "controller", Node: "/controller", BusyPct: 1.5, Callbacks: 4}}},
		At: at, Live: true,
		CPU: map[int]cpu.Sample{100: {Pid: 100, CPUPct: 12.5, RSSBytes: 48 << 20}, 200: {Pid: 200, CPUPct: 0.4, RSSBytes: 20 << 20},
			300: {Pid: 300, CPUPct: 31, RSSBytes: 64 << 20}, 400: {Pid: 400, CPUPct: 1, RSSBytes: 10 << 20}}}
	f.Warns = []health.Warning{{Kind: health.TopicRate, Topic: "/cmd_vel", Side: "pub", Transport: "any", Timer: -1, Value: 12, Min: 18, Max: math.Inf(1), Age: 3 * time.Second}}
	if i >= 3 {
		f.Warns = append(f.Warns, health.Warning{Kind: health.NodeMissing, Node: "/doomed", Timer: -1, Age: 0})
	}
	if i >= 2 {
		f.Warns = append(f.Warns, health.Warning{Kind: health.RecvLag, Topic: "/imu", Node: "/controller", Pid: 300, Value: 0, Min: 100, Age: time.Duration(i-2) * time.Second})
	}
	return f
}

// model feeds frames 0..n-1 into a fresh model of the given size.
func model(n, w, h int) tea.Model {
	var m tea.Model = New("live 1s", false)
	m, _ = m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	for i := 0; i < n; i++ {
		m, _ = m.Update(FrameMsg(frame(i)))
	}
	return m
}

func keysIn(m tea.Model, ks ...string) tea.Model {
	for _, k := range ks {
		var msg tea.KeyMsg
		switch k {
		case "tab":
			msg = tea.KeyMsg{Type: tea.KeyTab}
		case "enter":
			msg = tea.KeyMsg{Type: tea.KeyEnter}
		case "esc":
			msg = tea.KeyMsg{Type: tea.KeyEsc}
		case "down":
			msg = tea.KeyMsg{Type: tea.KeyDown}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		m, _ = m.Update(msg)
	}
	return m
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii) // as with NO_COLOR: golden screens are plain text
	os.Exit(m.Run())
}

// The screens hold the expected rows, states and warnings, and fit exactly.
func TestScreens(t *testing.T) {
	for _, c := range []struct {
		name string
		m    tea.Model
		w, h int
	}{
		{"healthy_80x24.txt", model(2, 80, 24), 80, 24},
		{"faults_80x24.txt", model(4, 80, 24), 80, 24},
		{"faults_120x30.txt", model(4, 120, 30), 120, 30},
		{"sorted_by_status.txt", keysIn(model(4, 80, 24), "s", "s"), 80, 24},
		{"focus_topic.txt", keysIn(model(4, 80, 24), "down", "down", "enter"), 80, 24},
		{"focus_node.txt", keysIn(model(4, 80, 24), "tab", "down", "enter"), 80, 24},
		{"filter.txt", keysIn(model(4, 80, 24), "/", "i", "m", "u", "enter"), 80, 24},
		{"help.txt", keysIn(model(4, 80, 24), "?"), 80, 24},
		{"tiny_40x10.txt", model(4, 40, 10), 40, 10},
	} {
		view := c.m.View()
		lines := strings.Split(view, "\n")
		if len(lines) != c.h {
			t.Errorf("%s: %d lines, want %d", c.name, len(lines), c.h)
		}
		for i, l := range lines {
			if w := lipgloss.Width(l); w > c.w {
				t.Errorf("%s: line %d is %d columns wide, more than %d: %q", c.name, i, w, c.w, l)
			}
		}
		golden(t, c.name, view)
	}
}

// Row content, independent of layout: statuses, states, silence and warnings.
func TestRowsAndWarnings(t *testing.T) {
	view := model(4, 120, 30).View()
	for _, want := range []string{
		"/imu", "STALL", "2.8s", // stalled, silent for 2.84 s (gap data)
		"/cmd_vel", "WARN",
		"/idle",
		"/doomed", "exited",
		"node_missing", "/doomed missing",
		"recv_lag", "/imu /controller[300] receives 0.0 of 100.0 Hz",
		"topic_rate", "/cmd_vel pub 12.0 Hz, expected ≥ 18",
		"31.0", "64.0", // the controller's CPU % and RSS MiB
	} {
		if !strings.Contains(view, want) {
			t.Errorf("screen lacks %q:\n%s", want, view)
		}
	}
	for _, line := range strings.Split(view, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " ›"), "/scan ") && !strings.HasSuffix(line, "ok") {
			t.Errorf("/scan is healthy: %q", line)
		}
		if strings.HasPrefix(strings.TrimLeft(line, " ›"), "/idle ") && !strings.HasSuffix(line, "-") {
			t.Errorf("/idle has no data: %q", line)
		}
	}
}

// With colour, a stalled row is red and an exited node too; the same words
// are there without colour.
func TestColours(t *testing.T) {
	lipgloss.SetColorProfile(termenv.ANSI)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	view := model(4, 100, 30).View()
	if !strings.Contains(view, "\x1b[1;91m STALL") && !strings.Contains(view, "\x1b[91;1m STALL") {
		t.Errorf("STALL is not bold bright red:\n%q", view)
	}
	if !strings.Contains(view, "92m    ok") {
		t.Errorf("ok is not green:\n%q", view)
	}
	if !strings.Contains(view, "91m       exited") && !strings.Contains(view, "91;1m       exited") {
		t.Errorf("exited is not red:\n%q", view)
	}
}

// Pause holds the screen while frames keep arriving; a replay steps through them.
func TestPauseAndReplay(t *testing.T) {
	m := keysIn(model(2, 80, 24), "p")
	m, _ = m.Update(FrameMsg(frame(2)))
	if v := m.View(); !strings.Contains(v, "[PAUSED]") || strings.Contains(v, "STALL") {
		t.Errorf("paused screen changed:\n%s", v)
	}
	m = keysIn(m, "p")
	if v := m.View(); !strings.Contains(v, "STALL") {
		t.Errorf("resume did not show the newest frame:\n%s", v)
	}
	var r tea.Model = New("run.log", true)
	for i := 0; i < 4; i++ {
		r, _ = r.Update(FrameMsg(frame(i)))
	}
	r = keysIn(r, "p", "h", "h", "h")
	if v := r.View(); !strings.Contains(v, "12:00:00") || strings.Contains(v, "STALL") {
		t.Errorf("stepping back to the first frame:\n%s", v)
	}
	r = keysIn(r, "l", "l")
	if v := r.View(); !strings.Contains(v, "12:00:02") || !strings.Contains(v, "STALL") {
		t.Errorf("stepping forward to the third frame:\n%s", v)
	}
	if _, cmd := keysIn(r).Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")}); cmd == nil {
		t.Error("q does not quit")
	}
}

// Keys typed faster than they are read arrive as one message: "/imu" is
// still the filter key followed by a query.
func TestBurstOfKeys(t *testing.T) {
	m := model(4, 80, 24)
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/imu")})
	m = keysIn(m, "enter")
	if v := m.View(); !strings.Contains(v, "filter: imu") || strings.Contains(v, "/scan") {
		t.Errorf("burst:\n%s", v)
	}
}

// Every verdict kind reads as words in the warnings pane, never as its bare kind.
func TestEveryWarningIsDescribed(t *testing.T) {
	for _, w := range []health.Warning{
		{Kind: health.TopicRate, Topic: "/a", Side: "recv", Min: 1, Max: math.Inf(1)},
		{Kind: health.TopicGap, Topic: "/a", Value: 300, Bound: 200},
		{Kind: health.TopicLatency, Topic: "/a", Value: 41, Bound: 30},
		{Kind: health.TopicLoss, Topic: "/tf", Node: "/wifi", Pid: 7, Value: 4, Bound: 1},
		{Kind: health.TopicMissing, Topic: "/a", Side: "pub"},
		{Kind: health.NodeMissing, Node: "/n"},
		{Kind: health.TimerRate, Node: "/n", Timer: 0, Value: 3, Min: 90},
		{Kind: health.RecvLag, Topic: "/a", Node: "/n", Pid: 7, Value: 5, Min: 10},
		{Kind: health.Unmatched, Topic: "/a", Side: "recv", Node: "/n", Pid: 7, Reason: "type_mismatch", Cause: "publisher a/msg/B, subscription a/msg/C"},
		{Kind: health.CannotJudge, Topic: "/a", Metric: "gap", Reason: health.NoGapData, Bound: 200},
		{Kind: health.CannotJudge, Topic: "/a", Metric: "latency", Reason: health.NoLatencyData, Bound: 30},
		{Kind: health.CannotJudge, Topic: "/a", Metric: "loss", Reason: health.NoLocalPublisher, Bound: 1},
		{Kind: health.CannotJudge, Topic: "/a", Metric: "rate", Reason: health.PublishNotVisible},
		{Kind: health.TopicBytes, Topic: "/img", Side: "pub", Value: 2.7e7, Max: 1e6},
		{Kind: health.CannotJudge, Topic: "/img", Metric: "bytes", Reason: health.NoBytesData, Max: 1e6},
	} {
		d := describe(&w)
		name := w.Topic
		if name == "" {
			name = w.Node
		}
		if d == string(w.Kind) || !strings.Contains(d, name) {
			t.Errorf("%s (%s): described as %q", w.Kind, w.Metric, d)
		}
	}
	if d := describe(&health.Warning{Kind: health.TopicLoss, Topic: "/tf", Node: "/wifi", Pid: 7, Value: 4, Bound: 1}); d != "/tf /wifi[7] lost 4.0 % > 1 %" {
		t.Errorf("loss: %q", d)
	}
	if d := describe(&health.Warning{Kind: health.CannotJudge, Topic: "/a", Metric: "loss", Reason: health.NoLocalPublisher, Bound: 1}); !strings.Contains(d, "no publisher on this machine") {
		t.Errorf("loss cannot be judged: %q", d)
	}
	if d := describe(&health.Warning{Kind: health.CannotJudge, Topic: "/a", Metric: "rate", Reason: health.PublishNotVisible}); !strings.Contains(d, "not visible on Humble") {
		t.Errorf("a Humble intra publish rate cannot be judged: %q", d)
	}
}

// With bytes measured on some topic (ROS_PULSE_BYTES=1) the topics table
// grows a BYTES/s column: a topic's publishers' bytes, "~" when sampled,
// "-" where not measured; without bytes it has no such column.
func TestBytesColumn(t *testing.T) {
	if v := model(2, 120, 30).View(); strings.Contains(v, "BYTES/s") {
		t.Fatalf("a column for bytes nobody measured:\n%s", v)
	}
	f := frame(1)
	for i := range f.W.Topics {
		switch f.W.Topics[i].Name {
		case "/scan":
			f.W.Topics[i].PubBytes = window.Bytes{How: window.BytesSampled, PerS: 2.76e7}
		case "/cmd_vel":
			f.W.Topics[i].PubBytes = window.Bytes{How: window.BytesExact, PerS: 672}
		}
	}
	var m tea.Model = New("live 1s", false)
	m, _ = m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	m, _ = m.Update(FrameMsg(f))
	v := m.View()
	for _, want := range []string{"BYTES/s", "~27.6M", " 672 "} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q in\n%s", want, v)
		}
	}
	// the focus view says each endpoint's bytes beside what else the probe learnt of it
	tp := &window.Topic{Name: "/scan", Pubs: []window.EndpointRate{{Pid: 1, Node: "/lidar", QoS: &segment.QoS{Type: "sensor_msgs/msg/LaserScan", Domain: -1},
		Bytes: window.Bytes{How: window.BytesSampled, PerS: 2.76e6, MeanSize: 92000}}},
		Subs: []window.EndpointRate{{Pid: 2, Node: "/ctl", QoS: &segment.QoS{Domain: -1}, Bytes: window.Bytes{How: window.BytesNone, Messages: 1}}}}
	lines := strings.Join(qosLines(tp, "", 0, 200), "\n")
	if !strings.Contains(lines, "~2.76 MB/s, ~92.0 kB a message") || !strings.Contains(lines, "bytes not measured") {
		t.Errorf("focus lines:\n%s", lines)
	}
	if d := describe(&health.Warning{Kind: health.TopicBytes, Topic: "/img", Side: "pub", Value: 2.7e7, Max: 1e6, Min: 0}); d != "/img pub 27.0 MB/s, expected ≤ 1.00 MB/s" {
		t.Errorf("bytes verdict: %q", d)
	}
}

// A topic whose every endpoint's process exited is "exited", not "no data
// yet"; and the cursor stays on its row when a new frame re-sorts the rows
// under it, so Enter focuses the row that was highlighted.
func TestExitedTopicsAndCursorFollowsTheRow(t *testing.T) {
	gone := window.Topic{Name: "/gone", Pubs: []window.EndpointRate{{Pid: 9, Node: "/x", Alive: false}}}
	if s := topicStatus(&gone, false); s != Exited || s.String() != "exited" {
		t.Errorf("a topic of exited processes: %v", s)
	}
	if s := topicStatus(&window.Topic{Name: "/never", SubCount: 1, Subs: []window.EndpointRate{{Alive: true}}}, false); s != NoData {
		t.Errorf("a live topic without traffic: %v", s)
	}

	rated := func(rates map[string]float64) Frame {
		var ts []window.Topic
		for _, name := range []string{"/a", "/b", "/c"} {
			ts = append(ts, window.Topic{Name: name, PubAny: rates[name], PubInter: rates[name], PubCount: 1, PubInterSeen: true,
				Pubs: []window.EndpointRate{{Pid: 1, Node: "/n", Inter: rates[name], Alive: true}}})
		}
		return Frame{W: &window.Window{Seconds: 1, Topics: ts}, At: t0}
	}
	var m tea.Model = New("live", false)
	m, _ = m.Update(FrameMsg(rated(map[string]float64{"/a": 1, "/b": 2, "/c": 3})))
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("s")}) // sort by rate: /c, /b, /a; the cursor stays on /a
	if mm := m.(Model); mm.selected(paneTopics) != "/a" || mm.cursor[paneTopics] != 2 {
		t.Fatalf("after sorting the cursor is on %q at %d, want /a at 2", mm.selected(paneTopics), mm.cursor[paneTopics])
	}
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyUp}) // on /b
	if mm := m.(Model); mm.selected(paneTopics) != "/b" {
		got := mm.selected(paneTopics)
		t.Fatalf("cursor on %q, want /b (rows %v)", got, mm.topics)
	}
	m, _ = m.Update(FrameMsg(rated(map[string]float64{"/a": 3, "/b": 1, "/c": 2}))) // /b moves to the bottom
	m, _ = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if f := m.(Model).focus; f != "topic:/b" {
		t.Errorf("Enter after a re-sort focused %q, want topic:/b", f)
	}
}

// A replayed recording ends on the last window that shows the run, not on
// the empty windows written after its processes exited.
func TestReplayEndsOnTheLastWindowWithTopics(t *testing.T) {
	log := filepath.Join(t.TempDir(), "run.log")
	text := "# ts_ns=1000000000 window_s=1.000\nTOPIC /a 10.000000\n# ts_ns=2000000000 window_s=1.000\nTOPIC /a 10.000000\n" +
		"# ts_ns=3000000000 window_s=1.000\nPROC pid=1 state=exited nodes=/n exe=/x\n# ts_ns=3100000000 window_s=0.100\n"
	os.WriteFile(log, []byte(text), 0o600)
	frames, _, err := LoadLog(log, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 2 || frames[1].W.Topic("/a") == nil {
		t.Fatalf("%d frames, the last %+v", len(frames), frames[len(frames)-1].W)
	}
}

// Every callback the probe sees is a sign of life: a service server answering
// requests is alive, not quiet; an rclpy server, whose callbacks fire no
// tracepoint, is "not measured" when nothing else of it counts; a node whose
// services all went unanswered is quiet (issue 23, item 3).
func TestServicesAreSignsOfLife(t *testing.T) {
	w := &window.Window{
		Procs: []window.Proc{{Pid: 1, Alive: true, Nodes: []string{"/server", "/py_server", "/idle"}}},
		Services: []window.Service{
			{Node: "/server", Pid: 1, Name: "/add_two_ints", Delta: 20, Measured: true},
			{Node: "/server", Pid: 1, Name: "/server/get_parameters", Measured: true},
			{Node: "/py_server", Pid: 1, Name: "/py_add", Measured: false},
			{Node: "/idle", Pid: 1, Name: "/idle/get_parameters", Measured: true},
		},
	}
	got := map[string]string{}
	for _, r := range nodeRows(&Frame{W: w, Live: true}) {
		got[r.name] = r.state
	}
	for node, want := range map[string]string{"/server": "alive", "/py_server": "not measured", "/idle": "quiet"} {
		if got[node] != want {
			t.Errorf("%s: %q, want %q", node, got[node], want)
		}
	}
}

// On Humble an rclcpp intra-process publish fires no tracepoint: a camera
// node whose only publication is intra-process counts nothing, but its
// subscriber in the same process receives 30 Hz from it, so it is alive, not
// quiet (issue 46, item 5); a hidden publisher whose topic delivered nothing
// in the window stays quiet.
func TestHumbleIntraPublisherIsAlive(t *testing.T) {
	w := &window.Window{
		Procs: []window.Proc{{Pid: 1, Alive: true, Nodes: []string{"/camera", "/proc", "/idle_camera"}}},
		Topics: []window.Topic{
			{Name: "/image", PubHidden: true,
				Pubs: []window.EndpointRate{{Pid: 1, Node: "/camera", Alive: true, PubHidden: true}},
				Subs: []window.EndpointRate{{Pid: 1, Node: "/proc", Alive: true, Intra: 30}}},
			{Name: "/image2", PubHidden: true,
				Pubs: []window.EndpointRate{{Pid: 1, Node: "/idle_camera", Alive: true, PubHidden: true}},
				Subs: []window.EndpointRate{{Pid: 1, Node: "/proc", Alive: true}}},
		},
	}
	got := map[string]string{}
	for _, r := range nodeRows(&Frame{W: w, Live: true}) {
		got[r.name] = r.state
	}
	for node, want := range map[string]string{"/camera": "alive", "/proc": "alive", "/idle_camera": "quiet"} {
		if got[node] != want {
			t.Errorf("%s: %q, want %q", node, got[node], want)
		}
	}
}

// A node starved by its process's thread is recognisable at a glance: /lidar's
// own callbacks take 2.5 % of the window, but the one thread it shares with
// /imu_driver is 98 % busy, and its row says so (EXEC%); an rclpy server whose
// executor worked outside rcl_wait is alive, not "not measured" (issue 24, item 3).
func TestStarvedByItsProcessThread(t *testing.T) {
	f := frame(1)
	rows := map[string]nodeRow{}
	for _, r := range nodeRows(&f) {
		rows[r.name] = r
	}
	if r := rows["/lidar"]; r.busyPct != 2.5 || r.execPct != 98.2 {
		t.Errorf("/lidar: busy %v exec %v, want 2.5 and its process's busiest thread 98.2", r.busyPct, r.execPct)
	}
	if r := rows["/controller"]; r.execPct != 97.3 {
		t.Errorf("/controller: exec %v, want its busiest of two threads 97.3", r.execPct)
	}
	if r := rows["/base"]; !math.IsNaN(r.execPct) {
		t.Errorf("/base: exec %v, want not measured (no thread of it seen)", r.execPct)
	}
	view := keysIn(model(2, 100, 30), "tab", "down", "down", "down", "down", "enter").View()
	if !strings.Contains(view, "Node /lidar") || !strings.Contains(view, "thread 101 (drivers): 98.2 % busy, 1100 callbacks, last for /imu_driver") {
		t.Errorf("/lidar's detail does not name the thread that starves it:\n%s", view)
	}
	py := &window.Window{Seconds: 1, Procs: []window.Proc{{Pid: 1, Alive: true, Nodes: []string{"/py_server"}}},
		Services: []window.Service{{Node: "/py_server", Pid: 1, Name: "/py_add"}},
		Busy:     []window.NodeBusy{{Node: "/py_server", Pid: 1, Pct: 12, Measured: true, FromWait: true}}}
	if r := nodeRows(&Frame{W: py, Live: true}); len(r) != 1 || r[0].state != "alive" {
		t.Errorf("an rclpy server whose executor worked: %+v, want alive", r)
	}
}

// A topic's detail shows each endpoint's QoS, type, rmw and domain, and why a
// subscription meets nobody, with the fix (issue 25).
func TestFocusShowsQoSAndWhy(t *testing.T) {
	var m tea.Model = New("live 1s", false)
	m, _ = m.Update(tea.WindowSizeMsg{Width: 140, Height: 30})
	f := frame(1)
	scan := &f.W.Topics[3]
	scan.Pubs[0].QoS = &segment.QoS{Actual: true, History: 1, Depth: 5, Reliability: 2, Durability: 2, Liveliness: 1,
		Domain: 0, RMW: "rmw_fastrtps_cpp", Type: "sensor_msgs/msg/LaserScan"}
	scan.Subs[0].QoS = &segment.QoS{Domain: -1} // its QoS could not be read
	f.W.Unmatched = []window.Unmatched{{Topic: "/scan", Node: "/controller", Pid: 300, Reason: "qos_incompatible", Error: true,
		Detail: "reliability: publisher best_effort, subscription reliable", Fix: "make the subscription best_effort (or the publisher reliable)"}}
	m, _ = m.Update(FrameMsg(f))
	view := keysIn(m, "down", "down", "down", "enter").View()
	for _, want := range []string{
		"pub /scan /lidar[100]: best_effort volatile keep_last(5) · sensor_msgs/msg/LaserScan · rmw_fastrtps_cpp · domain 0",
		"sub /scan /controller[300]: QoS unknown",
		"why: /controller[300] meets nobody: qos_incompatible (reliability: publisher best_effort, subscription reliable)",
		"fix: make the subscription best_effort",
	} {
		if !strings.Contains(view, want) {
			t.Errorf("the topic's detail lacks %q:\n%s", want, view)
		}
	}
}

// servicesModel is the faults model with calls in its last frame: a quick
// server and its client, an rclpy client of a service nothing here serves,
// and an action, with a spec verdict on the slow one.
func servicesModel(w, h int, ks ...string) tea.Model {
	var m tea.Model = New("live 1s", false)
	m, _ = m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	for i := 0; i < 4; i++ {
		f := frame(i)
		f.W.Calls = []window.Call{
			{Pid: 300, Node: "/controller", Name: "/reset", Alive: true, Started: 22, Answered: 20, Hz: 20, Time: window.Durations{N: 20, MeanMs: 4.8, P99Ms: 5.1, MaxMs: 5.3},
				SendFailed: 2, FailKnown: true},
			{Pid: 200, Node: "/base", Name: "/reset", Client: true, HasServer: true, Alive: true, Started: 20, Answered: 20, Hz: 20,
				Time: window.Durations{N: 20, MeanMs: 5.2, P99Ms: 5.6, MaxMs: 5.9}},
			{Pid: 200, Node: "/base", Name: "/map", Client: true, Alive: true, Started: 1, Hz: 1, Open: []float64{3400, 2400, 1400, 400}},
			{Pid: 100, Node: "/lidar", Name: "/nav/_action/send_goal", Alive: true, Started: 1, Answered: 1, Hz: 1, Time: window.Durations{N: 1, MeanMs: 2, P99Ms: 2, MaxMs: 2}},
			{Pid: 100, Node: "/lidar", Name: "/nav/_action/get_result", Alive: true, Started: 1, Answered: 1, Hz: 1, Time: window.Durations{N: 1, MeanMs: 1000, P99Ms: 1000, MaxMs: 1000}, Open: []float64{20}},
			{Pid: 100, Node: "/lidar", Name: "/lidar/get_parameters", Alive: true},
		}
		f.Warns = append(f.Warns, health.Warning{Kind: health.ServiceTimeout, Topic: "/map", Node: "/base", Pid: 200, Side: "client", Timer: -1, Value: 1, Bound: 1000, Age: time.Second})
		f.Warns = append(f.Warns, health.SendFailures(f.W)...)
		m, _ = m.Update(FrameMsg(f))
	}
	return keysIn(m, ks...)
}

// The services pane (issue 26): every service and action with its servers
// and clients, calls per second, handling and round trip at p99 and open
// calls, and the responses its servers could not send (FAIL: the server of
// /reset lost two, its client gone first; a warning says so with the fix);
// a client with no server here says so; tab reaches it, enter
// focuses a service's servers and clients, the filter and sort apply.
func TestServicesPane(t *testing.T) {
	view := servicesModel(80, 30).View()
	golden(t, "services_80x30.txt", view)
	for _, want := range []string{"Services (sort: name)", "action /nav", "/map", "no srv", "/reset", "5.1ms", "5.6ms", "service_timeout", "/map client /base[200]: 1 calls timed out (1000 ms)",
		"FAIL", "service_send_failed"} {
		if !strings.Contains(view, want) {
			t.Errorf("screen lacks %q:\n%s", want, view)
		}
	}
	if strings.Contains(view, "get_parameters") || strings.Contains(view, "_action") {
		t.Errorf("an idle parameter service or an action's part has a row:\n%s", view)
	}
	focus := servicesModel(80, 30, "tab", "tab", "enter").View() // services sorted by name: /map, /nav (the action), /reset
	for _, want := range []string{"Service /map — servers and clients", "client /base", "3400ms", "no process on this machine serves /map", "calls timed out"} {
		if !strings.Contains(focus, want) {
			t.Errorf("the focus on /map lacks %q:\n%s", want, focus)
		}
	}
	reset := servicesModel(120, 30, "tab", "tab", "down", "down", "enter").View()
	for _, want := range []string{"Service /reset — servers and clients", "server /controller", "2 responses not sent: their client went away before the answer", "fix: answer within"} {
		if !strings.Contains(reset, want) {
			t.Errorf("the focus on /reset lacks %q:\n%s", want, reset)
		}
	}
	if row := lineWith(view, "/reset"); !strings.Contains(row, " 2 ") || !strings.Contains(row, "WARN") {
		t.Errorf("the /reset row does not show its 2 unsent responses as a warning: %q", row)
	}
	filtered := servicesModel(80, 30, "/", "r", "e", "s", "enter").View()
	if !strings.Contains(filtered, "/reset") || strings.Contains(filtered, "\n /map ") || strings.Contains(filtered, "\n›/map ") {
		t.Errorf("the filter does not apply to services:\n%s", filtered)
	}
	byTime := servicesModel(80, 30, "tab", "tab", "s", "s").View()
	if i, j := strings.Index(byTime, "/reset"), strings.Index(byTime, "action /nav"); !strings.Contains(byTime, "Services (sort: time)") || i < 0 || j < 0 || i > j {
		t.Errorf("sorted by time, /reset (5.6 ms) comes before the action (2 ms):\n%s", byTime)
	}
}

// A service's introspection topic and an action's topic say what they are in their focus (issue 26, item 7).
func TestFocusSaysIntrospectionAndActionTopics(t *testing.T) {
	for _, c := range []struct{ topic, want string }{
		{"/add/_service_event", "service events of /add (introspection"},
		{"/nav/_action/status", "the status of action /nav"},
	} {
		m := New("live 1s", false)
		m.focus = "topic:" + c.topic
		f := Frame{W: &window.Window{Seconds: 1, Topics: []window.Topic{{Name: c.topic}}}, Live: true}
		if got := strings.Join(m.focusView(&f, 100), "\n"); !strings.Contains(got, c.want) {
			t.Errorf("%s: focus lacks %q:\n%s", c.topic, c.want, got)
		}
	}
}

// lineWith is the first line of view that contains s ("" when none).
func lineWith(view, s string) string {
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
