// Package compat holds the rules that decide whether a publisher and a
// subscription on one machine can meet, as tables with their sources: ROS 2's
// QoS compatibility (rmw_dds_common's qos_profile_check_compatible, the rule
// every DDS rmw applies), which rmw implementations talk to each other, and
// how each distro's discovery settings decide whether two processes on one
// host discover each other. It decides nothing about rates: see
// internal/diagnose for what is silent and why.
package compat

import (
	"fmt"
	"strings"
	"time"

	"ros2_pulse/internal/segment"
)

// Verdict is how one policy (or the middleware, or discovery) of a pair rates.
type Verdict int

const (
	OK      Verdict = iota
	Warning         // they meet, but something may not be as asked (rmw_dds_common's WARNING)
	Error           // they never meet
)

func (v Verdict) String() string { return [...]string{"ok", "warning", "error"}[v] }

// rmw enum values (rmw/types.h, the same from Humble to Kilted; BEST_AVAILABLE from Iron).
const (
	SystemDefault = 0
	Reliable      = 1
	BestEffort    = 2
	UnknownRel    = 3
	BestAvailRel  = 4

	TransientLocal = 1
	Volatile       = 2
	UnknownDur     = 3
	BestAvailDur   = 4

	Automatic     = 1
	ManualByNode  = 2 // deprecated, kept for its number
	ManualByTopic = 3
	UnknownLiv    = 4
	BestAvailLiv  = 5

	KeepLast = 1
	KeepAll  = 2
)

var (
	reliabilityNames = map[uint8]string{SystemDefault: "system_default", Reliable: "reliable", BestEffort: "best_effort", UnknownRel: "unknown", BestAvailRel: "best_available"}
	durabilityNames  = map[uint8]string{SystemDefault: "system_default", TransientLocal: "transient_local", Volatile: "volatile", UnknownDur: "unknown", BestAvailDur: "best_available"}
	livelinessNames  = map[uint8]string{SystemDefault: "system_default", Automatic: "automatic", ManualByNode: "manual_by_node", ManualByTopic: "manual_by_topic", UnknownLiv: "unknown", BestAvailLiv: "best_available"}
	historyNames     = map[uint8]string{SystemDefault: "system_default", KeepLast: "keep_last", KeepAll: "keep_all", 3: "unknown"}
)

func name(m map[uint8]string, v uint8) string {
	if n, ok := m[v]; ok {
		return n
	}
	return fmt.Sprintf("invalid(%d)", v)
}

// Reliability, Durability, Liveliness and History name an rmw enum value as ros2 topic info does.
func Reliability(v uint8) string { return name(reliabilityNames, v) }
func Durability(v uint8) string  { return name(durabilityNames, v) }
func Liveliness(v uint8) string  { return name(livelinessNames, v) }
func History(v uint8) string     { return name(historyNames, v) }

// Duration names a QoS duration: 0 (unspecified) and infinite both mean none.
func Duration(ns uint64) string {
	if ns == 0 || ns == segment.DurationInfinite || ns >= 1<<63-1 {
		return "infinite"
	}
	return time.Duration(ns).String()
}

// bounded reports whether a QoS duration asks for anything (neither
// unspecified nor infinite: DDS reads both as no deadline, no lease).
func bounded(ns uint64) bool { return ns != 0 && ns < 1<<63-1 }

// Summary is one endpoint's QoS in one short line ("reliable volatile keep_last(10)").
func Summary(q *segment.QoS) string {
	if q == nil || !q.Actual {
		return "QoS unknown"
	}
	s := Reliability(q.Reliability) + " " + Durability(q.Durability) + " " + History(q.History)
	if q.History == KeepLast {
		s += fmt.Sprintf("(%d)", q.Depth)
	}
	if bounded(q.DeadlineNs) {
		s += " deadline " + Duration(q.DeadlineNs)
	}
	if q.Liveliness != Automatic {
		s += " " + Liveliness(q.Liveliness)
	}
	if bounded(q.LeaseNs) {
		s += " lease " + Duration(q.LeaseNs)
	}
	if bounded(q.LifespanNs) {
		s += " lifespan " + Duration(q.LifespanNs)
	}
	return s
}

// Finding is how one policy of a publisher/subscription pair rates.
type Finding struct {
	Policy   string // reliability, durability, deadline, liveliness, lease
	Verdict  Verdict
	Pub, Sub string // both sides' values, as named above
}

func (f Finding) String() string {
	return fmt.Sprintf("%s: publisher %s, subscription %s", f.Policy, f.Pub, f.Sub)
}

