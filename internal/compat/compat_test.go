package compat

import (
	"testing"
	"time"

	"ros2_pulse/internal/segment"
)

// A profile as rmw reports an actual QoS (deadline and lease infinite unless given).
func profile(rel, dur, liv uint8, deadline, lease time.Duration) *segment.QoS {
	q := &segment.QoS{Actual: true, History: 1, Depth: 10, Reliability: rel, Durability: dur, Liveliness: liv,
		DeadlineNs: segment.DurationInfinite, LeaseNs: segment.DurationInfinite}
	if deadline > 0 {
		q.DeadlineNs = uint64(deadline)
	}
	if lease > 0 {
		q.LeaseNs = uint64(lease)
	}
	return q
}

// Each row is one sentence of rmw_dds_common/src/qos.cpp
// (qos_profile_check_compatible), stated here independently of the tables:
// the verdict and, for a problem, the policy named.
func TestQoSCompatibilityFromTheSource(t *testing.T) {
	const ms = time.Millisecond
	cases := []struct {
		why      string
		pub, sub *segment.QoS
		verdict  Verdict
		policy   string
	}{
		{"best effort publisher and reliable subscription", profile(2, 2, 1, 0, 0), profile(1, 2, 1, 0, 0), Error, "reliability"},
		{"reliable publisher, best effort subscription", profile(1, 2, 1, 0, 0), profile(2, 2, 1, 0, 0), OK, ""},
		{"reliable both", profile(1, 2, 1, 0, 0), profile(1, 2, 1, 0, 0), OK, ""},
		{"best effort both", profile(2, 2, 1, 0, 0), profile(2, 2, 1, 0, 0), OK, ""},
		{"volatile publisher and transient local subscription", profile(1, 2, 1, 0, 0), profile(1, 1, 1, 0, 0), Error, "durability"},
		{"transient local publisher, volatile subscription", profile(1, 1, 1, 0, 0), profile(1, 2, 1, 0, 0), OK, ""},
		{"subscription has a deadline, publisher does not", profile(1, 2, 1, 0, 0), profile(1, 2, 1, 100*ms, 0), Error, "deadline"},
		{"subscription deadline less than publisher's", profile(1, 2, 1, 200*ms, 0), profile(1, 2, 1, 100*ms, 0), Error, "deadline"},
		{"publisher deadline within the subscription's", profile(1, 2, 1, 100*ms, 0), profile(1, 2, 1, 200*ms, 0), OK, ""},
		{"publisher deadline, subscription none", profile(1, 2, 1, 100*ms, 0), profile(1, 2, 1, 0, 0), OK, ""},
		{"automatic publisher and manual-by-topic subscription", profile(1, 2, 1, 0, 0), profile(1, 2, 3, 0, 0), Error, "liveliness"},
		{"manual-by-topic publisher, automatic subscription", profile(1, 2, 3, 0, 0), profile(1, 2, 1, 0, 0), OK, ""},
		{"subscription has a lease, publisher does not", profile(1, 2, 1, 0, 0), profile(1, 2, 1, 0, time.Second), Error, "lease"},
		{"subscription lease less than publisher's", profile(1, 2, 1, 0, 2*time.Second), profile(1, 2, 1, 0, time.Second), Error, "lease"},
		{"publisher lease within the subscription's", profile(1, 2, 1, 0, time.Second), profile(1, 2, 1, 0, 2*time.Second), OK, ""},
		{"reliable subscription, publisher system default", profile(0, 2, 1, 0, 0), profile(1, 2, 1, 0, 0), Warning, "reliability"},
		{"best effort publisher, subscription unknown", profile(2, 2, 1, 0, 0), profile(3, 2, 1, 0, 0), Warning, "reliability"},
		{"publisher unknown, best effort subscription: not a warning", profile(3, 2, 1, 0, 0), profile(2, 2, 1, 0, 0), OK, ""},
		{"transient local subscription, publisher unknown", profile(1, 3, 1, 0, 0), profile(1, 1, 1, 0, 0), Warning, "durability"},
		{"manual-by-topic subscription, publisher system default", profile(1, 2, 0, 0, 0), profile(1, 2, 3, 0, 0), Warning, "liveliness"},
		{"an error hides the warnings", profile(2, 0, 1, 0, 0), profile(1, 0, 1, 0, 0), Error, "reliability"},
	}
	for _, c := range cases {
		got := CheckQoS(c.pub, c.sub)
		verdict, policy := OK, ""
		if len(got) > 0 {
			verdict, policy = got[0].Verdict, got[0].Policy
		}
		if verdict != c.verdict || policy != c.policy {
			t.Errorf("%s: %v %q, want %v %q (%v)", c.why, verdict, policy, c.verdict, c.policy, got)
		}
		for _, f := range got {
			if f.Verdict == Error && f.Fix() == "" {
				t.Errorf("%s: no fix for %s", c.why, f.Policy)
			}
		}
	}
	// Both sides' values are named for the user.
	f := CheckQoS(profile(2, 2, 1, 0, 0), profile(1, 2, 1, 0, 0))[0]
	if f.String() != "reliability: publisher best_effort, subscription reliable" {
		t.Errorf("finding %q", f.String())
	}
	if s := Summary(profile(2, 1, 1, 100*time.Millisecond, 0)); s != "best_effort transient_local keep_last(10) deadline 100ms" {
		t.Errorf("summary %q", s)
	}
	if s := Summary(&segment.QoS{}); s != "QoS unknown" {
		t.Errorf("summary of an unknown QoS %q", s)
	}
}

