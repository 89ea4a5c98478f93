package recorder

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"

	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// Summary accumulates windows into per-topic totals for the end of a run.
// A mean rate is, per side, the messages of that side's live endpoints over
// the time they existed (the per-window rule): in each complete window, the
// counts of the endpoints alive at its end over the longest time one of them
// was measured in it. So time before a publisher existed, or after it
// exited, never dilutes its rate (a subscriber that outlives it, a restarted
// talker); the window in which an endpoint exits, whose share of it is
// unknown, counts in the totals only, as does the final window of a run, a
// sliver whose rate is a one-sample estimate (upstream pitfall 19).
type Summary struct {
	Period  float64 // seconds; windows shorter than 90 % of it are partial
	Seconds float64 // total measured time
	Windows int
	topics  map[string]*TopicTotal
	procs   map[int]window.Proc
	nodes   map[nodeKey]*NodeTotal
	threads map[int]window.ProcBusy // per process, the complete window whose busiest thread was busiest
	calls   map[callKey]*CallTotal
	links   []window.Link // the run's latency links, every window's added
	bytes   map[string]*BytesTotal
	// PathRules: the spec's named paths, shown first (the runner sets them).
	PathRules []spec.PathRule
}

type nodeKey struct {
	name string
	pid  int
}

// NodeTotal is one node's callbacks over a whole run (rclcpp: timed).
type NodeTotal struct {
	Node      string
	Pid       int
	Callbacks uint64
	SumMs     float64
	MaxMs     float64 // what its longest callback took at least (window.Durations.MaxMs)
	PeakBusy  float64 // its largest busy share of a complete window
	Unended   uint64
	NotTimed  bool // it had callbacks the probe cannot time (rclpy)
}

// TopicTotal is one topic over a whole run.
type TopicTotal struct {
	Name                             string
	PubInter, PubIntra               uint64 // messages, all windows
	RecvInter, RecvIntra             uint64
	meanPubInter, meanPubIntra       float64 // messages of live endpoints in complete windows
	meanRecvInter, meanRecvIntra     float64
	pubExposure, recvExposure        float64 // the time those endpoints existed
	MeanPubInterHz, MeanPubIntraHz   float64
	MeanRecvInterHz, MeanRecvIntraHz float64
	PubHidden                        bool // some publishes were invisible on the distro (Humble intra): no publish figure
}

// Add folds one window in.
func (s *Summary) Add(w *window.Window) {
	if s.topics == nil {
		s.topics, s.procs = map[string]*TopicTotal{}, map[int]window.Proc{}
	}
	s.Windows++
	s.Seconds += w.Seconds
	complete := w.Seconds >= 0.9*s.Period
	for i := range w.Topics {
		t := &w.Topics[i]
		tt := s.topics[t.Name]
		if tt == nil {
			tt = &TopicTotal{Name: t.Name}
			s.topics[t.Name] = tt
		}
		tt.PubHidden = tt.PubHidden || t.PubHidden
		pubAll, pubLive, pubSecs := side(t.Pubs)
		recvAll, recvLive, recvSecs := side(t.Subs)
		tt.PubInter, tt.PubIntra = tt.PubInter+pubAll[0], tt.PubIntra+pubAll[1]
		tt.RecvInter, tt.RecvIntra = tt.RecvInter+recvAll[0], tt.RecvIntra+recvAll[1]
		if complete {
			tt.meanPubInter += float64(pubLive[0])
			tt.meanPubIntra += float64(pubLive[1])
			tt.pubExposure += pubSecs
			tt.meanRecvInter += float64(recvLive[0])
			tt.meanRecvIntra += float64(recvLive[1])
			tt.recvExposure += recvSecs
		}
		if tt.pubExposure > 0 {
			tt.MeanPubInterHz, tt.MeanPubIntraHz = tt.meanPubInter/tt.pubExposure, tt.meanPubIntra/tt.pubExposure
		}
		if tt.recvExposure > 0 {
			tt.MeanRecvInterHz, tt.MeanRecvIntraHz = tt.meanRecvInter/tt.recvExposure, tt.meanRecvIntra/tt.recvExposure
		}
	}
	for _, p := range w.Procs {
		s.procs[p.Pid] = p
	}
	s.addTiming(w, complete)
	s.addCalls(w)
	s.addLinks(w)
	s.addBytes(w)
}

func (s *Summary) addTiming(w *window.Window, complete bool) {
	if s.nodes == nil {
		s.nodes = map[nodeKey]*NodeTotal{}
	}
	get := func(node string, pid int) *NodeTotal {
		k := nodeKey{node, pid}
		n := s.nodes[k]
		if n == nil {
			n = &NodeTotal{Node: node, Pid: pid}
			s.nodes[k] = n
		}
		return n
	}
	for _, c := range w.Callbacks {
		if c.Node == "" {
			continue
		}
		n := get(c.Node, c.Pid)
		if !c.Measured {
			n.NotTimed = true
			continue
		}
		n.Callbacks += c.Duration.N
		n.SumMs += c.Duration.SumMs
		n.Unended += c.Unended
		if c.Duration.N > 0 {
			n.MaxMs = max(n.MaxMs, c.Duration.MaxMs)
		}
	}
	if complete {
		if s.threads == nil {
			s.threads = map[int]window.ProcBusy{}
		}
		for pid, pb := range window.ProcessBusy(w.Threads) {
			if was, ok := s.threads[pid]; !ok || pb.BusiestPct > was.BusiestPct {
				s.threads[pid] = pb
			}
		}
		for _, b := range w.Busy {
			if b.Measured {
				n := get(b.Node, b.Pid)
				n.PeakBusy = max(n.PeakBusy, b.Pct)
			}
		}
	}
}

