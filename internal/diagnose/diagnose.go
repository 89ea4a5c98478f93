// Package diagnose says why a subscription hears nothing, or why nobody hears
// a publisher, for every probed process on the machine at once: it pairs
// each subscription with the publishers of its topic (and of near names) and
// applies internal/compat's rules to what the probe learnt at creation
// (domain, rmw, discovery settings, message type, actual QoS). It reads one
// scan: nothing here depends on rates, so it works on the first scan.
package diagnose

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"ros2_pulse/internal/compat"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// Reason is why a pair does not meet, or what may go wrong where it does.
type Reason string

const (
	OtherDomain     Reason = "other_domain"     // the two sides are on different ROS_DOMAIN_IDs
	OtherRMW        Reason = "other_rmw"        // middlewares that do not speak to each other (Zenoh and DDS)
	DiscoveryRange  Reason = "discovery_range"  // a side's discovery range lets it discover nobody (OFF)
	TypeMismatch    Reason = "type_mismatch"    // same topic, different message types
	QoSIncompatible Reason = "qos_incompatible" // a requested QoS the publisher does not offer
	QoSUnknown      Reason = "qos_unknown"      // nothing rules the pair out, but a side's QoS could not be read
	NoPublisher     Reason = "no_publisher"     // nothing on this machine publishes the topic (near names given)
	NoSubscriber    Reason = "no_subscriber"    // nothing subscribes the topic, but near names do
	NotProbed       Reason = "not_probed"       // nothing probed publishes the topic, and ROS processes here are not probed

	// Warnings: the pair meets, but not quite as asked.
	QoSWarning         Reason = "qos_warning"         // rmw_dds_common's "compatible with a warning"
	CrossVendor        Reason = "cross_vendor"        // two DDS vendors: RTPS, communication not guaranteed (a starving subscription's likely cause when every publisher is on another vendor)
	DiscoveryUncertain Reason = "discovery_uncertain" // Humble, localhost-only on one side only: rmw-dependent
	ShallowQueue       Reason = "shallow_queue"       // a depth-1 subscription to a publisher that sends bursts
)

// order: the reason that explains most is named first.
var order = map[Reason]int{OtherDomain: 0, OtherRMW: 1, DiscoveryRange: 2, TypeMismatch: 3, QoSIncompatible: 4, QoSUnknown: 5}

// Endpoint is one live publisher or subscription with what the probe learnt of it.
type Endpoint struct {
	Pid      int
	Node     string
	Topic    string
	Pub      bool
	QoS      *segment.QoS // nil: nothing learnt (its creation was not wrapped)
	Domain   int          // -1: unknown
	RMW      string       // "": unknown
	Range    compat.Range // "": unknown
	Received uint64       // a subscription's messages since it was created
	Bursts   uint64       // a publisher's gaps under 1 ms since it was created (gap tracking on), 0 otherwise
	distro   segment.Distro
}

// Type is the endpoint's message type, "" when unknown.
func (e *Endpoint) Type() string {
	if e.QoS == nil {
		return ""
	}
	return e.QoS.Type
}

func (e *Endpoint) String() string { return fmt.Sprintf("%s (pid %d)", orDash(e.Node), e.Pid) }

// Peer is the other side of a finding, with what rules it out.
type Peer struct {
	Node   string
	Pid    int
	Topic  string
	Reason Reason
	Detail string
}

// Finding is one endpoint's diagnosis.
type Finding struct {
	Endpoint
	Reason Reason
	Error  bool   // it meets nobody (else a warning: it meets, not quite as asked)
	Detail string // the policy and both sides' values, the two domains, ...
	Fix    string // one line
	Peers  []Peer // the publishers (or subscriptions) concerned
	Near   []string
	Silent bool // a subscription that received nothing since it was created
}

