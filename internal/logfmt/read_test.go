package logfmt

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"ros2_pulse/internal/window"
)

func read(t *testing.T, data []byte) *ReadResult {
	t.Helper()
	res, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Both of our formats read back to the numbers they were rendered from.
func TestReadRoundTrip(t *testing.T) {
	w := fixture()
	for _, f := range []Format{Text, JSONL} {
		res := read(t, Render(f, w, Options{}))
		if len(res.Windows) != 1 || res.Malformed != 0 {
			t.Fatalf("%s: %s", f, res)
		}
		got := res.Windows[0]
		if got.TsNs != w.TsNs || got.Seconds != 2.0 || strings.Join(got.Nodes, ",") != "/camera_driver,/talker" {
			t.Errorf("%s: header or nodes: %+v", f, got)
		}
		chatter := got.Topic("/chatter")
		if chatter == nil || chatter.PubInter != 10 || chatter.PubAny != 10 || chatter.RecvInter != 9.5 || chatter.PubCount != 1 || chatter.SubCount != 1 {
			t.Fatalf("%s: /chatter %+v", f, chatter)
		}
		if chatter.PubGap.MaxDtMs() != 102.4 || chatter.RecvGap.MaxDtMs() != 901.2 || !chatter.RecvGap.HasData ||
			chatter.RecvGap.N != 19 || chatter.RecvGap.P99Ms != 851.968 || chatter.RecvGap.OpenMs != 901.2 {
			t.Errorf("%s: /chatter gaps %+v %+v", f, chatter.PubGap, chatter.RecvGap)
		}
		if l := chatter.Latency; !l.HasData || l.N != 19 || l.MeanMs != 1.25 || l.P99Ms != 3.584 || l.MaxMs != 3.584 {
			t.Errorf("%s: /chatter latency %+v", f, l)
		}
		if l := chatter.Loss; chatter.Published != 20 || l != (window.Loss{Judged: 1, WorstPct: 5, Node: "/listener", Pid: 200}) {
			t.Errorf("%s: /chatter loss %d %+v", f, chatter.Published, l)
		}
		if img := got.Topic("/camera/image"); img == nil || img.PubIntra != 30 || img.PubAny != 30 || img.RecvIntra != 30 {
			t.Errorf("%s: /camera/image %+v", f, img)
		}
		// Stalls keep their zero lines, and so their live endpoints.
		if s := got.Topic("/stalled_pub"); s == nil || s.PubCount != 1 || s.PubInter != 0 {
			t.Errorf("%s: /stalled_pub %+v", f, s)
		}
		if s := got.Topic("/stalled_sub"); s == nil || s.SubCount != 1 || s.PubCount != 0 {
			t.Errorf("%s: /stalled_sub %+v", f, s)
		}
		if got.Topic("/weird name\n\"q\"") == nil {
			t.Errorf("%s: the hostile name did not round-trip: %+v", f, got.Topics)
		}
		if got.Topic("/idle") != nil {
			t.Errorf("%s: an idle topic has no line and must not appear", f)
		}
		if len(got.Timers) != 2 || got.Timers[0] != (window.Timer{Node: "/talker", PeriodMs: 100, Hz: 9.5, LateKnown: true, Overruns: 1,
			Late: window.Durations{N: 19, MeanMs: 0.05, P99Ms: 2.1, MaxMs: 2.3}}) || got.Timers[1].Ordinal != 1 || got.Timers[1].LateKnown {
			t.Errorf("%s: timers %+v", f, got.Timers)
		}
		// Service calls read back as written (ABI 1.6).
		if !reflect.DeepEqual(got.Calls, w.Calls) {
			t.Errorf("%s: calls\n got %+v\nwant %+v", f, got.Calls, w.Calls)
		}
		// Callback timing reads back as written (the sum from mean x n).
		if len(got.Callbacks) != len(w.Callbacks) {
			t.Fatalf("%s: callbacks %+v", f, got.Callbacks)
		}
		for i, c := range got.Callbacks {
			want := w.Callbacks[i]
			want.PeriodMs, c.Duration.SumMs, want.Duration.SumMs = 0, 0, 0
			if c != want {
				t.Errorf("%s: callback %d\n got %+v\nwant %+v", f, i, c, want)
			}
		}
		if !reflect.DeepEqual(got.Unmatched, w.Unmatched) {
			t.Errorf("%s: unmatched\n got %+v\nwant %+v", f, got.Unmatched, w.Unmatched)
		}
		if !reflect.DeepEqual(got.Busy, w.Busy) || !reflect.DeepEqual(got.Threads, w.Threads) {
			t.Errorf("%s: busy %+v threads %+v", f, got.Busy, got.Threads)
		}
		if len(got.Procs) != 2 || got.Procs[0].Pid != 100 || !got.Procs[0].Alive || got.Procs[1].Alive ||
			got.Procs[1].Exe != "/opt/ros/lib/listener" || strings.Join(got.Procs[1].Nodes, ",") != "/listener" {
			t.Errorf("%s: procs %+v", f, got.Procs)
		}
	}
}

// Logs written by upstream ros2_pulse read the same in both formats: LOAN
// lines and keys, and its WARN lines, are recognised and left aside.
func TestReadUpstreamLogs(t *testing.T) {
	for _, name := range []string{"upstream.txt", "upstream.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		res := read(t, data)
		if len(res.Windows) != 2 || res.Malformed != 0 {
			t.Fatalf("%s: %s", name, res)
		}
		w1, w2 := res.Windows[0], res.Windows[1]
		c := w1.Topic("/chatter")
		if c == nil || c.PubInter != 50 || c.PubCount != 1 || !c.PubGap.HasData || c.PubGap.MaxDtMs() != 20.512 {
			t.Errorf("%s: window 1 /chatter %+v", name, c)
		}
		// A stalled receiver: zero rates, the endpoint alive, the open gap.
		c = w2.Topic("/chatter")
		if c == nil || c.SubCount != 1 || c.RecvInter != 0 || c.PubCount != 0 || c.RecvGap.MaxDtMs() != 1001.25 {
			t.Errorf("%s: window 2 /chatter %+v", name, c)
		}
		if img := w2.Topic("/image"); img == nil || img.PubIntra != 30 || img.PubAny != 30 || img.PubCount != 1 {
			t.Errorf("%s: window 2 /image %+v", name, img)
		}
		if strings.Join(w2.Nodes, ",") != "/talker,/listener" {
			t.Errorf("%s: nodes %v", name, w2.Nodes)
		}
	}
}

// Malformed lines are skipped and counted, windows around them survive;
// unknown kinds and keys are ignored; CRLF and mixed formats read.
func TestReadMalformedAndMixed(t *testing.T) {
	log := strings.Join([]string{
		"TOPIC /before_any_header 1.0",                  // 1: bad
		"# ts_ns=1 window_s=1.000",                      // 2
		"TOPIC /a 10.000000\r",                          // 3: CRLF
		"TOPIC /nan nan",                                // 4: bad
		"TOPIC /neg -1",                                 // 5: bad
		"PUB /a inter=1",                                // 6: bad
		"FUTURE /a some=thing",                          // 7: unknown kind, ignored
		"RECV /a inter=9.000000 intra=0.000000 extra=1", // 8: bad (fields are never appended)
		"JITTER /a sideways max_dt_ms=1",                // 9: bad side
		"",                                              // 10
		`{"ts_ns":"2","window_s":1.0,"topics":[{"topic":"/a","recv_inter_hz":9.5,"new_key":true}],"nodes":[],"new_array":[]}`,
		`{"foo":1}`, // 12: JSON, not a window
		`{not json`, // 13
		`{"ts_ns":"3","window_s":1.0,"topics":[{"topic":"/a","pub_inter_hz":-4}],"nodes":[]}`, // 14: negative
		"# a comment", // 15
		"# ts_ns=4 window_s=0.250",
		"NODE /n",
		"NODE",                               // 18: bad
		"TIMER /n timer=-1 period_ms=1 hz=1", // 19: bad
	}, "\n")
	res := read(t, []byte(log))
	if len(res.Windows) != 3 || res.Malformed != 11 || res.FirstBad != 1 {
		t.Fatalf("%s", res)
	}
	if a := res.Windows[0].Topic("/a"); a == nil || a.PubInter != 10 || a.SubCount != 0 {
		t.Errorf("window 1 /a %+v", a)
	}
	if a := res.Windows[1].Topic("/a"); a == nil || a.RecvInter != 9.5 || a.SubCount != 1 {
		t.Errorf("window 2 /a %+v", a)
	}
	if w := res.Windows[2]; w.TsNs != 4 || w.Seconds != 0.25 || len(w.Nodes) != 1 {
		t.Errorf("window 3 %+v", w)
	}
}

// A line longer than MaxLine is skipped without holding it in memory.
func TestReadLongLine(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("# ts_ns=1 window_s=1.000\nNODE /")
	b.Write(bytes.Repeat([]byte("x"), MaxLine+10))
	b.WriteString("\nNODE /ok\n\n")
	res := read(t, b.Bytes())
	if len(res.Windows) != 1 || res.Malformed != 1 || strings.Join(res.Windows[0].Nodes, ",") != "/ok" {
		t.Fatalf("%s %+v", res, res.Windows)
	}
}

// FuzzRead: any input reads without panicking, into windows whose numbers
// are finite and non-negative and whose topics are sorted and unique.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"window.txt", "window.jsonl", "window_idle.txt", "upstream.txt", "upstream.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("# ts_ns=1 window_s=1\nTOPIC /a\\x 1\nPROC pid=1 state=alive nodes=\\x2 exe=\n"))
	f.Add(Render(Text, linkWindow(), Options{})) // LINK and PATH lines
	f.Add(Render(JSONL, linkWindow(), Options{}))
	f.Add(Render(Text, bytesWindow(), Options{})) // BYTES lines and EP lines' bytes
	// A lean run with its detail window, plain and compressed (pulse record --detail, .zst).
	lean, _ := Lean(fixture(), nil)
	detail := *fixture()
	detail.Detail = true
	run := append(append(RenderRun(Text, RunInfo{ID: "r", DetailS: 60}), Render(Text, lean, Options{})...), Render(Text, &detail, Options{})...)
	f.Add(run)
	var z bytes.Buffer
	enc, _ := zstd.NewWriter(&z)
	enc.Write(run)
	enc.Close()
	f.Add(z.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Read(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range res.Windows {
			if w.Seconds < 0 || w.Seconds != w.Seconds {
				t.Fatalf("window_s %v", w.Seconds)
			}
			for i := range w.Topics {
				tp := &w.Topics[i]
				if i > 0 && w.Topics[i-1].Name >= tp.Name {
					t.Fatalf("topics not sorted and unique: %q %q", w.Topics[i-1].Name, tp.Name)
				}
				for _, v := range []float64{tp.PubInter, tp.PubIntra, tp.PubAny, tp.RecvInter, tp.RecvIntra, tp.PubGap.MaxDtMs(), tp.RecvGap.MaxDtMs()} {
					if !(v >= 0) || v > 1e308 {
						t.Fatalf("%q: bad number %v", tp.Name, v)
					}
				}
			}
			for _, tm := range w.Timers {
				if tm.Ordinal < 0 || !(tm.Hz >= 0) || !(tm.PeriodMs >= 0) {
					t.Fatalf("timer %+v", tm)
				}
			}
		}
	})
}

