package diagnose

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"ros2_pulse/internal/segment"
)

func snap(pid int, node string, env *segment.Env, eps ...segment.Endpoint) *segment.Snapshot {
	return &segment.Snapshot{Pid: pid, Alive: true, Distro: segment.DistroJazzy, Env: env, Nodes: []segment.Node{{Name: node}}, Endpoints: eps}
}

func ep(kind segment.Kind, topic string, q *segment.QoS, received uint64) segment.Endpoint {
	return segment.Endpoint{Kind: kind, Name: topic, Node: 0, QoS: q, Counts: [4]uint64{received}}
}

func qos(rel uint8, typ string) *segment.QoS {
	return &segment.QoS{Actual: true, History: 1, Depth: 10, Reliability: rel, Durability: 2, Liveliness: 1,
		DeadlineNs: segment.DurationInfinite, LeaseNs: segment.DurationInfinite, Domain: 0, RMW: "rmw_fastrtps_cpp", Type: typ}
}

// A subscription whose publisher's QoS could not be read is "QoS unknown",
// never a guess, and only where nothing else meets it; an exited process is
// not judged; a silent subscription with no near name gets no finding (its
// publisher may be on another host).
func TestUnknownQoSAndExitedProcesses(t *testing.T) {
	env := &segment.Env{}
	unknown := &segment.QoS{Domain: 0, RMW: "rmw_fastrtps_cpp"}
	dead := snap(3, "/dead", env, ep(segment.KindPublisher, "/a", qos(2, "p/msg/T"), 0))
	dead.Alive = false
	scan := &segment.Scan{Snapshots: []*segment.Snapshot{
		snap(1, "/pub", env, ep(segment.KindPublisher, "/a", unknown, 0)),
		snap(2, "/sub", env, ep(segment.KindSubscription, "/a", qos(1, "p/msg/T"), 0),
			ep(segment.KindSubscription, "/lonely", qos(1, "p/msg/T"), 0)),
		dead,
	}}
	got := Diagnose(scan)
	if len(got) != 1 || got[0].Reason != QoSUnknown || got[0].Error || got[0].Node != "/sub" || got[0].Topic != "/a" {
		t.Fatalf("%+v", got)
	}
}

func TestNear(t *testing.T) {
	for _, c := range []struct {
		topic string
		cands []string
		want  []string
	}{
		{"/cmd_vel", []string{"/robot1/cmd_vel", "/odom", "/cmd_vel"}, []string{"/robot1/cmd_vel"}},
		{"/robot1/cmd_vel", []string{"/cmd_vel", "/robot2/cmd_vel"}, []string{"/robot2/cmd_vel", "/cmd_vel"}},
		{"/camera/image_raw", []string{"/camera/image_rect", "/camera/imag_raw"}, []string{"/camera/imag_raw"}},
		{"/tf", []string{"/tf_static", "/rosout"}, nil}, // short names: no typo guess; builtins never
		{"/scan", []string{"/scam"}, []string{"/scam"}}, // a typo
		{"/scans", []string{"/scan"}, []string{"/scan"}},
	} {
		got := Near(c.topic, c.cands)
		if len(got) == 0 && len(c.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Near(%s, %v) = %v, want %v", c.topic, c.cands, got, c.want)
		}
	}
}

// 100 processes of 50 endpoints, every topic published and subscribed in
// every process (the reader benchmark's directory, alive): what one window's
// diagnosis costs the recorder.
func BenchmarkDiagnose100x50(b *testing.B) {
	scan := &segment.Scan{}
	for p := 0; p < 100; p++ {
		s := &segment.Snapshot{Pid: 1000 + p, Alive: true, Distro: segment.DistroJazzy, Env: &segment.Env{}, Nodes: []segment.Node{{Name: "/n"}}}
		for e := 0; e < 50; e++ {
			kind := segment.Kind(segment.KindPublisher)
			if e%2 == 1 {
				kind = segment.KindSubscription
			}
			s.Endpoints = append(s.Endpoints, ep(kind, "/topic_"+string(rune('a'+e/2)), qos(1, "std_msgs/msg/String"), 5))
		}
		scan.Snapshots = append(scan.Snapshots, s)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if fs := Diagnose(scan); len(fs) != 0 {
			b.Fatal(fs)
		}
	}
}

