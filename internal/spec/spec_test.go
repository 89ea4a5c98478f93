package spec

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const good = `# the robot
topics:
  /scan: {min_hz: 9, max_hz: 11}
  /cmd_vel:
    - {min_hz: 18, side: pub, transport: inter}
    - {max_gap_ms: 200}
nodes: [/controller, /base_driver]
timers:
  /controller: {min_hz: 90}
  /planner: {min_hz: 4, timer: 1}
`

func TestParseGood(t *testing.T) {
	s, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Topics) != 3 || len(s.Nodes) != 2 || len(s.Timers) != 2 {
		t.Fatalf("%+v", s)
	}
	scan := s.Topics[0]
	if scan.Topic != "/scan" || scan.Side != Recv || scan.Transport != Any || scan.MinHz != 9 || scan.MaxHz != 11 ||
		!math.IsInf(scan.MaxGapMs, 1) || scan.Line != 3 {
		t.Errorf("defaults: %+v", scan)
	}
	if r := s.Topics[1]; r.Side != Pub || r.Transport != Inter || !math.IsInf(r.MaxHz, 1) || r.Line != 5 {
		t.Errorf("pub rule: %+v", r)
	}
	if r := s.Topics[2]; !r.HasGap() || r.HasRate() || !s.NeedsGaps() {
		t.Errorf("gap rule: %+v", r)
	}
	if s.Timers[0].Ordinal != -1 || s.Timers[1].Ordinal != 1 || s.Timers[1].MinHz != 4 {
		t.Errorf("timers: %+v", s.Timers)
	}
}