// Which rmw implementations meet (REP-2000's list; Zenoh speaks its own protocol).
func TestRMWs(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want Verdict
	}{
		{"rmw_fastrtps_cpp", "rmw_fastrtps_cpp", OK},
		{"rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp", OK}, // one vendor
		{"rmw_fastrtps_cpp", "rmw_cyclonedds_cpp", Warning},  // RTPS across vendors
		{"rmw_connextdds", "rmw_cyclonedds_cpp", Warning},
		{"rmw_cyclonedds_cpp", "rmw_zenoh_cpp", Error},
		{"rmw_zenoh_cpp", "rmw_zenoh_cpp", OK},
		{"", "rmw_zenoh_cpp", OK},        // unknown: not judged
		{"rmw_foo", "rmw_zenoh_cpp", OK}, // not on the list: not judged
	} {
		if got := RMWsMeet(c.a, c.b); got != c.want {
			t.Errorf("%s / %s: %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// Discovery on one host (docs.ros.org Improved-Dynamic-Discovery's
// "Same host" table), and how each distro reads its settings.
func TestDiscovery(t *testing.T) {
	env := func(flags uint32, localhost, rng string) *segment.Env {
		return &segment.Env{Flags: flags, LocalhostOnly: localhost, DiscoveryRange: rng}
	}
	const lo, rg = segment.EnvLocalhostOnly, segment.EnvDiscoveryRange
	for _, c := range []struct {
		distro segment.Distro
		env    *segment.Env
		want   Range
	}{
		{segment.DistroHumble, env(0, "", ""), RangeSubnet},
		{segment.DistroHumble, env(lo, "1", ""), RangeLocalhost},
		{segment.DistroHumble, env(rg, "", "OFF"), RangeSubnet}, // Humble has no discovery range
		{segment.DistroJazzy, env(rg, "", "OFF"), RangeOff},
		{segment.DistroJazzy, env(rg, "", "localhost"), RangeLocalhost},
		{segment.DistroJazzy, env(rg, "", ""), RangeSubnet},
		{segment.DistroJazzy, env(lo|rg, "1", "SUBNET"), RangeLocalhost}, // localhost_only wins, as rcl warns
		{segment.DistroKilted, env(rg, "", "bogus"), ""},
		{segment.DistroKilted, nil, ""},
	} {
		if got := RangeOf(c.distro, c.env); got != c.want {
			t.Errorf("%v %+v: %q, want %q", c.distro, c.env, got, c.want)
		}
	}
	for _, c := range []struct {
		distro segment.Distro
		a, b   Range
		want   Verdict
	}{
		{segment.DistroJazzy, RangeOff, RangeOff, Error},
		{segment.DistroJazzy, RangeOff, RangeSubnet, Error},
		{segment.DistroJazzy, RangeSubnet, RangeOff, Error},
		{segment.DistroJazzy, RangeLocalhost, RangeOff, Error},
		{segment.DistroJazzy, RangeLocalhost, RangeSubnet, OK},
		{segment.DistroKilted, RangeLocalhost, RangeLocalhost, OK},
		{segment.DistroKilted, RangeSubnet, RangeSubnet, OK},
		{segment.DistroKilted, RangeDefault, RangeLocalhost, OK},
		{segment.DistroHumble, RangeLocalhost, RangeSubnet, Warning}, // rmw-dependent on Humble
		{segment.DistroHumble, RangeLocalhost, RangeLocalhost, OK},
		{segment.DistroJazzy, "", RangeOff, OK}, // unknown: not judged
	} {
		if got := DiscoveryMeets(c.distro, c.a, c.b); got != c.want {
			t.Errorf("%v %s/%s: %v, want %v", c.distro, c.a, c.b, got, c.want)
		}
	}
}
