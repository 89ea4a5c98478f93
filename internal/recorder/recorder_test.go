package recorder

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/window"
)

func TestRotatingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.log")
	r := &RotatingFile{Path: path, MaxBytes: 100}
	block := []byte(strings.Repeat("x", 59) + "\n")
	for i := 0; i < 3; i++ {
		if _, err := r.Write(block); err != nil {
			t.Fatal(err)
		}
	}
	cur, _ := os.ReadFile(path)
	old, _ := os.ReadFile(path + ".1")
	if len(cur) != 60 || len(old) != 60 {
		t.Fatalf("current %d bytes, .1 %d bytes: each must hold whole windows under the cap", len(cur), len(old))
	}
	// 0 never rotates.
	r = &RotatingFile{Path: filepath.Join(t.TempDir(), "n.log")}
	for i := 0; i < 5; i++ {
		r.Write(block)
	}
	if b, _ := os.ReadFile(r.Path); len(b) != 300 {
		t.Fatalf("unbounded file has %d bytes", len(b))
	}
	// An unwritable place is an error, not a crash.
	r = &RotatingFile{Path: "/nonexistent/dir/w.log"}
	if _, err := r.Write(block); err == nil {
		t.Fatal("write to a missing directory succeeded")
	}
}

func TestSummaryUsesCompleteWindows(t *testing.T) {
	s := Summary{Period: 1}
	mk := func(secs float64, n uint64) *window.Window {
		return &window.Window{Seconds: secs, Topics: []window.Topic{{Name: "/t", Exposure: secs,
			Pubs: []window.EndpointRate{{Delta: [2]uint64{n, 0}, Exposure: secs, Alive: true}},
			Subs: []window.EndpointRate{{Delta: [2]uint64{n, 0}, Exposure: secs, Alive: true}}}},
			Procs: []window.Proc{{Pid: 1, Alive: true, Nodes: []string{"/a"}}}}
	}
	s.Add(mk(1, 10))
	s.Add(mk(1, 10))
	s.Add(mk(0.1, 3)) // the exit sliver: counted in totals, not in the mean
	tt := s.Topics()[0]
	if tt.PubInter != 23 || tt.MeanPubInterHz != 10 || tt.MeanRecvInterHz != 10 {
		t.Fatalf("%+v", tt)
	}
	var b bytes.Buffer
	s.Print(&b)
	if !strings.Contains(b.String(), "/t") || !strings.Contains(b.String(), "10.00") || !strings.Contains(b.String(), "23") {
		t.Fatalf("%s", b.String())
	}
}

// A rate is its side's messages over the time that side's endpoints
// existed: a subscriber that outlives its publisher, and the window in which
// the publisher exits, do not dilute the publish rate (issue 23, item 2).
func TestSummaryRatesOverTheirEndpointsLifetime(t *testing.T) {
	s := Summary{Period: 1}
	mk := func(pub *window.EndpointRate, recv uint64) *window.Window {
		tp := window.Topic{Name: "/t", Exposure: 1, Subs: []window.EndpointRate{{Delta: [2]uint64{recv, 0}, Exposure: 1, Alive: true}}}
		if pub != nil {
			tp.Pubs = []window.EndpointRate{*pub}
		}
		return &window.Window{Seconds: 1, Topics: []window.Topic{tp}}
	}
	s.Add(mk(nil, 0))                                                                      // only the subscriber exists
	s.Add(mk(&window.EndpointRate{Delta: [2]uint64{5, 0}, Exposure: 0.5, Alive: true}, 5)) // created half-way
	s.Add(mk(&window.EndpointRate{Delta: [2]uint64{10, 0}, Exposure: 1, Alive: true}, 10))
	s.Add(mk(&window.EndpointRate{Delta: [2]uint64{3, 0}, Exposure: 1, Alive: false}, 3)) // exits early in this one
	s.Add(mk(&window.EndpointRate{Exposure: 1, Alive: false}, 0))                         // gone
	tt := s.Topics()[0]
	if tt.PubInter != 18 || tt.RecvInter != 18 {
		t.Fatalf("totals %+v", tt)
	}
	if tt.MeanPubInterHz != 10 {
		t.Errorf("publish rate %.3f Hz over the publisher's own time, want 10", tt.MeanPubInterHz)
	}
	var b bytes.Buffer
	s.Print(&b)
	if !strings.Contains(b.String(), "each rate is its side's messages over the time") {
		t.Errorf("the header does not say what the rates are over:\n%s", b.String())
	}
}

func TestNewRejectsBadPeriod(t *testing.T) {
	if _, err := New(t.TempDir(), Options{Period: 0}); err == nil {
		t.Fatal("zero period accepted")
	}
	if _, err := New(t.TempDir(), Options{Period: -time.Second}); err == nil {
		t.Fatal("negative period accepted")
	}
}

