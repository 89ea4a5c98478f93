package export

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

func writeSeg(t *testing.T, dir string, pid int, start uint64, topic string, pubCount uint64, nodes ...string) string {
	t.Helper()
	path := filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(topic, "/"), "/", "_")+"-"+strconv.Itoa(pid)+".0.pulse")
	spec := segment.SyntheticSpec{Pid: pid, StartMono: start, Exe: "/opt/ros/lib/node", Nodes: nodes,
		Endpoints: []segment.SyntheticEndpoint{
			{Kind: segment.KindPublisher, Name: topic, Node: 0, CreatedMono: start, Counts: [4]uint64{pubCount, 0, 0, 0}},
			{Kind: segment.KindSubscription, Name: topic, Node: 0, CreatedMono: start, Counts: [4]uint64{0, pubCount / 2, 0, 0}},
			{Kind: segment.KindTimer, Name: "", Node: 0, Aux: 10_000_000, CreatedMono: start, Counts: [4]uint64{77, 0, 0, 0}},
			{Kind: segment.KindPublisher, Name: "/rosout", Node: 0, CreatedMono: start, Counts: [4]uint64{5, 0, 0, 0}},
		}}
	if err := segment.WriteSynthetic(path, spec); err != nil {
		t.Fatal(err)
	}
	return path
}

func gather(t *testing.T, c *Collector) map[string][]*dto.Metric {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]*dto.Metric{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf.Metric
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// find returns the value of the series of family whose labels include all of want.
func find(t *testing.T, fams map[string][]*dto.Metric, family string, want map[string]string) (float64, bool) {
	t.Helper()
next:
	for _, m := range fams[family] {
		for k, v := range want {
			if label(m, k) != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		}
	}
	return math.NaN(), false
}

// Per endpoint: the probe's cumulative counts, labelled; builtin topics hidden;
// exited processes are down; the pedantic registry accepts every family.
func TestPerEndpoint(t *testing.T) {
	dir := t.TempDir()
	writeSeg(t, dir, 101, 1, "/scan", 500, "/lidar")
	writeSeg(t, dir, 102, 1, "/odom", 300, "/odometry", "/helper")
	c, err := New(Options{Dir: dir, Retain: time.Hour, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f := gather(t, c)
	for _, c := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"ros2_pulse_messages_total", map[string]string{"topic": "/scan", "node": "/lidar", "pid": "101", "side": "pub", "transport": "inter"}, 500},
		{"ros2_pulse_messages_total", map[string]string{"topic": "/scan", "side": "recv", "transport": "intra"}, 250},
		{"ros2_pulse_messages_total", map[string]string{"topic": "/odom", "side": "pub", "transport": "inter"}, 300},
		{"ros2_pulse_published_messages_total", map[string]string{"topic": "/scan", "node": "/lidar", "pid": "101"}, 500},
		{"ros2_pulse_published_messages_total", map[string]string{"topic": "/odom", "node": "/odometry", "pid": "102"}, 300},
		{"ros2_pulse_timer_fires_total", map[string]string{"node": "/lidar", "pid": "101", "timer": "0"}, 77},
		{"ros2_pulse_timer_period_seconds", map[string]string{"node": "/lidar"}, 0.01},
		{"ros2_pulse_node_up", map[string]string{"node": "/helper", "pid": "102"}, 0},
		{"ros2_pulse_process_up", map[string]string{"pid": "101", "exe": "/opt/ros/lib/node"}, 0},
		{"ros2_pulse_processes", map[string]string{"state": "exited"}, 2},
		{"ros2_pulse_processes", map[string]string{"state": "alive"}, 0},
		{"ros2_pulse_build_info", map[string]string{"version": "test"}, 1},
	} {
		if got, ok := find(t, f, c.family, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.family, c.labels, got, ok, c.want)
		}
	}
	if _, ok := find(t, f, "ros2_pulse_messages_total", map[string]string{"topic": "/rosout"}); ok {
		t.Error("/rosout is exported")
	}
	// An intra series appears once intra has counted; inter is always there.
	if _, ok := find(t, f, "ros2_pulse_messages_total", map[string]string{"topic": "/odom", "side": "pub", "transport": "intra"}); ok {
		t.Error("a never-counted intra series is exported")
	}
	if n := len(f["ros2_pulse_messages_total"]); n != 6 {
		t.Errorf("%d message series, want 2 topics x (pub inter, recv inter, recv intra)", n)
	}
}