// Fix is the one line that makes an incompatible policy compatible.
func (f Finding) Fix() string {
	switch f.Policy {
	case "reliability":
		return "make the subscription best_effort (or the publisher reliable)"
	case "durability":
		return "make the subscription volatile (or the publisher transient_local)"
	case "deadline":
		return "give the publisher a deadline no longer than the subscription's (or drop the subscription's)"
	case "liveliness":
		return "make the subscription's liveliness automatic (or the publisher's manual_by_topic)"
	case "lease":
		return "give the publisher a lease duration no longer than the subscription's (or drop the subscription's)"
	}
	return ""
}

// policyRow is one row of a request/offered table: the publisher offers,
// the subscription requests.
type policyRow struct {
	pub, sub uint8
	verdict  Verdict
}

// The rows of rmw_dds_common/src/qos.cpp, qos_profile_check_compatible
// (rmw_dds_common 1.6 on Humble; the same rules on Jazzy and Kilted), which
// rmw_fastrtps, rmw_cyclonedds and rmw_connextdds call for
// rmw_qos_profile_check_compatible. Errors first; warnings only where no
// policy is an error ("system default" and "unknown" cannot be judged).
// Any pair not listed is OK.
var reliabilityTable = []policyRow{
	{BestEffort, Reliable, Error}, // "Best effort publisher and reliable subscription"
	// WARNING rows: both unknown; publisher unknown and subscription reliable; publisher best effort and subscription unknown
	{SystemDefault, SystemDefault, Warning}, {SystemDefault, UnknownRel, Warning}, {UnknownRel, SystemDefault, Warning}, {UnknownRel, UnknownRel, Warning},
	{SystemDefault, Reliable, Warning}, {UnknownRel, Reliable, Warning},
	{BestEffort, SystemDefault, Warning}, {BestEffort, UnknownRel, Warning},
}

var durabilityTable = []policyRow{
	{Volatile, TransientLocal, Error}, // "Volatile publisher and transient local subscription"
	{SystemDefault, SystemDefault, Warning}, {SystemDefault, UnknownDur, Warning}, {UnknownDur, SystemDefault, Warning}, {UnknownDur, UnknownDur, Warning},
	{SystemDefault, TransientLocal, Warning}, {UnknownDur, TransientLocal, Warning},
	{Volatile, SystemDefault, Warning}, {Volatile, UnknownDur, Warning},
}

var livelinessTable = []policyRow{
	{Automatic, ManualByTopic, Error}, // "Publisher's liveliness is automatic and subscription's is manual by topic"
	{SystemDefault, SystemDefault, Warning}, {SystemDefault, UnknownLiv, Warning}, {UnknownLiv, SystemDefault, Warning}, {UnknownLiv, UnknownLiv, Warning},
	{SystemDefault, ManualByTopic, Warning}, {UnknownLiv, ManualByTopic, Warning},
	{Automatic, SystemDefault, Warning}, {Automatic, UnknownLiv, Warning},
}

func lookup(table []policyRow, pub, sub uint8) Verdict {
	for _, r := range table {
		if r.pub == pub && r.sub == sub {
			return r.verdict
		}
	}
	return OK
}

// durationVerdict is the deadline and lease rule of the same source: a
// subscription that requests a bound needs a publisher that offers one no
// longer ("Subscription has a deadline, but publisher does not";
// "Subscription deadline is less than publisher deadline").
func durationVerdict(pub, sub uint64) Verdict {
	if !bounded(sub) {
		return OK
	}
	if !bounded(pub) || sub < pub {
		return Error
	}
	return OK
}