// Bytes bounds (design note 0033): a side's bytes a second, either or both.
func TestParseBytesRules(t *testing.T) {
	s, err := Parse([]byte("topics:\n  /image: {max_bytes_per_s: 4e7, side: pub}\n  /scan:\n    - {min_hz: 9}\n    - {min_bytes_per_s: 1000}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Topics) != 2 {
		t.Fatalf("%+v", s.Topics)
	}
	if r := s.Topics[0]; !r.HasBytes() || r.HasRate() || r.MaxBytesPerS != 4e7 || r.MinBytesPerS != 0 || r.Side != Pub {
		t.Errorf("image: %+v", r)
	}
	if r := s.Topics[1]; !r.HasBytes() || !r.HasRate() || r.MinBytesPerS != 1000 || !math.IsInf(r.MaxBytesPerS, 1) || r.MinHz != 9 {
		t.Errorf("scan: %+v", r)
	}
	if r := s.Topics[1]; r.Side != Recv {
		t.Errorf("scan side %s", r.Side)
	}
}

// Every mistake is an error naming the line and the key.
func TestParseTimingRules(t *testing.T) {
	s, err := Parse([]byte("nodes:\n  /controller: {max_busy_pct: 80}\n  /driver:\ntimers:\n  /controller: {max_late_ms: 2, max_overruns: 0}\n" +
		"  /planner: {min_hz: 4, max_late_ms: 10, timer: 1}\ncallbacks:\n  /scan: {max_ms: 20}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Nodes, ",") != "/controller,/driver" || len(s.NodeRules) != 1 || s.NodeRules[0] != (NodeRule{Node: "/controller", MaxBusyPct: 80, Line: 2}) {
		t.Errorf("nodes %v rules %+v", s.Nodes, s.NodeRules)
	}
	if c := s.Timers[0]; c.MinHz != 0 || c.MaxLateMs != 2 || c.MaxOverruns != 0 || !c.HasTiming() || c.Ordinal != -1 {
		t.Errorf("timing-only timer rule %+v", c)
	}
	if p := s.Timers[1]; p.MinHz != 4 || p.MaxLateMs != 10 || !math.IsInf(p.MaxOverruns, 1) || p.Ordinal != 1 {
		t.Errorf("timer rule %+v", p)
	}
	if len(s.Callbacks) != 1 || s.Callbacks[0] != (CallbackRule{Name: "/scan", MaxMs: 20, Line: 8}) {
		t.Errorf("callbacks %+v", s.Callbacks)
	}
	if !strings.Contains(s.Summary(), "1 callback rules") {
		t.Errorf("summary %q", s.Summary())
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ spec, want string }{
		{"", "empty"},
		{"# only a comment\n", "empty"},
		{"topics: {}\n", "declares no"},
		{"\xef\xbb\xbftopics:\n  /a: {min_hz: 1}\n", "byte-order mark"},
		{"topic:\n  /a: {min_hz: 1}\n", `line 1: unknown top-level key "topic"`},
		{"topics:\n  /a: {min_hz: 1, mni_hz: 2}\n", `line 2: topic /a: unknown key "mni_hz"`},
		{"topics:\n  /a: {min_hz: 1, min_hz: 2}\n", `key "min_hz" repeated`},
		{"topics:\n  /a: {min_hz: fast}\n", `line 2: min_hz must be a number, not "fast"`},
		{"topics:\n  /a: {min_hz: -1}\n", "finite number >= 0"},
		{"topics:\n  /a: {min_hz: .nan}\n", "finite number"},
		{"topics:\n  /a: {min_hz: \"5\"}\n", "must be a number"},
		{"topics:\n  /a: {side: pub}\n", "needs min_hz, max_hz, max_gap_ms, max_latency_ms, max_loss_pct, min_bytes_per_s or max_bytes_per_s"},
		{"topics:\n  /a: {min_hz: 5, max_hz: 2}\n", "min_hz 5 is above max_hz 2"},
		{"topics:\n  /a: {max_gap_ms: 0}\n", "max_gap_ms must be greater than 0"},
		{"topics:\n  /a: {max_gap_ms: 100, transport: intra}\n", "a gap, latency, loss or bytes rule without a rate cannot choose a transport"},
		{"topics:\n  /a: {max_loss_pct: 100}\n", "max_loss_pct must be below 100"},
		{"topics:\n  /a: {max_loss_pct: 1, side: pub}\n", "max_loss_pct is measured where messages are received"},
		{"topics:\n  /a: {max_loss_pct: 1, transport: inter}\n", "cannot choose a transport"},
		{"topics:\n  /a: {min_bytes_per_s: 2000, max_bytes_per_s: 1000}\n", "min_bytes_per_s 2000 is above max_bytes_per_s 1000"},
		{"topics:\n  /a: {max_bytes_per_s: -1}\n", "max_bytes_per_s"},
		{"topics:\n  /a: {max_bytes_per_s: 1e6, transport: intra}\n", "cannot choose a transport"},
		{"topics:\n  /a:\n    - {min_bytes_per_s: 2000}\n    - {max_bytes_per_s: 1000}\n", "min_bytes_per_s 2000 is above max_bytes_per_s 1000"},
		{"topics:\n  /a: {max_latency_ms: 0}\n", "max_latency_ms must be greater than 0"},
		{"topics:\n  /a: {max_latency_ms: 20, side: pub}\n", "it needs side recv"},
		{"topics:\n  /a: {max_latency_ms: fast}\n", "max_latency_ms"},
		{"topics:\n  /a: {min_hz: 1, side: both}\n", "side must be pub or recv"},
		{"topics:\n  /a: {min_hz: 1, transport: dds}\n", "transport must be inter, intra or any"},
		{"topics:\n  /a:\n    - {min_hz: 1}\n    - {max_hz: 9, min_hz: 2}\n", "line 4: topic /a: min_hz given twice for side recv, transport any (lines 3 and 4)"},
		{"topics:\n  /a:\n    - {min_hz: 10}\n    - {max_hz: 9}\n", "line 4: topic /a: min_hz 10 is above max_hz 9"},
		{"topics:\n  /a: []\n", "empty rule list"},
		{"topics:\n  scan: {min_hz: 1}\n", "not a fully qualified ROS name"},
		{"topics: [/a]\n", "topics must be a mapping"},
		{"nodes: /a\n", "nodes must be a list"},
		{"nodes: [/a, /a]\n", "listed twice"},
		{"nodes: [a b]\n", "not a fully qualified name"},
		{"timers:\n  /c: {timer: 1}\n", "needs min_hz"},
		{"timers:\n  /c: {min_hz: 1, timer: 0.5}\n", "small whole number"},
		{"timers:\n  /c: {min_hz: 1, period: 2}\n", `unknown key "period"`},
		{"topics:\n  /a: {min_hz: 1\n", "line"},
		{"timers:\n  /c: {max_late_ms: -2}\n", "line 2: max_late_ms must be a finite number >= 0"},
		{"timers:\n  /c: {max_late_ms: soon}\n", `line 2: max_late_ms must be a number, not "soon"`},
		{"timers:\n  /c: {max_late_ms: 0}\n", "max_late_ms must be greater than 0"},
		{"timers:\n  /c: {max_overruns: 1.5}\n", "max_overruns must be a whole number"},
		{"timers:\n  /c: {max_overruns: -1}\n", "finite number >= 0"},
		{"callbacks:\n  /scan: {max_ms: -5}\n", "line 2: max_ms must be a finite number >= 0"},
		{"callbacks:\n  /scan: {max_ms: slow}\n", `max_ms must be a number, not "slow"`},
		{"callbacks:\n  /scan: {max_ms: 0}\n", "max_ms must be greater than 0"},
		{"callbacks:\n  /scan: {}\n", "callbacks /scan: a rule needs max_ms"},
		{"callbacks:\n  /scan: {min_ms: 2}\n", `callbacks /scan: unknown key "min_ms" (expected max_ms)`},
		{"callbacks:\n  scan: {max_ms: 2}\n", "not a fully qualified topic or node name"},
		{"callbacks: [/scan]\n", "callbacks must be a mapping"},
		{"nodes:\n  /c: {max_busy_pct: -1}\n", "max_busy_pct must be a finite number >= 0"},
		{"nodes:\n  /c: {max_busy_pct: half}\n", `max_busy_pct must be a number, not "half"`},
		{"nodes:\n  /c: {max_busy: 50}\n", `node /c: unknown key "max_busy" (expected max_busy_pct)`},
		{"nodes:\n  c: {}\n", "not a fully qualified name"},
		{"services:\n  /add: {min_hz: 1, max_respone_ms: 5}\n", `line 2: services /add: unknown key "max_respone_ms" (expected min_hz, max_response_ms, max_outstanding, side)`},
		{"services:\n  /add: {max_response_ms: -5}\n", "line 2: max_response_ms must be a finite number >= 0"},
		{"services:\n  /add: {max_outstanding: -1}\n", "finite number >= 0"},
		{"services:\n  /add: {max_outstanding: 1.5}\n", "max_outstanding must be a whole number"},
		{"services:\n  /add: {max_response_ms: 0}\n", "max_response_ms must be greater than 0"},
		{"services:\n  /add: {side: server}\n", "services /add: a rule needs min_hz, max_response_ms or max_outstanding"},
		{"services:\n  /add: {min_hz: 1, side: both}\n", `side must be server or client, not "both"`},
		{"services:\n  add: {min_hz: 1}\n", "not a fully qualified service name"},
		{"topics:\n  /scan: {min_hz: 5}\nservices:\n  /scan: {max_response_ms: 10}\n", "line 4: services: /scan is a topic (its rule is on line 2), not a service"},
		{"services:\n  /nav/_action/feedback: {min_hz: 1}\n", "is an action's topic, not a service"},
		{"actions:\n  /nav: {max_accept_ms: 10, max_goal_ms: 5}\n", `actions /nav: unknown key "max_goal_ms" (expected max_accept_ms, max_result_ms)`},
		{"actions:\n  /nav: {max_result_ms: -1}\n", "finite number >= 0"},
		{"actions:\n  /nav: {}\n", "actions /nav: a rule needs max_accept_ms or max_result_ms"},
		{"actions:\n  /nav/_action/send_goal: {max_accept_ms: 10}\n", "is a part of an action: name the action itself"},
		{"services: [/add]\n", "services must be a mapping"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.spec))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.spec, err, c.want)
		}
	}
}

