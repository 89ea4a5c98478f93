package diagnose

import (
	"fmt"
	"reflect"
	"testing"

	"ros2_pulse/internal/segment"
)

// robotScan is a robot-sized graph's scan: 24 processes and ~600 topics in
// namespaces, a third of them leaf topics (published, subscribed by nobody
// here: Near runs for each of their publishers), 72 subscriptions of topics
// nobody here publishes, two thirds of them silent, and one typo of a
// published name a process.
func robotScan() *segment.Scan {
	env := &segment.Env{}
	scan := &segment.Scan{}
	nss := []string{"sensing", "perception", "localization", "planning", "control", "system"}
	for p := 0; p < 24; p++ {
		s := snap(1000+p, fmt.Sprintf("/%s/node_%d", nss[p%len(nss)], p), env)
		for i := 0; i < 25; i++ {
			topic := fmt.Sprintf("/%s/stage_%d/output_%d", nss[p%len(nss)], p, i)
			s.Endpoints = append(s.Endpoints, ep(segment.KindPublisher, topic, qos(1, "p/msg/T"), 0))
			if i%3 != 0 { // subscribed in its own process; a third are leaf topics
				s.Endpoints = append(s.Endpoints, ep(segment.KindSubscription, topic, qos(1, "p/msg/T"), 10))
			}
		}
		for i := 0; i < 3; i++ { // from another host: nobody here publishes it
			received := uint64(0)
			if i == 0 {
				received = 5
			}
			s.Endpoints = append(s.Endpoints, ep(segment.KindSubscription, fmt.Sprintf("/remote/%d/input_%d", p, i), qos(1, "p/msg/T"), received))
		}
		// a typo of a published name: its near name is found
		s.Endpoints = append(s.Endpoints, ep(segment.KindSubscription, fmt.Sprintf("/%s/stage_%d/outptu_1", nss[p%len(nss)], p), qos(1, "p/msg/T"), 0))
		scan.Snapshots = append(scan.Snapshots, s)
	}
	return scan
}

// A silent subscription hearing its first message changes what a diagnosis
// reads, so the memo diagnoses again; the names are the same, so Near's
// answers are kept. Each iteration is one such window.
func BenchmarkMemoRobotFirstMessage(b *testing.B) {
	scan := robotScan()
	var m Memo
	m.Unmatched(scan)
	silent := &scan.Snapshots[0].Endpoints[len(scan.Snapshots[0].Endpoints)-2] // /remote/0/input_2
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		silent.Counts[0] = uint64(i % 2)
		m.Unmatched(scan)
	}
}

// The memo's near-name cache never changes an answer: a stream of scans
// whose names, and whose silent subscriptions, change gives what a fresh
// diagnosis of each gives.
func TestMemoNearCache(t *testing.T) {
	scan := robotScan()
	var m Memo
	check := func(step string) {
		t.Helper()
		if got, want := m.Unmatched(scan), Unmatched(scan); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the memo's %d findings differ from a fresh diagnosis' %d", step, len(got), len(want))
		}
	}
	check("first")
	if len(m.out) == 0 {
		t.Fatal("the robot scan has no findings: the near names are not exercised")
	}
	s0 := scan.Snapshots[0]
	s0.Endpoints[len(s0.Endpoints)-2].Counts[0] = 1 // a first message
	check("a first message")
	// a publisher of the typo'd name appears: a new name among the candidates
	s0.Endpoints = append(s0.Endpoints, ep(segment.KindPublisher, "/remote/0/input_1", qos(1, "p/msg/T"), 0))
	check("a new publisher")
	s0.Endpoints = append(s0.Endpoints, ep(segment.KindPublisher, "/remote/0/inptu_2", qos(1, "p/msg/T"), 0))
	check("a near name published")
	s0.Endpoints = s0.Endpoints[:len(s0.Endpoints)-2] // both gone
	check("the names gone again")
	scan.Snapshots = scan.Snapshots[1:] // a process exits: its names go
	check("a process gone")
}

// A first diagnosis at robot size: every name searched once.
func BenchmarkDiagnoseRobot(b *testing.B) {
	scan := robotScan()
	b.ReportAllocs()
	for b.Loop() {
		Diagnose(scan)
	}
}