// CheckQoS rates every policy of a publisher/subscription pair, errors and
// then warnings, as rmw_dds_common does (warnings only when nothing is an
// error). Both QoS must be Actual.
func CheckQoS(pub, sub *segment.QoS) []Finding {
	all := []Finding{
		{"reliability", lookup(reliabilityTable, pub.Reliability, sub.Reliability), Reliability(pub.Reliability), Reliability(sub.Reliability)},
		{"durability", lookup(durabilityTable, pub.Durability, sub.Durability), Durability(pub.Durability), Durability(sub.Durability)},
		{"deadline", durationVerdict(pub.DeadlineNs, sub.DeadlineNs), Duration(pub.DeadlineNs), Duration(sub.DeadlineNs)},
		{"liveliness", lookup(livelinessTable, pub.Liveliness, sub.Liveliness), Liveliness(pub.Liveliness), Liveliness(sub.Liveliness)},
		{"lease", durationVerdict(pub.LeaseNs, sub.LeaseNs), Duration(pub.LeaseNs), Duration(sub.LeaseNs)},
	}
	var errs, warns []Finding
	for _, f := range all {
		switch f.Verdict {
		case Error:
			errs = append(errs, f)
		case Warning:
			warns = append(warns, f)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return warns
}

// Family is the wire protocol an rmw implementation speaks.
type Family string

const (
	DDS     Family = "dds"   // DDSI-RTPS: Fast DDS, Cyclone DDS, Connext, GurumDDS
	Zenoh   Family = "zenoh" // rmw_zenoh_cpp: its own protocol, through a router
	Unknown Family = ""
)

// rmwFamilies: the implementations REP-2000 lists for Humble, Jazzy and
// Kilted, by protocol (docs.ros.org, Concepts/Intermediate/About-Different-
// Middleware-Vendors and Installation/RMW-Implementations).
var rmwFamilies = map[string]Family{
	"rmw_fastrtps_cpp":         DDS,
	"rmw_fastrtps_dynamic_cpp": DDS,
	"rmw_cyclonedds_cpp":       DDS,
	"rmw_connextdds":           DDS,
	"rmw_connextddsmicro":      DDS,
	"rmw_gurumdds_cpp":         DDS,
	"rmw_zenoh_cpp":            Zenoh,
}

// vendor is the DDS implementation under an rmw (both Fast DDS rmws share one).
var vendor = map[string]string{
	"rmw_fastrtps_cpp": "fastdds", "rmw_fastrtps_dynamic_cpp": "fastdds", "rmw_cyclonedds_cpp": "cyclonedds",
	"rmw_connextdds": "connext", "rmw_connextddsmicro": "connext", "rmw_gurumdds_cpp": "gurumdds",
}

// FamilyOf is the protocol of an rmw implementation identifier.
func FamilyOf(rmw string) Family { return rmwFamilies[rmw] }

// RMWsMeet rates two rmw implementations: the same vendor meets; two DDS
// vendors meet over RTPS, with a warning (the ROS 2 documentation does not
// guarantee cross-vendor communication for every feature: Working-with-
// multiple-RMW-implementations); Zenoh and DDS never meet. Unknown
// implementations are not judged (OK).
func RMWsMeet(a, b string) Verdict {
	fa, fb := FamilyOf(a), FamilyOf(b)
	switch {
	case a == "" || b == "" || fa == Unknown || fb == Unknown:
		return OK
	case fa != fb:
		return Error
	case fa == DDS && vendor[a] != vendor[b]:
		return Warning
	}
	return OK
}

// Range is a process's automatic discovery range (Iron+), or Humble's
// localhost-only switch read as one.
type Range string

const (
	RangeSubnet    Range = "SUBNET"
	RangeLocalhost Range = "LOCALHOST"
	RangeOff       Range = "OFF"
	RangeDefault   Range = "SYSTEM_DEFAULT"
)

// RangeOf reads a process's discovery settings as its distro's rcl does:
// Humble has only ROS_LOCALHOST_ONLY ("1": localhost); from Iron on
// ROS_AUTOMATIC_DISCOVERY_RANGE decides (rcl_get_automatic_discovery_range:
// unset or empty is SUBNET), except that a deprecated ROS_LOCALHOST_ONLY=1
// is still honoured and overrides it (rcl warns "'localhost_only' is
// enabled, 'automatic_discovery_range' and 'static_peers' will be
// ignored"). A value rcl refuses is "".
func RangeOf(distro segment.Distro, env *segment.Env) Range {
	if env == nil {
		return ""
	}
	if env.Set(segment.EnvLocalhostOnly) && env.LocalhostOnly == "1" {
		return RangeLocalhost
	}
	if distro == segment.DistroHumble || !env.Set(segment.EnvDiscoveryRange) || env.DiscoveryRange == "" {
		return RangeSubnet
	}
	switch r := Range(strings.ToUpper(env.DiscoveryRange)); r {
	case RangeSubnet, RangeLocalhost, RangeOff, RangeDefault:
		return r
	}
	return ""
}

// sameHostTable: two processes on one host, by their ranges (docs.ros.org,
// Tutorials/Advanced/Improved-Dynamic-Discovery, "Same host": any OFF
// discovers nobody, static peers or not; LOCALHOST and SUBNET meet each
// other). SYSTEM_DEFAULT leaves the middleware's own setting: judged as
// SUBNET. Humble has no table: ROS_LOCALHOST_ONLY against a process
// without it may or may not meet depending on the rmw (Fast DDS's
// localhost-only transport against another participant's interfaces), so
// that pair is a warning.
var sameHostTable = map[[2]Range]Verdict{
	{RangeOff, RangeOff}: Error, {RangeOff, RangeLocalhost}: Error, {RangeOff, RangeSubnet}: Error,
	{RangeLocalhost, RangeOff}: Error, {RangeSubnet, RangeOff}: Error,
}

// DiscoveryMeets rates whether two processes on this host discover each
// other. Unknown settings are not judged.
func DiscoveryMeets(distro segment.Distro, a, b Range) Verdict {
	if a == "" || b == "" {
		return OK
	}
	norm := func(r Range) Range {
		if r == RangeDefault {
			return RangeSubnet
		}
		return r
	}
	a, b = norm(a), norm(b)
	if distro == segment.DistroHumble {
		if a != b {
			return Warning
		}
		return OK
	}
	return sameHostTable[[2]Range{a, b}]
}