// A run header, in either grammar, marks the windows that follow with its
// run; a reader that does not know it (upstream's) skips it, and so do we
// when it is malformed.
func TestRunHeaders(t *testing.T) {
	w := &window.Window{TsNs: 2e9, Seconds: 1, Topics: []window.Topic{{Name: "/t", PubInter: 5, PubAny: 5, PubCount: 1, PubInterSeen: true}}}
	for _, f := range []Format{Text, JSONL} {
		var b bytes.Buffer
		b.Write(Render(f, w, Options{}))
		b.Write(RenderRun(f, RunInfo{ID: "00ff00ff00ff00ff", Host: "robot one", Version: "0.1.0", StartNs: 3e9}))
		b.Write(Render(f, w, Options{}))
		b.Write(RenderRun(f, RunInfo{ID: "1111111111111111", Host: "r", Version: "0.1.0", StartNs: 4e9}))
		b.Write(Render(f, w, Options{}))
		res, err := Read(&b)
		if err != nil || res.Malformed != 0 || len(res.Windows) != 3 {
			t.Fatalf("%s: %v %+v", f, err, res)
		}
		if res.Windows[0].Run != "" || res.Windows[1].Run != "00ff00ff00ff00ff" || res.Windows[2].Run != "1111111111111111" {
			t.Errorf("%s: runs %q %q %q", f, res.Windows[0].Run, res.Windows[1].Run, res.Windows[2].Run)
		}
	}
	if got := string(RenderRun(Text, RunInfo{ID: "ab", Host: "robot one", Version: "v", StartNs: 7})); got != "RUN id=ab host=robot\\x20one version=v start_ns=7\n\n" {
		t.Errorf("text header %q", got)
	}
	if got := string(RenderRun(JSONL, RunInfo{ID: "ab", Host: "h\"", Version: "v", StartNs: 7})); got != `{"run":{"id":"ab","host":"h\"","version":"v","start_ns":"7"}}`+"\n" {
		t.Errorf("jsonl header %q", got)
	}
	res, _ := Read(strings.NewReader("RUN host=x\n{\"run\":{}}\n"))
	if res.Malformed != 2 {
		t.Errorf("malformed headers: %+v", res)
	}
}