// Only regular files of bounded size are read, and nothing blocks.
func TestLoadRefusesNonSpecs(t *testing.T) {
	dir := t.TempDir()
	okPath := filepath.Join(dir, "spec.yaml")
	os.WriteFile(okPath, []byte(good), 0o600)
	if _, err := Load(okPath); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	f, _ := os.Create(big)
	f.Truncate(2 << 30) // 2 GiB, sparse
	f.Close()
	exact := filepath.Join(dir, "exact.yaml")
	os.WriteFile(exact, append([]byte(good), make([]byte, MaxBytes-len(good)+1)...), 0o600)
	for path, want := range map[string]string{
		"/dev/zero": "not a regular file", dir: "not a regular file", fifo: "not a regular file",
		big: "more than", exact: "more than", filepath.Join(dir, "missing"): "no such file",
	} {
		start := time.Now()
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "cannot read spec") {
			t.Errorf("%s: got %v, want %q", path, err, want)
		}
		if time.Since(start) > time.Second {
			t.Errorf("%s took %v: must fail fast", path, time.Since(start))
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("topics:\n  /a: [{min_hz: 1}, {max_gap_ms: 3, side: pub}]\n"))
	f.Add([]byte("nodes: [/a]\ntimers: {/a: {min_hz: 2}}\n"))
	f.Add([]byte("callbacks:\n  /scan: {max_ms: 20}\nnodes:\n  /c: {max_busy_pct: 80}\n  /d:\ntimers:\n  /c: {max_late_ms: 2, max_overruns: 0}\n"))
	f.Add([]byte("paths:\n  p: {via: [/a, /b, /c], max_ms: 150}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			return
		}
		if len(s.Topics)+len(s.Nodes)+len(s.Timers)+len(s.Callbacks)+len(s.Services)+len(s.Actions)+len(s.Paths) == 0 {
			t.Fatal("accepted a spec with no rule")
		}
		for _, r := range s.Callbacks {
			if !(r.MaxMs > 0) {
				t.Fatalf("accepted a bad callback rule %+v", r)
			}
		}
		for _, r := range s.NodeRules {
			if !(r.MaxBusyPct > 0) {
				t.Fatalf("accepted a bad node rule %+v", r)
			}
		}
		for _, r := range s.Timers {
			if r.MinHz == 0 && !r.HasTiming() || r.MaxLateMs <= 0 || r.MaxOverruns < 0 {
				t.Fatalf("accepted a bad timer rule %+v", r)
			}
		}
		for _, r := range s.Topics {
			if (!r.HasRate() && !r.HasGap()) || r.MinHz > r.MaxHz || r.MaxGapMs <= 0 || (r.Side != Pub && r.Side != Recv) {
				t.Fatalf("accepted a bad rule %+v", r)
			}
		}
	})
}

