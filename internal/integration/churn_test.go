package integration

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"ros2_pulse/internal/export"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/simtruth"
	"ros2_pulse/internal/window"
)

// Endpoints never run out in a long-lived process: rclpy-style timers take
// no slot, and publishers made and destroyed over and over reuse retired
// slots (ABI 1.3 generations). Nothing a reader counted is lost or counted
// twice across a reuse: every message of the 150 churned publishers is in
// the windows' totals, and the publisher and subscription made afterwards
// are counted exactly.
func TestEndpointChurnNeverFillsTheSegment(t *testing.T) {
	for _, distro := range []string{"humble", "jazzy"} {
		t.Run(distro, func(t *testing.T) {
			g := sim(t, "testdata/churn.graph", distro, 7*time.Second, "ROS_PULSE_MAX_ENDPOINTS=32")
			rec := newRecorder(t, g.dir, 250*time.Millisecond, window.Options{})
			ws := record(t, g, rec, 250*time.Millisecond)
			var churned, chatterPub, chatterRecv uint64
			reused := false
			for _, w := range ws {
				if tp := w.Topic("/churned"); tp != nil {
					churned += tp.Published
				}
				tp := w.Topic("/late_chatter")
				if tp == nil {
					continue
				}
				for _, p := range tp.Pubs {
					chatterPub += p.Delta[0]
				}
				for _, s := range tp.Subs {
					chatterRecv += s.Delta[0] + s.Delta[1]
				}
			}
			s := scan(t, g.dir)
			// Every window of both topics to the message against what the graph
			// did. (Not the final scan's totals: a re-used slot's entity holds
			// only its own counts; the windows hold its predecessors'.)
			for _, p := range judgeWindows(ws, g.brackets, distrosOf(s), []string{"/late_chatter", "/churned"}) {
				t.Error(p)
			}
			if len(s.Snapshots) != 1 {
				t.Fatalf("%d segments", len(s.Snapshots))
			}
			snap := s.Snapshots[0]
			for _, e := range snap.Endpoints {
				reused = reused || e.Generation > 0
			}
			if snap.DroppedEndpoints != 0 || !reused {
				t.Errorf("dropped %d endpoints, slots reused: %v", snap.DroppedEndpoints, reused)
			}
			if timers := len(endpointsOfKind(snap, segment.KindTimer)); timers != 0 {
				t.Errorf("%d timer slots taken by rclpy timers, which never fire a tracepoint", timers)
			}
			var did uint64
			for k, c := range g.truth().Counts {
				if k.Topic == "/churned" && k.Kind == "pub" {
					did += c[simtruth.PubInter]
				}
			}
			if churned != 150*3 || did != churned {
				t.Errorf("the windows hold %d messages of the churned publishers; they published %d (150 x 3 by the graph's file)", churned, did)
			}
			// /late_chatter ran from its creation to the end: its totals in the windows are its own counts.
			late := endpoints(s, segment.KindPublisher, "/late_chatter")
			if len(late) != 1 || chatterPub != late[0].Counts[segment.SlotInter] || chatterPub == 0 {
				t.Errorf("/late_chatter: windows hold %d publishes, its endpoint %+v", chatterPub, late)
			}
			var delivered uint64 // what the graph's subscriptions of /late_chatter really got
			for k, c := range g.truth().Counts {
				if k.Topic == "/late_chatter" && k.Kind == "sub" {
					delivered += c[simtruth.SubInter] + c[simtruth.SubIntra]
				}
			}
			if chatterRecv != delivered || chatterRecv > chatterPub {
				t.Errorf("/late_chatter: the windows hold %d deliveries of %d published; the graph delivered %d", chatterRecv, chatterPub, delivered)
			}
			// The exporter's counters are the same counts, and it drops nothing either.
			got := exported(t, g.dir)
			subs := endpoints(s, segment.KindSubscription, "/late_chatter")
			if len(subs) != 1 || got["/late_chatter pub"] != float64(chatterPub) || got["/late_chatter recv"] != float64(subs[0].Counts[segment.SlotInter]) ||
				got["dropped"] != 0 {
				t.Errorf("export: %v; windows %d published, subscription %+v", got, chatterPub, subs)
			}
		})
	}
}

func endpointsOfKind(s *segment.Snapshot, k segment.Kind) []segment.Endpoint {
	var out []segment.Endpoint
	for _, e := range s.Endpoints {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// exported scrapes a pulse export collector of dir once: the message counters
// summed per "topic side", and the dropped endpoints.
func exported(t *testing.T, dir string) map[string]float64 {
	t.Helper()
	c, err := export.New(export.Options{Dir: dir, Retain: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetName() {
			case "ros2_pulse_messages_total":
				out[labels["topic"]+" "+labels["side"]] += m.Counter.GetValue()
			case "ros2_pulse_dropped_endpoints_total":
				out["dropped"] += m.Counter.GetValue()
			}
		}
	}
	return out
}