// The run summary sums each node's timed callbacks over the run, keeps the
// longest and the busiest complete window, and says not measured for rclpy.
func TestSummaryCallbacksPerNode(t *testing.T) {
	s := &Summary{Period: 1}
	for i, busy := range []float64{40, 97.5, 60} {
		seconds := 1.0
		if i == 2 {
			seconds = 0.2 // the final sliver: its busy share is not a peak
		}
		s.Add(&window.Window{Seconds: seconds,
			Callbacks: []window.Callback{{Pid: 1, Node: "/ctl", Kind: "timer", Measured: true,
				Duration: window.Durations{N: 100, SumMs: 400 + float64(i)*100, MaxMs: 10 + float64(i)}},
				{Pid: 2, Node: "/py", Kind: "subscription", Name: "/x", Why: window.NoCallbackTracepoint}},
			Busy:    []window.NodeBusy{{Node: "/ctl", Pid: 1, Pct: busy, Measured: true}, {Node: "/py", Pid: 2}},
			Threads: []window.Thread{{Pid: 1, Tid: 11, Name: "ctl", BusyPct: busy + 1}, {Pid: 1, Tid: 12, Name: "ctl", BusyPct: 5}},
			Procs:   []window.Proc{{Pid: 1, Exe: "/bin/ctl", Alive: true, Nodes: []string{"/ctl"}}}})
	}
	nodes := s.Nodes()
	if len(nodes) != 2 || nodes[0].Node != "/ctl" || nodes[0].Callbacks != 300 || nodes[0].SumMs != 1500 || nodes[0].MaxMs != 12 ||
		nodes[0].PeakBusy != 97.5 || !nodes[1].NotTimed || nodes[1].Callbacks != 0 {
		t.Fatalf("%+v", nodes)
	}
	var b strings.Builder
	s.Print(&b)
	lines := map[string]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = strings.Join(f, " ")
		}
	}
	if lines["/ctl"] != "/ctl 1 300 5.000 12.000 97.5 0" || lines["/py"] != "/py 2 - - - - - callbacks not measured (rclpy: no callback tracepoint); busy: outside rcl_wait" ||
		!strings.Contains(b.String(), "callbacks per node") ||
		!strings.Contains(b.String(), "process 1 (/bin/ctl) alive, nodes: /ctl; busiest executor thread 11 (ctl) at peak 98.5 % of a window\n") {
		t.Errorf("summary:\n%s", b.String())
	}
}

// The run summary totals each server's and client's calls over the run, an
// action as one row per side (goals, accept and result times, cancels), and
// says which client has no server here (issue 26), and which server could
// not send responses (its client gone first; issue 44, defect 4).
func TestSummaryServicesAndActions(t *testing.T) {
	s := &Summary{Period: 1}
	for i := 0; i < 2; i++ {
		s.Add(&window.Window{Seconds: 1, Calls: []window.Call{
			{Pid: 1, Node: "/srv", Name: "/add", Alive: true, Started: 10, Answered: 10, Time: window.Durations{N: 10, SumMs: 50, MaxMs: 6}},
			{Pid: 2, Node: "/cli", Name: "/add", Client: true, HasServer: true, Alive: true, Started: 10, Answered: 9, Evicted: 1,
				Time: window.Durations{N: 9, SumMs: 54, MaxMs: 7}, Open: []float64{3, 1}},
			{Pid: 2, Node: "/cli", Name: "/gone", Client: true, Alive: true, Started: 2, Open: []float64{900}},
			{Pid: 3, Node: "/bt", Name: "/nav/_action/send_goal", Client: true, HasServer: true, Alive: true, Started: 1, Answered: 1,
				Time: window.Durations{N: 1, SumMs: 2, MaxMs: 2}},
			{Pid: 3, Node: "/bt", Name: "/nav/_action/get_result", Client: true, HasServer: true, Alive: true, Started: 1, Answered: 1,
				Time: window.Durations{N: 1, SumMs: 1000, MaxMs: 1000}},
			{Pid: 3, Node: "/bt", Name: "/nav/_action/cancel_goal", Client: true, HasServer: true, Alive: true, Started: 1},
			{Pid: 1, Node: "/srv", Name: "/srv/get_parameters", Alive: true},
			{Pid: 1, Node: "/srv", Name: "/slow", Alive: true, Started: 5, Answered: 3, SendFailed: 2, FailKnown: true,
				Time: window.Durations{N: 3, SumMs: 30, MaxMs: 12}},
		}})
	}
	var b strings.Builder
	s.Print(&b)
	out := b.String()
	if !regexp.MustCompile(`/slow +/srv +1 +server +10 +6 .* 4 not sent \(client gone\)`).MatchString(out) {
		t.Errorf("summary does not say /slow's 4 responses not sent:\n%s", out)
	}
	for _, want := range []string{
		"/add     /srv  1    server  20     20        5.000    6.000   0",
		"/add     /cli  2    client  20     18        6.000    7.000   2  2 never answered",
		"/gone    /cli  2    client  4      0         -        -       1  no server on this machine",
		"/nav    /bt   3    client  2      2         2.000      2        1000.000   1000.000       2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "get_parameters") || strings.Contains(out, "_action") {
		t.Errorf("an idle parameter service or an action's part has a row:\n%s", out)
	}
}