// Several list items for one topic, side and transport are one rule, as a
// person would write them; other sides and transports stay rules of their own.
func TestRuleItemsMerge(t *testing.T) {
	s, err := Parse([]byte("topics:\n  /scan:\n    - {min_hz: 9, max_hz: 11}\n    - {max_gap_ms: 250}\n    - {max_loss_pct: 2}\n" +
		"    - {min_hz: 9, side: pub}\n    - {max_hz: 20, side: pub}\n    - {min_hz: 4, transport: intra}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Topics) != 3 {
		t.Fatalf("%d rules, want 3: %+v", len(s.Topics), s.Topics)
	}
	recv, pub, intra := s.Topics[0], s.Topics[1], s.Topics[2]
	if recv.Side != Recv || recv.Transport != Any || recv.MinHz != 9 || recv.MaxHz != 11 || recv.MaxGapMs != 250 || recv.MaxLossPct != 2 || recv.Line != 3 {
		t.Errorf("merged recv rule: %+v", recv)
	}
	if pub.Side != Pub || pub.MinHz != 9 || pub.MaxHz != 20 || !math.IsInf(pub.MaxGapMs, 1) {
		t.Errorf("merged pub rule: %+v", pub)
	}
	if intra.Transport != Intra || intra.MinHz != 4 {
		t.Errorf("intra rule: %+v", intra)
	}
}

// The example spec the package ships (/usr/share/ros2-pulse) loads, with
// every rule it shows.
func TestShippedExampleLoads(t *testing.T) {
	s, err := Load("../../deploy/spec.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Topics) != 5 || len(s.Nodes) != 3 {
		t.Errorf("example spec: %d topic rules, %d nodes; want 5 and 3", len(s.Topics), len(s.Nodes))
	}
}

// Service and action rules parse with their sides and bounds; one service
// may have a rule per side.
func TestParseServicesAndActions(t *testing.T) {
	s, err := Parse([]byte("services:\n  /add: {min_hz: 5, max_response_ms: 50, max_outstanding: 2}\n" +
		"  /plan: {max_response_ms: 2000, side: client}\nactions:\n  /navigate: {max_accept_ms: 100, max_result_ms: 30000}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Services) != 2 || s.Services[0] != (ServiceRule{Name: "/add", MinHz: 5, MaxResponseMs: 50, MaxOutstanding: 2, Line: 2}) ||
		!s.Services[1].Client || s.Services[1].MaxResponseMs != 2000 || !math.IsInf(s.Services[1].MaxOutstanding, 1) {
		t.Errorf("services %+v", s.Services)
	}
	if len(s.Actions) != 1 || s.Actions[0] != (ActionRule{Name: "/navigate", MaxAcceptMs: 100, MaxResultMs: 30000, Line: 5}) {
		t.Errorf("actions %+v", s.Actions)
	}
	if !strings.Contains(s.Summary(), "2 service rules, 1 action rules") {
		t.Errorf("summary %q", s.Summary())
	}
}
