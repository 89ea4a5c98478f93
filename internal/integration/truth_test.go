package integration

import (
	"fmt"
	"maps"
	"sort"
	"testing"
	"time"

	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/simtruth"
	"ros2_pulse/internal/window"
)

// Judging pulse against what the graph did (issue 22, design note 0016):
// simgraph counts every message it publishes and delivers, every timer fire
// and every request, just after the tracepoint that the probe counts. So at
// any instant a probe count is the graph's count plus at most the one message
// its writer thread has between the two. That gives exact judgements, on an
// idle machine and on a loaded one alike:
//   - totals, once a process has returned: equal;
//   - a window: its count lies between what the graph did between the truth
//     read after the previous scan and the one before this scan, and what it
//     did between the truth read before the previous scan and the one after
//     this scan, each end widened by the one message in flight.

// inflight is the most messages one key can have between the tracepoint and
// the graph's own count: every simgraph entity has one writer thread.
const inflight = 1

// bracket is the graph's own counts read around one scan.
type bracket struct {
	prevBefore, prevAfter *simtruth.Snapshot // around the previous scan (nil: the baseline, before the graph counted)
	before, after         *simtruth.Snapshot // around this one
}

// truth reads the graph's own counts now.
func (g *graph) truth() *simtruth.Snapshot {
	g.t.Helper()
	s, err := simtruth.Read(g.truthDir)
	if err != nil {
		g.t.Fatal(err)
	}
	return s
}

// pair is one count the probe measures for a truth key: the truth's index
// and the probe's slot.
type pair struct {
	what       string
	truth, slt int
}

// measured lists the counts of a key the probe sees on distro; the rest are
// not measured there (an rclpy service fires no tracepoint; a Humble
// intra-process publish fires none) and are never judged as zero. Timers of
// either library are counted: rclcpp's at callback_start, rclpy's at
// rcl_timer_call (ABI 1.4).
func measured(kind, lang string, distro segment.Distro) []pair {
	switch kind {
	case "pub":
		if !window.IntraPublishVisible(distro) {
			return []pair{{"published inter", simtruth.PubInter, segment.SlotInter}}
		}
		return []pair{{"published inter", simtruth.PubInter, segment.SlotInter}, {"published intra", simtruth.PubIntra, segment.SlotIntra}}
	case "sub":
		return []pair{{"received inter", simtruth.SubInter, segment.SlotInter}, {"received intra", simtruth.SubIntra, segment.SlotIntra}}
	case "timer":
		return []pair{{"fired", simtruth.Fires, segment.SlotInter}}
	case "service":
		if lang == "py" {
			return nil
		}
		return []pair{{"fired", simtruth.Fires, segment.SlotInter}}
	}
	return nil // a client's calls have no endpoint in the probe
}

func kindName(k segment.Kind) string {
	switch k {
	case segment.KindPublisher:
		return "pub"
	case segment.KindSubscription:
		return "sub"
	case segment.KindTimer:
		return "timer"
	case segment.KindService:
		return "service"
	}
	return fmt.Sprint(k)
}

// probeCounts sums a scan by truth key, over every entity (every generation
// of a re-used slot) with that process, node, kind and name.
func probeCounts(s *segment.Scan) (map[simtruth.Key][4]uint64, map[int]segment.Distro) {
	out := map[simtruth.Key][4]uint64{}
	distro := map[int]segment.Distro{}
	for _, snap := range s.Snapshots {
		distro[snap.Pid] = snap.Distro
		for _, e := range snap.Endpoints {
			k := simtruth.Key{Pid: snap.Pid, Kind: kindName(e.Kind), Topic: e.Name}
			if e.Kind == segment.KindTimer {
				k.Topic = ""
			}
			k.Node = window.NodeOf(snap, &e)
			c := out[k]
			for i := range c {
				c[i] += e.Counts[i]
			}
			out[k] = c
		}
	}
	return out, distro
}

// judgeTotals compares the probe's totals in a final scan with the graph's
// own counts: equal for a process that returned; for one that did not (a
// SIGKILL, an exit storm) the probe may hold up to slack more, the messages
// its threads had between the tracepoint and the graph's count when it died.
func judgeTotals(s *segment.Scan, truth *simtruth.Snapshot, slack uint64) []string {
	probe, distro := probeCounts(s)
	truth = nodelessTimers(truth, probe)
	var bad []string
	judged := 0
	for _, k := range truth.Keys() {
		d, ok := distro[k.Pid]
		if !ok {
			bad = append(bad, fmt.Sprintf("%v: no segment for a process the graph ran", k))
			continue
		}
		proc, _ := truth.Proc(k.Pid)
		for _, p := range measured(k.Kind, truth.Lang[k], d) {
			want, got := truth.Counts[k][p.truth], probe[k][p.slt]
			judged++
			switch {
			case proc.Exited && got != want:
				bad = append(bad, fmt.Sprintf("%v %s: probe %d, the graph %d (the process returned: must be equal)", k, p.what, got, want))
			case !proc.Exited && (got < want || got > want+slack):
				bad = append(bad, fmt.Sprintf("%v %s: probe %d, the graph %d (the process died: the probe may hold %d more, the messages in flight)", k, p.what, got, want, slack))
			}
		}
	}
	// Nothing counted that the graph did not do (an rclpy node's parameter
	// services or its timers have no truth and must count nothing).
	for k, c := range probe {
		if _, ok := truth.Counts[k]; !ok && c != [4]uint64{} && k.Kind != "service" {
			bad = append(bad, fmt.Sprintf("%v: probe counted %v, the graph did nothing there", k, c))
		}
	}
	if judged == 0 {
		bad = append(bad, "no count judged: the graph reported nothing")
	}
	return bad
}

