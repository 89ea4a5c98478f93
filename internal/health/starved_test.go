package health

import (
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/diagnose"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// crossVendorScan is a Cyclone DDS subscription of /chatter (pid 2) whose
// publisher here is a Fast DDS node (pid 1), as diagnose reads them from the
// segments; with sameVendor, a Cyclone DDS publisher of /chatter too (pid 3).
func crossVendorScan(sameVendor bool) *segment.Scan {
	proc := func(pid int, node, rmw string, kind segment.Kind) *segment.Snapshot {
		q := &segment.QoS{Actual: true, History: 1, Depth: 10, Reliability: 1, Durability: 2, Liveliness: 1,
			DeadlineNs: segment.DurationInfinite, LeaseNs: segment.DurationInfinite, RMW: rmw, Type: "std_msgs/msg/String"}
		return &segment.Snapshot{Pid: pid, Alive: true, Distro: segment.DistroHumble, Env: &segment.Env{RMW: rmw},
			Nodes: []segment.Node{{Name: node}}, Endpoints: []segment.Endpoint{{Kind: kind, Name: "/chatter", QoS: q}}}
	}
	scan := &segment.Scan{Snapshots: []*segment.Snapshot{
		proc(1, "/talker", "rmw_fastrtps_cpp", segment.KindPublisher),
		proc(2, "/listener", "rmw_cyclonedds_cpp", segment.KindSubscription),
	}}
	if sameVendor {
		scan.Snapshots = append(scan.Snapshots, proc(3, "/cyclone_talker", "rmw_cyclonedds_cpp", segment.KindPublisher))
	}
	return scan
}

// crossVendorWindow is the scan's window: the publishers publish 20 Hz, the
// subscription receives nothing (never, or no more: received > 0).
func crossVendorWindow(scan *segment.Scan, received uint64) *window.Window {
	t := window.Topic{Name: "/chatter", PubCount: 1, PubInterSeen: true, SubCount: 1, RecvSeen: received > 0,
		Subs: []window.EndpointRate{{Pid: 2, Node: "/listener", Alive: true, Exposure: 1, Total: [2]uint64{received, 0}}}}
	for _, s := range scan.Snapshots {
		if s.Endpoints[0].Kind == segment.KindPublisher {
			t.Pubs = append(t.Pubs, window.EndpointRate{Pid: s.Pid, Node: s.Nodes[0].Name, Inter: 20, Alive: true, Exposure: 1, Total: [2]uint64{40, 0}})
			t.PubInter, t.PubAny, t.Published = t.PubInter+20, t.PubAny+20, t.Published+20
		}
	}
	t.PubCount = len(t.Pubs)
	w := win([]window.Topic{t}, []string{"/talker", "/listener"}, nil)
	w.Unmatched = diagnose.Unmatched(scan)
	return w
}

// observe runs a lag detector over four windows and returns the last one's
// verdicts on /listener.
func observe(w *window.Window) []Warning {
	d := NewLagDetector()
	var out []Warning
	for i := 0; i < 4; i++ {
		out = d.Observe(w, false, time.Unix(int64(i), 0))
	}
	return out
}

// A starving Cyclone DDS subscription whose only publisher here is a Fast
// DDS node (real Humble: 10 of 90 messages, then nothing) gets the
// cross-vendor pair as its likely cause, with the fix, whether it never
// received (recv_starved) or stopped (recv_lag at 0 Hz), from a window and
// from a scan (pulse doctor, pulse export) alike. With a publisher here on
// its own vendor's RMW the cause stays not visible, as before (issue 44,
// defect 3).
func TestStarvedCrossVendorCause(t *testing.T) {
	const cause = "cross_vendor (publisher on rmw_fastrtps_cpp, subscription on rmw_cyclonedds_cpp)"
	only := crossVendorScan(false)
	for _, c := range []struct {
		received uint64
		kind     Kind
	}{{0, RecvStarved}, {10, RecvLag}} {
		ws := observe(crossVendorWindow(only, c.received))
		if len(ws) != 1 || ws[0].Kind != c.kind || ws[0].Cause != cause || ws[0].Fix != diagnose.StarvedCrossVendorFix {
			t.Errorf("received %d, then nothing, from a Fast DDS publisher only: %+v, want %s with cause %q and the fix", c.received, ws, c.kind, cause)
		}
	}
	if !strings.Contains(diagnose.StarvedCrossVendorFix, "one RMW_IMPLEMENTATION") ||
		!strings.Contains(diagnose.StarvedCrossVendorFix, "does not guarantee") {
		t.Errorf("the fix %q", diagnose.StarvedCrossVendorFix)
	}
	u, ok := StarvedCauseIn(only, diagnose.Unmatched(only), "/chatter", "/listener", 2)
	if !ok || u.Why() != cause || u.Fix != diagnose.StarvedCrossVendorFix || u.Error {
		t.Errorf("from the scan: %+v %v", u, ok)
	}
	if got := StarvedBecause(20, &u); !strings.Contains(got, "the likely cause: "+cause+"; fix: run both sides with one RMW_IMPLEMENTATION") {
		t.Errorf("doctor's words: %q", got)
	}

	mixed := crossVendorScan(true)
	for _, received := range []uint64{0, 10} {
		ws := observe(crossVendorWindow(mixed, received))
		if len(ws) != 1 || ws[0].Cause != "" || ws[0].Fix != "" {
			t.Errorf("received %d, with a Cyclone DDS publisher here too: %+v, want no cause", received, ws)
		}
	}
	if u, ok := StarvedCauseIn(mixed, diagnose.Unmatched(mixed), "/chatter", "/listener", 2); ok {
		t.Errorf("mixed vendors, from the scan: %+v", u)
	}
	// The cross_vendor finding is still there, as a warning, in both.
	for _, scan := range []*segment.Scan{only, mixed} {
		found := false
		for _, u := range diagnose.Unmatched(scan) {
			found = found || u.Reason == string(diagnose.CrossVendor) && !u.Error && u.Node == "/listener"
		}
		if !found {
			t.Errorf("no cross_vendor warning: %+v", diagnose.Unmatched(scan))
		}
	}
}

// A subscription that had received and has received nothing since, whose
// only publishers here are on another DDS vendor, is quiet with the
// cross-vendor cause (pulse doctor says it stopped); one still receiving,
// or one with a publisher on its own vendor, is not listed.
func TestQuietSinceCrossVendor(t *testing.T) {
	received := func(scan *segment.Scan, n uint64) *segment.Scan {
		out := &segment.Scan{}
		for _, s := range scan.Snapshots {
			c := *s
			c.Endpoints = append([]segment.Endpoint(nil), s.Endpoints...)
			if c.Endpoints[0].Kind == segment.KindSubscription {
				c.Endpoints[0].Counts[segment.SlotInter] = n
			}
			out.Snapshots = append(out.Snapshots, &c)
		}
		return out
	}
	only := crossVendorScan(false)
	earlier, later := received(only, 10), received(only, 10)
	q := QuietSince(earlier, later, diagnose.Unmatched(later))
	if len(q) != 1 || q[0].Node != "/listener" || q[0].Pid != 2 || q[0].Received != 10 || q[0].Cause.Reason != string(diagnose.CrossVendor) ||
		!strings.HasPrefix(q[0].Words(20), "received 10, then nothing of 20.0 Hz published here; the likely cause: cross_vendor (") {
		t.Errorf("stopped, from a Fast DDS publisher only: %+v", q)
	}
	if q := QuietSince(earlier, received(only, 12), diagnose.Unmatched(later)); len(q) != 0 {
		t.Errorf("still receiving: %+v", q)
	}
	if q := QuietSince(received(only, 0), received(only, 0), diagnose.Unmatched(later)); len(q) != 0 {
		t.Errorf("never received (starved, said elsewhere): %+v", q)
	}
	mixed := crossVendorScan(true)
	if q := QuietSince(received(mixed, 10), received(mixed, 10), diagnose.Unmatched(mixed)); len(q) != 0 {
		t.Errorf("with a Cyclone DDS publisher here too: %+v", q)
	}
}