// Line is the finding in one line, for doctor, top and check.
func (f *Finding) Line() string {
	var b strings.Builder
	if f.Pub {
		fmt.Fprintf(&b, "%s publishes %s", f.Endpoint.String(), f.Topic)
	} else {
		fmt.Fprintf(&b, "%s on %s", f.Endpoint.String(), f.Topic)
	}
	fmt.Fprintf(&b, ": %s", f.Reason)
	if f.Detail != "" {
		fmt.Fprintf(&b, " (%s)", f.Detail)
	}
	if f.Fix != "" {
		fmt.Fprintf(&b, "; fix: %s", f.Fix)
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Endpoints lists the live publishers and subscriptions of a scan.
func Endpoints(scan *segment.Scan) []Endpoint {
	var out []Endpoint
	for _, s := range scan.Snapshots {
		if !s.Alive {
			continue
		}
		envDomain, envRMW := -1, ""
		if s.Env != nil {
			envDomain = 0 // rcl's default when ROS_DOMAIN_ID is unset or empty
			if s.Env.Set(segment.EnvDomainID) && s.Env.DomainID != "" {
				if v, err := strconv.Atoi(strings.TrimSpace(s.Env.DomainID)); err == nil && v >= 0 {
					envDomain = v
				} else {
					envDomain = -1
				}
			}
			envRMW = s.Env.RMW
		}
		rng := compat.RangeOf(s.Distro, s.Env)
		for i := range s.Endpoints {
			e := &s.Endpoints[i]
			if e.Retired() || (e.Kind != segment.KindPublisher && e.Kind != segment.KindSubscription) || window.IsBuiltin(e.Name) {
				continue // /rosout and /parameter_events: every node's, meant for its own domain and tools
			}
			ep := Endpoint{Pid: s.Pid, Node: window.NodeOf(s, e), Topic: e.Name, Pub: e.Kind == segment.KindPublisher,
				QoS: e.QoS, Domain: envDomain, RMW: envRMW, Range: rng, distro: s.Distro}
			if e.QoS != nil {
				if e.QoS.Domain >= 0 {
					ep.Domain = e.QoS.Domain
				}
				if e.QoS.RMW != "" {
					ep.RMW = e.QoS.RMW
				}
			}
			if ep.Pub {
				ep.Bursts = bursts(e.Gap)
			} else {
				ep.Received = e.Counts[segment.SlotInter] + e.Counts[segment.SlotIntra]
			}
			out = append(out, ep)
		}
	}
	return out
}

// pair rates one publisher against one subscription: the error that rules
// the pair out (most explaining first), else the warnings.
func pair(p, s *Endpoint) (err *Peer, warns []Peer) {
	peer := func(r Reason, detail string) Peer { // named by the publisher: the subscription's finding lists them
		return Peer{Node: p.Node, Pid: p.Pid, Topic: p.Topic, Reason: r, Detail: detail}
	}
	if p.Domain >= 0 && s.Domain >= 0 && p.Domain != s.Domain {
		e := peer(OtherDomain, fmt.Sprintf("publisher on domain %d, subscription on domain %d", p.Domain, s.Domain))
		return &e, nil
	}
	switch compat.RMWsMeet(p.RMW, s.RMW) {
	case compat.Error:
		e := peer(OtherRMW, fmt.Sprintf("publisher on %s, subscription on %s", p.RMW, s.RMW))
		return &e, nil
	case compat.Warning:
		warns = append(warns, peer(CrossVendor, fmt.Sprintf("publisher on %s, subscription on %s", p.RMW, s.RMW)))
	}
	if p.Pid != s.Pid {
		distro := s.distro
		if p.distro > distro {
			distro = p.distro
		}
		switch compat.DiscoveryMeets(distro, p.Range, s.Range) {
		case compat.Error:
			e := peer(DiscoveryRange, fmt.Sprintf("publisher's discovery range %s, subscription's %s", p.Range, s.Range))
			return &e, nil
		case compat.Warning:
			warns = append(warns, peer(DiscoveryUncertain, fmt.Sprintf("publisher %s, subscription %s", localhost(p.Range), localhost(s.Range))))
		}
	}
	if pt, st := p.Type(), s.Type(); pt != "" && st != "" && pt != st {
		e := peer(TypeMismatch, fmt.Sprintf("publisher %s, subscription %s", pt, st))
		return &e, nil
	}
	if p.QoS == nil || !p.QoS.Actual || s.QoS == nil || !s.QoS.Actual {
		e := peer(QoSUnknown, "")
		return &e, warns // not an error that rules it out: said only where nothing meets
	}
	for _, f := range compat.CheckQoS(p.QoS, s.QoS) {
		if f.Verdict == compat.Error {
			e := peer(QoSIncompatible, f.String())
			return &e, nil
		}
		warns = append(warns, peer(QoSWarning, f.String()))
	}
	return nil, warns
}

func localhost(r compat.Range) string {
	if r == compat.RangeLocalhost {
		return "ROS_LOCALHOST_ONLY=1"
	}
	return "not localhost-only"
}

// fixes is the one line for each reason that is not a QoS policy.
var fixes = map[Reason]string{
	OtherDomain:        "run both with the same ROS_DOMAIN_ID",
	OtherRMW:           "run both with the same RMW_IMPLEMENTATION (Zenoh and DDS do not talk)",
	DiscoveryRange:     "set ROS_AUTOMATIC_DISCOVERY_RANGE to LOCALHOST or SUBNET on both (OFF discovers nobody)",
	TypeMismatch:       "use one message type on both sides",
	QoSUnknown:         "check both sides' QoS with `ros2 topic info -v`",
	CrossVendor:        "if messages go missing, run both sides with one RMW_IMPLEMENTATION (ROS 2 does not guarantee communication between different DDS vendors)",
	DiscoveryUncertain: "set ROS_LOCALHOST_ONLY the same on both",
	QoSWarning:         "set the policy explicitly on both sides",
	ShallowQueue:       "give the subscription a depth of at least the burst (or keep_all)",
}

// StarvedCrossVendorFix is the fix for a subscription that hears nothing
// while its only publishers here run another DDS vendor's RMW (a
// cross_vendor pair that fails: internal/health judges it). ROS 2 does not
// guarantee that different vendors' RMWs communicate (docs.ros.org,
// Concepts/Intermediate/About-Different-Middleware-Vendors, "Cross-Vendor
// Communication"): Cyclone DDS from Fast DDS on Humble has received a few
// messages and then nothing.
const StarvedCrossVendorFix = "run both sides with one RMW_IMPLEMENTATION (ROS 2 does not guarantee communication between different DDS vendors)"

// burstBuckets is how many gap buckets lie wholly under 1 ms (see rp_gap in
// segment.h: 16 linear buckets of 1,024 ns, then 16 per octave).
var burstBuckets = func() int {
	low := func(b int) uint64 { // lower bound of bucket b, ns
		if b < 16 {
			return uint64(b) << 10
		}
		e, sub := b/16+3, b%16
		return uint64(16+sub) << (e - 4) << 10
	}
	n := 0
	for low(n+1) <= 1_000_000 {
		n++
	}
	return n
}()

// bursts counts a publisher's gaps under 1 ms: messages sent back to back.
func bursts(g *segment.Gap) uint64 {
	if g == nil {
		return 0
	}
	var n uint64
	for _, c := range g.Buckets[:burstBuckets] {
		n += uint64(c)
	}
	return n
}

// Diagnose returns the findings of a scan: every subscription that meets no
// publisher of its topic though one exists here, every silent one with no
// publisher but near names, every publisher that no subscription of its
// topic (or of a near name) meets, and the pairs that meet with a warning.
// Sorted by topic, then node.
func Diagnose(scan *segment.Scan) []Finding {
	var pubNear, subNear nearCache // one search per topic, not per endpoint
	return diagnose(scan, &pubNear, &subNear)
}

// diagnose is Diagnose with the caches of near publisher and subscription
// names it keeps across scans.
func diagnose(scan *segment.Scan, pubNear, subNear *nearCache) []Finding {
	eps := Endpoints(scan)
	pubs, subs := map[string][]*Endpoint{}, map[string][]*Endpoint{}
	for i := range eps {
		e := &eps[i]
		if e.Pub {
			pubs[e.Topic] = append(pubs[e.Topic], e)
		} else {
			subs[e.Topic] = append(subs[e.Topic], e)
		}
	}
	var out []Finding
	pubMatched := map[*Endpoint]bool{}
	pubErrs := map[*Endpoint][]Peer{}
	pubNear.use(keys(pubs)) // the candidates of near names
	subNear.use(keys(subs))
	for topic, ss := range subs {
		ps := pubs[topic]
		if len(ps) == 0 {
			for _, s := range ss {
				if s.Received == 0 {
					if near := pubNear.of(topic); len(near) > 0 {
						out = append(out, Finding{Endpoint: *s, Reason: NoPublisher, Error: true, Near: near, Silent: true,
							Detail: "published here: " + strings.Join(near, ", "),
							Fix:    "remap one side (" + topic + " vs " + near[0] + ") or fix its namespace"})
					}
				}
			}
			continue
		}
		// Endpoints alike in everything a pairing reads are judged once, by group.
		pgs, sgs := groupsOf(ps), groupsOf(ss)
		for _, sg := range sgs {
			var errs []Peer
			var met []*Endpoint // the publishers the group meets
			matched := false
			var warnOrder []Reason
			warnPeers := map[Reason][]Peer{} // a warning's publishers, by reason
			for _, pg := range pgs {
				e, warns := pair(pg[0], sg[0])
				if e == nil {
					matched = true
				}
				for _, p := range pg {
					pubMatched[p] = pubMatched[p] || e == nil
					if e == nil {
						met = append(met, p)
					}
					if e != nil {
						errs = append(errs, Peer{Node: p.Node, Pid: p.Pid, Topic: p.Topic, Reason: e.Reason, Detail: e.Detail})
						for _, s := range sg {
							pubErrs[p] = append(pubErrs[p], Peer{Node: s.Node, Pid: s.Pid, Topic: s.Topic, Reason: e.Reason, Detail: e.Detail})
						}
						continue
					}
					for _, w := range warns {
						if _, ok := warnPeers[w.Reason]; !ok {
							warnOrder = append(warnOrder, w.Reason)
						}
						warnPeers[w.Reason] = append(warnPeers[w.Reason], Peer{Node: p.Node, Pid: p.Pid, Topic: p.Topic, Reason: w.Reason, Detail: w.Detail})
					}
				}
			}
			for _, s := range sg {
				if q := s.QoS; q != nil && q.Actual && q.History == compat.KeepLast && q.Depth == 1 {
					for _, p := range met {
						if p.Bursts > 0 { // its queue holds one: a burst loses all but the last
							out = append(out, Finding{Endpoint: *s, Reason: ShallowQueue, Fix: fixes[ShallowQueue], Silent: s.Received == 0,
								Detail: fmt.Sprintf("depth 1 against bursts: %d of the publisher's gaps under 1 ms", p.Bursts),
								Peers:  []Peer{{Node: p.Node, Pid: p.Pid, Topic: p.Topic, Reason: ShallowQueue}}})
							break
						}
					}
				}
				for _, r := range warnOrder {
					peers := warnPeers[r]
					out = append(out, Finding{Endpoint: *s, Reason: r, Detail: peers[0].Detail, Fix: fixes[r], Peers: peers, Silent: s.Received == 0})
				}
				if matched {
					continue
				}
				sorted := append([]Peer(nil), errs...)
				sort.SliceStable(sorted, func(i, j int) bool { return order[sorted[i].Reason] < order[sorted[j].Reason] })
				first := sorted[0]
				if first.Reason == QoSUnknown && s.Received > 0 {
					continue // it hears someone: an unknown QoS is no finding
				}
				out = append(out, Finding{Endpoint: *s, Reason: first.Reason, Error: first.Reason != QoSUnknown, Detail: first.Detail,
					Fix: fixOf(first), Peers: sorted, Silent: s.Received == 0})
			}
		}
	}
	for topic, ps := range pubs {
		for _, p := range ps {
			if pubMatched[p] {
				continue
			}
			if errs := pubErrs[p]; len(errs) > 0 {
				sort.SliceStable(errs, func(i, j int) bool { return order[errs[i].Reason] < order[errs[j].Reason] })
				if errs[0].Reason == QoSUnknown {
					continue
				}
				out = append(out, Finding{Endpoint: *p, Reason: errs[0].Reason, Error: true, Detail: errs[0].Detail, Peers: errs,
					Fix: fixOf(errs[0])})
				continue
			}
			if len(subs[topic]) == 0 {
				if near := subNear.of(topic); len(near) > 0 {
					out = append(out, Finding{Endpoint: *p, Reason: NoSubscriber, Near: near,
						Detail: "subscribed here: " + strings.Join(near, ", "),
						Fix:    "remap one side (" + topic + " vs " + near[0] + ") or fix its namespace"})
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Pub != b.Pub {
			return !a.Pub
		}
		if a.Node != b.Node {
			return a.Node < b.Node
		}
		if a.Pid != b.Pid {
			return a.Pid < b.Pid
		}
		return a.Reason < b.Reason
	})
	return out
}

// fixOf is the one line for what rules a pair out.
func fixOf(p Peer) string {
	if p.Reason == QoSIncompatible {
		policy, _, _ := strings.Cut(p.Detail, ":")
		return compat.Finding{Policy: policy}.Fix()
	}
	return fixes[p.Reason]
}

// pairKey is everything pair reads of an endpoint but its name: endpoints
// with equal keys pair alike. The pid is part of it only for a process whose
// discovery is OFF, the one case where being the same process matters.
type pairKey struct {
	domain          int
	rmw, typ        string
	rng             compat.Range
	distro          segment.Distro
	actual          bool
	rel, dur, liv   uint8
	deadline, lease uint64
	pid             int
}

func keyOf(e *Endpoint) pairKey {
	k := pairKey{domain: e.Domain, rmw: e.RMW, typ: e.Type(), rng: e.Range, distro: e.distro}
	if q := e.QoS; q != nil && q.Actual {
		k.actual, k.rel, k.dur, k.liv, k.deadline, k.lease = true, q.Reliability, q.Durability, q.Liveliness, q.DeadlineNs, q.LeaseNs
	}
	if e.Range == compat.RangeOff {
		k.pid = e.Pid
	}
	return k
}

// groupsOf splits endpoints into groups that pair alike, in first-seen order.
func groupsOf(eps []*Endpoint) [][]*Endpoint {
	idx := map[pairKey]int{}
	var out [][]*Endpoint
	for _, e := range eps {
		k := keyOf(e)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], e)
	}
	return out
}

func keys(m map[string][]*Endpoint) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Unmatched is Diagnose as the window's data (what a recorder puts in each
// window and a log carries).
func Unmatched(scan *segment.Scan) []window.Unmatched {
	return unmatchedOf(Diagnose(scan))
}

func unmatchedOf(fs []Finding) []window.Unmatched {
	if len(fs) == 0 {
		return nil
	}
	out := make([]window.Unmatched, len(fs))
	for i, f := range fs {
		u := window.Unmatched{Topic: f.Topic, Node: f.Node, Pid: f.Pid, Pub: f.Pub, Reason: string(f.Reason), Error: f.Error,
			Detail: f.Detail, Fix: f.Fix, Silent: f.Silent}
		for _, p := range f.Peers {
			u.Peers = append(u.Peers, fmt.Sprintf("%s %d", orDash(p.Node), p.Pid))
		}
		out[i] = u
	}
	return out
}

// Memo diagnoses a stream of scans, again only when something a diagnosis
// reads changed: a process came or went, an endpoint was created, retired or
// learnt, or a subscription received its first message. A robot's graph
// rarely changes, so a recorder's window costs one pass over the endpoints.
type Memo struct {
	fp               uint64
	done             bool
	out              []window.Unmatched
	pubNear, subNear nearCache // near names, kept while the names are the same
}

// Unmatched is Unmatched(scan), from the memo when nothing it reads changed.
func (m *Memo) Unmatched(scan *segment.Scan) []window.Unmatched {
	fp := fingerprint(scan)
	if !m.done || fp != m.fp {
		m.fp, m.done, m.out = fp, true, unmatchedOf(diagnose(scan, &m.pubNear, &m.subNear))
	}
	return m.out
}

// fingerprint hashes what Diagnose reads of a scan: FNV-1a, one word per
// endpoint (slot, generation, flags, learnt, silent) and two per process.
func fingerprint(scan *segment.Scan) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for _, s := range scan.Snapshots {
		alive := uint64(0)
		if s.Alive {
			alive = 1 << 63
		}
		h = (h ^ (uint64(s.Pid) | alive)) * prime
		h = (h ^ s.StartMono) * prime
		for i := range s.Endpoints {
			e := &s.Endpoints[i]
			x := uint64(e.Index)<<32 | uint64(e.Generation) ^ uint64(e.Flags)<<56
			if e.QoS != nil {
				x ^= 1 << 62 // learnt: its content never changes for a generation
			}
			if e.Kind == segment.KindPublisher && e.Gap != nil && e.QoS != nil && bursts(e.Gap) > 0 {
				x ^= 1 << 61 // it has sent a burst
			}
			if e.Kind == segment.KindSubscription && e.Counts[segment.SlotInter]+e.Counts[segment.SlotIntra] == 0 {
				x ^= 1 << 63 // silent
			}
			h = (h ^ x) * prime
		}
	}
	return h
}

// Unpublished names each silent subscription whose topic nothing on this
// machine publishes and no near name explains (Diagnose leaves those out: a
// publisher may be on another host, or not started yet). With ROS processes
// here that are not probed (named in notProbed), one of them may publish
// it: not_probed; otherwise no_publisher. Warnings, for pulse doctor.
func Unpublished(scan *segment.Scan, notProbed []string) []Finding {
	eps := Endpoints(scan)
	published := map[string]bool{}
	var pubNames []string
	for i := range eps {
		if eps[i].Pub && !published[eps[i].Topic] {
			published[eps[i].Topic] = true
			pubNames = append(pubNames, eps[i].Topic)
		}
	}
	var out []Finding
	for i := range eps {
		s := &eps[i]
		if s.Pub || s.Received != 0 || published[s.Topic] || len(Near(s.Topic, pubNames)) > 0 {
			continue
		}
		f := Finding{Endpoint: *s, Reason: NoPublisher, Silent: true, Detail: "nothing probed on this machine publishes it (a publisher on another host?)",
			Fix: "start its publisher, or check its name with `ros2 topic list`"}
		if len(notProbed) > 0 {
			f.Reason, f.Detail = NotProbed, fmt.Sprintf("nothing probed publishes it; not probed here: %s", strings.Join(notProbed, ", "))
			f.Fix = "preload the probe into those processes too (pulse env), and look again"
		}
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Pid < out[j].Pid
	})
	return out
}