// EP lines (text) and the endpoints array (jsonl) carry the live endpoints
// the evaluator judges: read back, a topic has exactly their sides, rates,
// losses and pids, even with no traffic line at all (a subscription waiting
// for a late publisher); timer pids come back too.
func TestEndpointsRoundTrip(t *testing.T) {
	w := &window.Window{TsNs: 5e9, Seconds: 1, Topics: []window.Topic{
		{Name: "/chatter", PubInter: 20, PubAny: 20, PubCount: 1, SubCount: 2, PubInterSeen: true, RecvInter: 35, RecvSeen: true,
			Pubs: []window.EndpointRate{{Pid: 7, Node: "/talker", Inter: 20, Alive: true}},
			Subs: []window.EndpointRate{{Pid: 8, Node: "/a", Inter: 20, Alive: true, LossJudged: true},
				{Pid: 9, Node: "/b", Inter: 15, Alive: true, LossJudged: true, LossPct: 25},
				{Pid: 10, Node: "/gone", Inter: 1}}}, // exited: not a live endpoint
		{Name: "/image", PubCount: 1, PubHidden: true, Pubs: []window.EndpointRate{{Pid: 7, Node: "/cam", Alive: true, PubHidden: true}}},
		{Name: "/waiting", SubCount: 1, Subs: []window.EndpointRate{{Pid: 8, Alive: true}}},
	}, Timers: []window.Timer{{Node: "/talker", Pid: 7, PeriodMs: 50, Hz: 20}}}
	for _, f := range []Format{Text, JSONL} {
		res, err := Read(bytes.NewReader(Render(f, w, Options{})))
		if err != nil || res.Malformed != 0 || len(res.Windows) != 1 {
			t.Fatalf("%s: %v %+v\n%s", f, err, res, Render(f, w, Options{}))
		}
		got := res.Windows[0]
		c, img, wait := got.Topic("/chatter"), got.Topic("/image"), got.Topic("/waiting")
		if c == nil || img == nil || wait == nil {
			t.Fatalf("%s: topics %+v", f, got.Topics)
		}
		if c.PubCount != 1 || c.SubCount != 2 || c.PubAny != 20 || len(c.Subs) != 2 || c.Subs[1].Node != "/b" || c.Subs[1].Pid != 9 ||
			!c.Subs[1].LossJudged || c.Subs[1].LossPct != 25 || c.Subs[1].Inter != 15 {
			t.Errorf("%s: /chatter %+v", f, c)
		}
		if !img.PubHidden || img.PubCount != 1 || wait.SubCount != 1 || wait.PubCount != 0 || wait.Subs[0].Node != "" {
			t.Errorf("%s: /image %+v /waiting %+v", f, img, wait)
		}
		if len(got.Timers) != 1 || got.Timers[0].Pid != 7 {
			t.Errorf("%s: timers %+v", f, got.Timers)
		}
	}
}