// Nodes returns every node's callback totals, by name and pid.
func (s *Summary) Nodes() []NodeTotal {
	out := make([]NodeTotal, 0, len(s.nodes))
	for _, n := range s.nodes {
		out = append(out, *n)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return out[i].Pid < out[j].Pid
	})
	return out
}

// side sums one side of a topic in a window: every endpoint's counts (all),
// and the counts of the endpoints alive at the window's end (live) with the
// longest time one of those was measured (secs).
func side(eps []window.EndpointRate) (all, live [2]uint64, secs float64) {
	for _, e := range eps {
		all[0], all[1] = all[0]+e.Delta[0], all[1]+e.Delta[1]
		if e.Alive {
			live[0], live[1] = live[0]+e.Delta[0], live[1]+e.Delta[1]
			secs = max(secs, e.Exposure)
		}
	}
	return all, live, secs
}

// Topics returns the totals sorted by name.
func (s *Summary) Topics() []TopicTotal {
	out := make([]TopicTotal, 0, len(s.topics))
	for _, t := range s.topics {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Print writes the end-of-run table.
func (s *Summary) Print(out io.Writer) {
	fmt.Fprintf(out, "\npulse summary: %d windows, %.1f s measured; each rate is its side's messages over the time\n"+
		"that side's endpoints existed (complete windows; PUBLISHED and DELIVERED count every window)\n", s.Windows, s.Seconds)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPUB Hz\t(inter\tintra)\tRECV Hz\t(inter\tintra)\tPUBLISHED\tDELIVERED")
	hidden := false
	for _, t := range s.Topics() {
		pub := fmt.Sprintf("%.2f\t%.2f\t%.2f", max(t.MeanPubInterHz, t.MeanPubIntraHz), t.MeanPubInterHz, t.MeanPubIntraHz)
		published := strconv.FormatUint(max(t.PubInter, t.PubIntra), 10)
		if t.PubHidden { // the inter-process part is exact; the rest is unseen
			pub, published, hidden = fmt.Sprintf("-\t%.2f\t-", t.MeanPubInterHz), "-", true
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%.2f\t%s\t%d\n", t.Name, pub,
			t.MeanRecvInterHz+t.MeanRecvIntraHz, t.MeanRecvInterHz, t.MeanRecvIntraHz, published, t.RecvInter+t.RecvIntra)
	}
	tw.Flush()
	if hidden {
		fmt.Fprintln(out, "-: intra-process publishes are not visible on Humble (no rclcpp_intra_publish tracepoint); see pulse doctor")
	}
	s.printTiming(out)
	s.printCalls(out)
	s.printPaths(out)
	s.printBytes(out)
	pids := make([]int, 0, len(s.procs))
	for pid := range s.procs {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	for _, pid := range pids {
		p := s.procs[pid]
		fmt.Fprintf(out, "process %d (%s) %s, nodes: %s", pid, p.Exe, p.State(), p.NodeNames())
		if pb, ok := s.threads[pid]; ok { // one saturated thread starves every node it serves
			fmt.Fprintf(out, "; busiest executor thread %d (%s) at peak %.1f %% of a window", pb.BusiestTid, pb.BusiestName, pb.BusiestPct)
		}
		fmt.Fprintln(out)
	}
}

// printTiming writes each node's callbacks over the run, when any were timed.
func (s *Summary) printTiming(out io.Writer) {
	nodes := s.Nodes()
	timed := false
	for _, n := range nodes {
		timed = timed || n.Callbacks > 0
	}
	if !timed {
		return
	}
	fmt.Fprintln(out, "callbacks per node (rclcpp; MAX ms: the longest took at least this; PEAK BUSY: its largest share of a window inside callbacks)")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tPID\tCALLBACKS\tMEAN ms\tMAX ms\tPEAK BUSY %\tUNENDED")
	for _, n := range nodes {
		if n.Callbacks == 0 && n.NotTimed {
			peak := "-"
			if n.PeakBusy > 0 { // its executor's time outside rcl_wait
				peak = fmt.Sprintf("%.1f", n.PeakBusy)
			}
			fmt.Fprintf(tw, "%s\t%d\t-\t-\t-\t%s\t-  callbacks not measured (rclpy: no callback tracepoint); busy: outside rcl_wait\n", n.Node, n.Pid, peak)
			continue
		}
		if n.Callbacks == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t%.3f\t%.1f\t%d\n", n.Node, n.Pid, n.Callbacks, n.SumMs/float64(n.Callbacks), n.MaxMs, n.PeakBusy, n.Unended)
	}
	tw.Flush()
}