// nodelessTimers judges rclpy's timers as the probe can know them: rcl_timer_init
// takes no node and rclpy fires no rclcpp_timer_link_node, so the reader ties
// a timer to a node only in a process of one node (window.NodeOf). In a
// process of several (the robot's rclpy containers), the graph's rclpy
// timers are summed under the process's node-less timer key.
func nodelessTimers(truth *simtruth.Snapshot, probe map[simtruth.Key][4]uint64) *simtruth.Snapshot {
	out := *truth
	out.Counts, out.Lang = maps.Clone(truth.Counts), maps.Clone(truth.Lang)
	for k, c := range truth.Counts {
		nodeless := simtruth.Key{Pid: k.Pid, Kind: "timer"}
		if _, ok := probe[nodeless]; !ok || k.Kind != "timer" || k.Node == "" || truth.Lang[k] != "py" {
			continue
		}
		sum := out.Counts[nodeless]
		for i := range sum {
			sum[i] += c[i]
		}
		out.Counts[nodeless], out.Lang[nodeless] = sum, "py"
		delete(out.Counts, k)
		delete(out.Lang, k)
	}
	return &out
}

// windowCounts sums one window's endpoint deltas by truth key.
func windowCounts(w *window.Window) map[simtruth.Key][2]uint64 {
	out := map[simtruth.Key][2]uint64{}
	add := func(k simtruth.Key, inter, intra uint64) {
		c := out[k]
		out[k] = [2]uint64{c[0] + inter, c[1] + intra}
	}
	for _, tp := range w.Topics {
		for _, e := range tp.Pubs {
			add(simtruth.Key{Pid: e.Pid, Kind: "pub", Node: e.Node, Topic: tp.Name}, e.Delta[0], e.Delta[1])
		}
		for _, e := range tp.Subs {
			add(simtruth.Key{Pid: e.Pid, Kind: "sub", Node: e.Node, Topic: tp.Name}, e.Delta[0], e.Delta[1])
		}
	}
	for _, tm := range w.Timers {
		add(simtruth.Key{Pid: tm.Pid, Kind: "timer", Node: tm.Node}, tm.Delta, 0)
	}
	for _, sv := range w.Services {
		add(simtruth.Key{Pid: sv.Pid, Kind: "service", Node: sv.Node, Topic: sv.Name}, sv.Delta, 0)
	}
	return out
}

// judgeWindows compares every window's per-endpoint counts of the given
// topics (and services) with what the graph did around it (the bracket rule
// above); the topic "" stands for every node's rclcpp timers.
func judgeWindows(ws []*window.Window, brackets []bracket, distros map[int]segment.Distro, topics []string) []string {
	want := map[string]bool{}
	for _, t := range topics {
		want[t] = true
	}
	var bad []string
	zero := &simtruth.Snapshot{}
	for i, w := range ws {
		b := brackets[i]
		prevBefore := b.prevBefore
		if prevBefore == nil {
			prevBefore = zero
		}
		got := windowCounts(w)
		seen := map[string]bool{}
		for _, k := range b.after.Keys() {
			if k.Kind == "client" || !want[k.Topic] {
				continue
			}
			seen[k.Topic] = true
			if (k.Kind == "timer" || k.Kind == "service") && i == len(ws)-1 {
				continue // a window lists the timers and services of live processes only; the exit sliver's are in the totals
			}
			for _, p := range measured(k.Kind, b.after.Lang[k], distros[k.Pid]) {
				// the probe's slots are the window's Delta[0] (inter) and Delta[1] (intra)
				delta := got[k][p.slt]
				lo := int64(b.before.Get(k)[p.truth]) - int64(b.prevAfter.Get(k)[p.truth]) - inflight
				hi := int64(b.after.Get(k)[p.truth]) - int64(prevBefore.Get(k)[p.truth]) + inflight
				if len(bad) < 50 && (int64(delta) < lo || int64(delta) > hi) {
					bad = append(bad, fmt.Sprintf("window %d (%.3f s): %v %s: probe %d, the graph %d..%d around the scans",
						i, w.Seconds, k, p.what, delta, max(lo, 0), hi))
				}
			}
		}
		if i == len(ws)-1 {
			for _, t := range topics {
				if !seen[t] {
					bad = append(bad, fmt.Sprintf("topic %s: the graph never made it", t))
				}
			}
		}
	}
	return bad
}

// distrosOf maps each process of a scan to its distro.
func distrosOf(s *segment.Scan) map[int]segment.Distro {
	_, d := probeCounts(s)
	return d
}

// topicsOf lists the names of an expectation map.
func topicsOf(want map[string]expect) []string {
	var out []string
	for name := range want {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// judgeRun records a graph's windows with period until it exits, then judges
// them (for topics, "" for timers) and the totals against what it did: the
// tests of counts share it. slack: see judgeTotals.
func judgeRun(t *testing.T, g *graph, period time.Duration, topics []string, slack uint64) ([]*window.Window, *segment.Scan) {
	t.Helper()
	rec := newRecorder(t, g.dir, period, window.Options{})
	ws := record(t, g, rec, period)
	g.wait()
	final := scan(t, g.dir)
	bad := judgeWindows(ws, g.brackets, distrosOf(final), topics)
	bad = append(bad, judgeTotals(final, g.truth(), slack)...)
	for _, p := range bad {
		t.Error(p)
	}
	return ws, final
}