// Per topic: a process exit and the removal of its segment never make a
// counter go down; a newer publisher adds to what the old one counted.
func TestPerTopicNeverGoesDown(t *testing.T) {
	dir := t.TempDir()
	c, err := New(Options{Dir: dir, PerTopic: true, Retain: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	old := writeSeg(t, dir, 201, 1, "/imu", 1000, "/old") // older than the exporter: counted from now
	young := segment.NowMono() + 1
	p1 := writeSeg(t, dir, 202, young, "/cmd", 400, "/driver") // younger: counted from its creation
	pub := map[string]string{"topic": "/cmd", "side": "pub", "transport": "inter"}
	f := gather(t, c)
	if v, _ := find(t, f, "ros2_pulse_messages_total", pub); v != 400 {
		t.Fatalf("young publisher: %v, want 400", v)
	}
	if v, _ := find(t, f, "ros2_pulse_messages_total", map[string]string{"topic": "/imu", "side": "pub", "transport": "inter"}); v != 0 {
		t.Fatalf("a process older than the exporter counts from the exporter's start: %v", v)
	}
	if _, ok := find(t, f, "ros2_pulse_messages_total", map[string]string{"node": "/driver"}); ok {
		t.Fatal("per-topic series carry a node label")
	}
	time.Sleep(5 * time.Millisecond)
	gather(t, c) // past Retain: the exited segments are removed
	if _, err := os.Stat(p1); !os.IsNotExist(err) {
		t.Fatalf("the exited segment was not removed after Retain: %v", err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("the old segment was not removed: %v", err)
	}
	writeSeg(t, dir, 203, segment.NowMono()+1, "/cmd", 30, "/driver")
	f = gather(t, c)
	if v, _ := find(t, f, "ros2_pulse_messages_total", pub); v != 430 {
		t.Fatalf("after the restart of the publisher: %v, want 400 + 30", v)
	}
	if v, _ := find(t, f, "ros2_pulse_published_messages_total", map[string]string{"topic": "/cmd"}); v != 430 {
		t.Fatalf("published messages after the restart: %v, want 400 + 30", v)
	}
}

// A hostile segment (invalid UTF-8 names) never fails a scrape.
func TestHostileNames(t *testing.T) {
	dir := t.TempDir()
	writeSeg(t, dir, 301, 1, "/bad\xff\xfe", 3, "/n\xc3")
	c, err := New(Options{Dir: dir, Retain: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := testutil.GatherAndCompare(prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)
		return reg.Gather()
	}), strings.NewReader(""), "nothing"); err != nil {
		t.Fatalf("scrape failed: %v", err)
	}
	f := gather(t, c)
	if _, ok := find(t, f, "ros2_pulse_messages_total", map[string]string{"topic": "/bad\ufffd"}); !ok {
		t.Errorf("the hostile topic was not exported with its bytes replaced")
	}
}

// The gap histogram: classic buckets at octave bounds, cumulative; native
// buckets carrying every observation.
func TestGapHistogram(t *testing.T) {
	vals := make([]float64, 2+segment.GapBuckets)
	// 10 gaps of ~20 ms and 1 of ~800 ms.
	b20 := bucketOf(20e6)
	b800 := bucketOf(800e6)
	vals[2+b20], vals[2+b800] = 10, 1
	vals[0], vals[1] = 11, 10*0.02+0.8
	desc := prometheus.NewDesc("g", "h", []string{"topic"}, nil)
	var m dto.Metric
	if err := gapHistogram(desc, vals, time.Time{}, "/t").Write(&m); err != nil {
		t.Fatal(err)
	}
	h := m.Histogram
	if h.GetSampleCount() != 11 || len(h.Bucket) != 16 || h.GetSchema() != 4 {
		t.Fatalf("count %d, %d classic buckets, schema %d", h.GetSampleCount(), len(h.Bucket), h.GetSchema())
	}
	for _, b := range h.Bucket {
		want := uint64(0)
		if b.GetUpperBound() > 0.021 {
			want = 10
		}
		if b.GetUpperBound() > 0.84 {
			want = 11
		}
		if b.GetUpperBound() > 0.0168 && b.GetUpperBound() < 0.021 {
			continue // the octave bound just around 20 ms
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("le=%g: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
	var native int64
	for _, d := range h.PositiveDelta {
		native += d
	}
	if len(h.PositiveSpan) == 0 {
		t.Error("no native spans")
	}
}

func bucketOf(ns float64) int {
	for b := 0; b < segment.GapBuckets; b++ {
		if _, hi := window.BucketBounds(b); ns < hi {
			return b
		}
	}
	return segment.GapBuckets - 1
}

// Spec verdicts: one series per rule, 1 held, 0 violated, unjudgeable apart.
func TestSpecVerdicts(t *testing.T) {
	s, err := spec.Parse([]byte("topics:\n  /scan: {min_hz: 9, max_hz: 11, max_gap_ms: 200}\n  /tf: {min_hz: 45, side: pub}\nnodes: [/a, /b]\ntimers:\n  /ctl: {min_hz: 90}\n  /py_talker: {min_hz: 5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetVerdicts(s, []health.Warning{
		{Kind: health.TopicRate, Topic: "/scan", Side: spec.Recv, Transport: spec.Any},
		{Kind: health.CannotJudge, Topic: "/scan", Side: spec.Recv, Transport: spec.Any, Metric: "gap"},
		{Kind: health.NodeMissing, Node: "/b"},
		{Kind: health.TimerRate, Node: "/ctl", Timer: 0},
		{Kind: health.CannotJudge, Node: "/py_talker", Timer: -1, Metric: "timer", Reason: health.NoTimerTracepoint},
	})
	f := gather(t, c)
	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"kind": "rate", "topic": "/scan"}, 0},
		{map[string]string{"kind": "rate", "topic": "/tf", "side": "pub"}, 1},
		{map[string]string{"kind": "node", "node": "/a"}, 1},
		{map[string]string{"kind": "node", "node": "/b"}, 0},
		{map[string]string{"kind": "timer", "node": "/ctl", "timer": "any"}, 0},
	} {
		if got, ok := find(t, f, "ros2_pulse_spec_rule_ok", c.labels); !ok || got != c.want {
			t.Errorf("spec_rule_ok%v = %v (%v), want %v", c.labels, got, ok, c.want)
		}
	}
	if v, ok := find(t, f, "ros2_pulse_spec_rule_unjudgeable", map[string]string{"kind": "gap", "topic": "/scan"}); !ok || v != 1 {
		t.Errorf("unjudgeable gap rule: %v %v", v, ok)
	}
	// An rclpy node's timer rule: unjudgeable, never a violation at 0 Hz.
	if v, ok := find(t, f, "ros2_pulse_spec_rule_unjudgeable", map[string]string{"kind": "timer", "node": "/py_talker", "timer": "any"}); !ok || v != 1 {
		t.Errorf("unjudgeable rclpy timer rule: %v %v", v, ok)
	}
	if _, ok := find(t, f, "ros2_pulse_spec_rule_ok", map[string]string{"kind": "timer", "node": "/py_talker"}); ok {
		t.Error("an unjudgeable timer rule is also exported as judged")
	}
	if v, _ := find(t, f, "ros2_pulse_spec_min_hz", map[string]string{"topic": "/tf"}); v != 45 {
		t.Errorf("spec_min_hz: %v", v)
	}
	if _, ok := find(t, f, "ros2_pulse_spec_max_hz", map[string]string{"topic": "/tf"}); ok {
		t.Error("an unbounded max_hz is exported")
	}
}

// Two publishers of one topic in one node (legal in ROS) share every label:
// the family holds one series, their sum, and the scrape does not fail.
func TestSameLabelsMerge(t *testing.T) {
	dir := t.TempDir()
	err := segment.WriteSynthetic(filepath.Join(dir, "9.0.pulse"), segment.SyntheticSpec{Pid: 9, StartMono: 1, Exe: "/x", Nodes: []string{"/n"},
		Endpoints: []segment.SyntheticEndpoint{
			{Kind: segment.KindPublisher, Name: "/t", Node: 0, Counts: [4]uint64{5, 0, 0, 0}},
			{Kind: segment.KindPublisher, Name: "/t", Node: 0, Counts: [4]uint64{7, 0, 0, 0}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Dir: dir, Retain: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f := gather(t, c) // a pedantic registry: a duplicate series fails it
	if v, ok := find(t, f, "ros2_pulse_messages_total", map[string]string{"topic": "/t", "side": "pub", "transport": "inter"}); !ok || v != 12 {
		t.Errorf("merged counter: %v %v", v, ok)
	}
	if v, _ := find(t, f, "ros2_pulse_published_messages_total", map[string]string{"topic": "/t"}); v != 12 {
		t.Errorf("merged published: %v", v)
	}
}