// A server's refused responses (send_failed, ABI 1.8) are the last key of
// its CALL line and call object: a log written before them reads as "not
// measured", never as zero refused, in both formats.
func TestReadCallSendFailed(t *testing.T) {
	for _, c := range []struct {
		f   Format
		key string
	}{{Text, " send_failed=2"}, {JSONL, `,"send_failed":2`}} {
		out := string(Render(c.f, fixture(), Options{}))
		if strings.Count(out, c.key) != 1 {
			t.Fatalf("%s: %q not written once:\n%s", c.f, c.key, out)
		}
		for _, in := range []string{out, strings.Replace(out, c.key, "", 1)} {
			res := read(t, []byte(in))
			if len(res.Windows) != 1 || res.Malformed != 0 || len(res.Windows[0].Calls) != 2 {
				t.Fatalf("%s: %s", c.f, res)
			}
			srv, cli := res.Windows[0].Calls[0], res.Windows[0].Calls[1]
			if want := in == out; srv.FailKnown != want || want && srv.SendFailed != 2 || !want && srv.SendFailed != 0 || cli.FailKnown {
				t.Errorf("%s (send_failed written: %v): server %v %d, client %v", c.f, want, srv.FailKnown, srv.SendFailed, cli.FailKnown)
			}
		}
	}
}