// The memo's answer is the same as a fresh diagnosis, recomputed when a
// subscription hears its first message or an endpoint is learnt.
func TestMemo(t *testing.T) {
	env := &segment.Env{}
	sub := ep(segment.KindSubscription, "/robot1/cmd_vel", qos(1, "p/msg/T"), 0)
	scan := &segment.Scan{Snapshots: []*segment.Snapshot{
		snap(1, "/pub", env, ep(segment.KindPublisher, "/cmd_vel", qos(1, "p/msg/T"), 0)),
		snap(2, "/sub", env, sub),
	}}
	var m Memo
	if got := m.Unmatched(scan); len(got) != 2 || got[1].Reason != string(NoPublisher) || got[0].Reason != string(NoSubscriber) {
		t.Fatalf("%+v", got)
	}
	scan.Snapshots[1].Endpoints[0].Counts[0] = 1 // it hears someone after all (a publisher on another host)
	if got := m.Unmatched(scan); len(got) != 1 || got[0].Reason != string(NoSubscriber) {
		t.Errorf("after the first message: %+v", got)
	}
}

// A recorder's window when nothing changed: the fingerprint pass alone.
func BenchmarkMemo100x50(b *testing.B) {
	scan := &segment.Scan{}
	for p := 0; p < 100; p++ {
		s := &segment.Snapshot{Pid: 1000 + p, Alive: true, Distro: segment.DistroJazzy, Env: &segment.Env{}, Nodes: []segment.Node{{Name: "/n"}}}
		for e := 0; e < 50; e++ {
			s.Endpoints = append(s.Endpoints, ep(segment.Kind(1+e%2), "/topic", qos(1, "std_msgs/msg/String"), 5))
		}
		scan.Snapshots = append(scan.Snapshots, s)
	}
	var m Memo
	m.Unmatched(scan)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Unmatched(scan)
	}
}

// A silent subscription nothing here publishes: no_publisher, or not_probed
// when ROS processes here are not probed; never for one that hears someone
// or whose topic is published.
func TestUnpublished(t *testing.T) {
	env := &segment.Env{}
	scan := &segment.Scan{Snapshots: []*segment.Snapshot{
		snap(1, "/a", env, ep(segment.KindSubscription, "/lonely", qos(1, "p/msg/T"), 0),
			ep(segment.KindSubscription, "/remote", qos(1, "p/msg/T"), 7),
			ep(segment.KindSubscription, "/here", qos(1, "p/msg/T"), 0), ep(segment.KindPublisher, "/here", qos(1, "p/msg/T"), 0)),
	}}
	if got := Unpublished(scan, nil); len(got) != 1 || got[0].Topic != "/lonely" || got[0].Reason != NoPublisher || got[0].Error {
		t.Errorf("%+v", got)
	}
	if got := Unpublished(scan, []string{"/ghost (pid 9)"}); len(got) != 1 || got[0].Reason != NotProbed ||
		got[0].Detail != "nothing probed publishes it; not probed here: /ghost (pid 9)" {
		t.Errorf("%+v", got)
	}
}

// A subscription that hears its publisher is no finding, whatever is unknown of the publisher.
func TestUnknownQoSOfAHeardPublisher(t *testing.T) {
	env := &segment.Env{}
	scan := &segment.Scan{Snapshots: []*segment.Snapshot{
		snap(1, "/pub", env, ep(segment.KindPublisher, "/a", nil, 0)),
		snap(2, "/sub", env, ep(segment.KindSubscription, "/a", qos(1, "p/msg/T"), 12)),
	}}
	if got := Diagnose(scan); len(got) != 0 {
		t.Errorf("%+v", got)
	}
}

// withinEdits is levenshtein(a, b) <= k, on every pair of a few thousand
// random names over a small alphabet (so that many are near), k from 0 to 3.
func TestWithinEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = "ab/c"[r.IntN(4)]
		}
		return string(b)
	}
	for n := 0; n < 20000; n++ {
		a, b := word(), word()
		if r.IntN(2) == 0 { // a near copy: a few edits of a
			bb := []byte(a)
			for e := r.IntN(4); e > 0 && len(bb) > 0; e-- {
				i := r.IntN(len(bb))
				switch r.IntN(3) {
				case 0:
					bb[i] = 'x'
				case 1:
					bb = append(bb[:i], bb[i+1:]...)
				default:
					bb = append(bb[:i], append([]byte{'y'}, bb[i:]...)...)
				}
			}
			b = string(bb)
		}
		d := levenshtein(a, b)
		for k := 0; k <= 3; k++ {
			if got := withinEdits(a, b, k); got != (d <= k) {
				t.Fatalf("withinEdits(%q, %q, %d) = %v, distance %d", a, b, k, got, d)
			}
		}
	}
}
