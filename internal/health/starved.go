package health

import (
	"fmt"
	"slices"
	"strings"

	"ros2_pulse/internal/diagnose"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// StarvedBecause says a starved subscription with the cause StarvedCause
// found, and its fix, in the words every view uses.
func StarvedBecause(pubHz float64, u *window.Unmatched) string {
	s := fmt.Sprintf("receives nothing of %.1f Hz published here; the likely cause: %s", pubHz, u.Why())
	if u.Fix != "" {
		s += "; fix: " + u.Fix
	}
	return s
}

// CauseAndFix is a receive verdict's cause with its fix, where known:
// "cross_vendor (publisher on …, subscription on …); fix: …".
func (w *Warning) CauseAndFix() string {
	if w.Fix == "" {
		return w.Cause
	}
	return w.Cause + "; fix: " + w.Fix
}

// StarvedCause says why a starving subscription of topic (node, pid) hears
// nothing: one that receives nothing, or has stopped receiving, while this
// machine's publishers of its topic publish. It reads the window's
// diagnosis (w.Unmatched) and the topic's live publishers in w; see
// starvedCause. false: the cause is not visible.
func StarvedCause(w *window.Window, topic, node string, pid int) (window.Unmatched, bool) {
	var pubs []string
	for i := range w.Topics {
		if t := &w.Topics[i]; t.Name == topic {
			for _, p := range t.Pubs {
				if p.Alive {
					pubs = append(pubs, peerName(p.Node, p.Pid))
				}
			}
			break
		}
	}
	return starvedCause(w.Unmatched, pubs, topic, node, pid)
}

// StarvedCauseIn is StarvedCause for a reader of scans (pulse doctor, pulse
// export): unmatched is diagnose.Unmatched(scan), the publishers are the
// scan's live ones.
func StarvedCauseIn(scan *segment.Scan, unmatched []window.Unmatched, topic, node string, pid int) (window.Unmatched, bool) {
	var pubs []string
	for _, s := range scan.Snapshots {
		for i := range s.Endpoints {
			if e := &s.Endpoints[i]; s.Alive && e.Kind == segment.KindPublisher && !e.Retired() && e.Name == topic {
				pubs = append(pubs, peerName(window.NodeOf(s, e), s.Pid))
			}
		}
	}
	return starvedCause(unmatched, pubs, topic, node, pid)
}

// peerName names an endpoint as a diagnosis names its peers ("node pid").
func peerName(node string, pid int) string {
	if node == "" {
		node = "-"
	}
	return fmt.Sprintf("%s %d", node, pid)
}

// starvedCause is the subscription's finding that rules out every publisher
// (a QoS, type, domain, rmw, discovery or name mismatch), with its fix.
// Else, when its cross_vendor warning names every live publisher of the
// topic here (pubs), none of them shares its DDS vendor: ROS 2 does not
// guarantee that different vendors' RMWs communicate, so that is the likely
// cause, with the fix to run both sides on one RMW. With a publisher here on
// its own vendor's RMW (or on one not known), nothing is said: the cause is
// not visible.
func starvedCause(unmatched []window.Unmatched, pubs []string, topic, node string, pid int) (window.Unmatched, bool) {
	var cross *window.Unmatched
	for i := range unmatched {
		u := &unmatched[i]
		if u.Pub || u.Topic != topic || u.Pid != pid || u.Node != node {
			continue
		}
		if u.Error {
			return *u, true
		}
		if u.Reason == string(diagnose.CrossVendor) {
			cross = u
		}
	}
	if cross == nil || len(pubs) == 0 {
		return window.Unmatched{}, false
	}
	for _, p := range pubs {
		if !slices.Contains(cross.Peers, p) {
			return window.Unmatched{}, false
		}
	}
	u := *cross
	u.Fix = diagnose.StarvedCrossVendorFix
	return u, true
}

// Quiet is a subscription that had received messages and has received none
// since (QuietSince), with its likely cause.
type Quiet struct {
	Topic, Node string
	Pid         int
	Received    uint64 // what it had received by the earlier scan
	Cause       window.Unmatched
}

// QuietSince lists the live subscriptions of later that had received
// messages by earlier and none since, and whose cause StarvedCauseIn finds
// in later (unmatched is diagnose.Unmatched(later)); one without a visible
// cause is left out: a quiet spell alone is no verdict. Whether their
// topics were published meanwhile is the caller's to judge. With earlier
// and later the same scan, it lists the candidates: every subscription that
// has received, whose cause is visible.
func QuietSince(earlier, later *segment.Scan, unmatched []window.Unmatched) []Quiet {
	type id struct {
		key        string
		index, gen int
	}
	had := map[id]uint64{}
	for _, s := range earlier.Snapshots {
		for i := range s.Endpoints {
			if e := &s.Endpoints[i]; s.Alive && e.Kind == segment.KindSubscription && !e.Retired() {
				had[id{s.Key(), e.Index, int(e.Generation)}] = e.Counts[segment.SlotInter] + e.Counts[segment.SlotIntra]
			}
		}
	}
	var out []Quiet
	for _, s := range later.Snapshots {
		for i := range s.Endpoints {
			e := &s.Endpoints[i]
			if !s.Alive || e.Kind != segment.KindSubscription || e.Retired() || window.IsBuiltin(e.Name) {
				continue
			}
			n, ok := had[id{s.Key(), e.Index, int(e.Generation)}]
			if !ok || n == 0 || e.Counts[segment.SlotInter]+e.Counts[segment.SlotIntra] != n {
				continue
			}
			node := window.NodeOf(s, e)
			if u, ok := StarvedCauseIn(later, unmatched, e.Name, node, s.Pid); ok {
				out = append(out, Quiet{Topic: e.Name, Node: node, Pid: s.Pid, Received: n, Cause: u})
			}
		}
	}
	slices.SortFunc(out, func(a, b Quiet) int {
		if a.Topic != b.Topic {
			return strings.Compare(a.Topic, b.Topic)
		}
		return a.Pid - b.Pid
	})
	return out
}

// Words says a subscription that stopped receiving, with its likely cause
// and the fix, in the words of StarvedBecause.
func (q *Quiet) Words(pubHz float64) string {
	s := fmt.Sprintf("received %d, then nothing of %.1f Hz published here; the likely cause: %s", q.Received, pubHz, q.Cause.Why())
	if q.Cause.Fix != "" {
		s += "; fix: " + q.Cause.Fix
	}
	return s
}
