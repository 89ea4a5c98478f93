package integration

import (
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/diagnose"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/simtruth"
)

// TestWhySilent stages every cause of a silent subscription in simgraph and
// checks, per distro, that the graph's own counts say who heard nothing and
// that diagnose names each cause exactly, with both sides' values, and
// nothing for the pairs that meet.
func TestWhySilent(t *testing.T) {
	for _, distro := range []string{"humble", "jazzy", "kilted"} {
		t.Run(distro, func(t *testing.T) {
			g := sim(t, "testdata/silent.graph", distro, 3*time.Second, "ROS_TOPIC_STATS_JITTER=1") // gaps: bursts are seen
			waitLearnt(t, g.dir, "testdata/silent.graph")
			// The shallow queue needs a burst sent: wait for the graph's own count
			// of /burst to reach one burst (a truth read before the scan bounds it).
			for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				sent, tr := uint64(0), g.truth()
				for _, k := range tr.Keys() {
					if k.Kind == "pub" && k.Topic == "/burst" {
						sent = tr.Get(k)[simtruth.PubInter]
					}
				}
				if sent >= 5 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("/burst sent %d messages in 15 s, not one burst of 5", sent)
				}
			}
			findings := diagnose.Diagnose(scan(t, g.dir)) // while every process is alive
			g.wait()
			truth := g.truth()
			heard := map[string]uint64{} // node + topic -> what the graph delivered
			for _, k := range truth.Keys() {
				if k.Kind == "sub" {
					c := truth.Get(k)
					heard[k.Node+" "+k.Topic] += c[simtruth.SubInter] + c[simtruth.SubIntra]
				}
			}
			type want struct {
				reason diagnose.Reason
				detail string
			}
			wants := map[string]want{
				"/listener /chatter":        {diagnose.QoSIncompatible, "reliability: publisher best_effort, subscription reliable"},
				"/listener /typed":          {diagnose.TypeMismatch, "publisher std_msgs/msg/String, subscription std_msgs/msg/Int32"},
				"/listener /robot1/cmd_vel": {diagnose.NoPublisher, "published here: /cmd_vel"},
				"/listener /latched":        {diagnose.QoSIncompatible, "durability: publisher volatile, subscription transient_local"},
				"/listener /dl":             {diagnose.QoSIncompatible, "deadline: publisher 200ms, subscription 100ms"},
				"/far_listener /far":        {diagnose.OtherDomain, "publisher on domain 0, subscription on domain 5"},
				"/zen_listener /zen":        {diagnose.OtherRMW, "publisher on rmw_fastrtps_cpp, subscription on rmw_zenoh_cpp"},
			}
			if distro != "humble" { // Humble has no discovery range: the hermit hears /ok there
				wants["/hermit /ok"] = want{diagnose.DiscoveryRange, "publisher's discovery range SUBNET, subscription's OFF"}
			}
			for key := range wants {
				if heard[key] != 0 {
					t.Errorf("%s: the graph delivered %d messages, the stand-in middleware should have matched nothing", key, heard[key])
				}
			}
			for _, key := range []string{"/listener /ok", "/cyclone_listener /ok", "/listener /burst"} {
				if heard[key] == 0 {
					t.Errorf("%s heard nothing: the graph is wrong", key)
				}
			}
			got := map[string]diagnose.Finding{}
			for _, f := range findings {
				t.Logf("%s", f.Line())
				if f.Pub {
					continue
				}
				key := f.Node + " " + f.Topic
				if _, dup := got[key]; dup {
					t.Errorf("%s: two findings", key)
				}
				got[key] = f
			}
			for key, w := range wants {
				f, ok := got[key]
				if !ok {
					t.Errorf("%s: no finding, want %s (%s)", key, w.reason, w.detail)
					continue
				}
				if f.Reason != w.reason || f.Detail != w.detail || !f.Error || !f.Silent || f.Fix == "" {
					t.Errorf("%s: %s (%s) error=%v silent=%v fix=%q, want %s (%s)", key, f.Reason, f.Detail, f.Error, f.Silent, f.Fix, w.reason, w.detail)
				}
				delete(got, key)
			}
			if f, ok := got["/cyclone_listener /ok"]; !ok || f.Reason != diagnose.CrossVendor || f.Error ||
				!strings.Contains(f.Detail, "rmw_cyclonedds_cpp") {
				t.Errorf("/cyclone_listener /ok: %+v, want a cross_vendor warning", f)
			}
			delete(got, "/cyclone_listener /ok")
			if f, ok := got["/listener /burst"]; !ok || f.Reason != diagnose.ShallowQueue || f.Error || !strings.Contains(f.Detail, "depth 1 against bursts") {
				t.Errorf("/listener /burst: %+v, want a shallow_queue warning", f)
			}
			delete(got, "/listener /burst")
			for key, f := range got {
				t.Errorf("%s: a finding where nothing is wrong: %s", key, f.Line())
			}
		})
	}
}

// No healthy pair is flagged on the demo robot and the stress farm.
func TestNoFalseReasons(t *testing.T) {
	for _, c := range []struct{ graph, distro string }{{"demo", "humble"}, {"demo", "kilted"}, {"stress", "jazzy"}} {
		g := sim(t, c.graph, c.distro, 3*time.Second)
		for _, f := range diagnose.Diagnose(waitLearnt(t, g.dir, "../../sim/graphs/"+c.graph+".graph")) {
			t.Errorf("%s on %s: %s", c.graph, c.distro, f.Line())
		}
		g.wait()
	}
}

// waitLearnt is simtruth.WaitLearnt, failing the test when it times out.
func waitLearnt(t *testing.T, dir, graphFile string) *segment.Scan {
	t.Helper()
	s, err := simtruth.WaitLearnt(dir, graphFile, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
