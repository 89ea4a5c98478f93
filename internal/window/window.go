// Package window turns two scans of the segment directory into a window:
// rates per endpoint and per topic for the whole machine, the nodes of every
// process, and which processes are alive.
//
// Counting rules (docs/design/counting-rules.md):
//   - A rate is a count delta divided by measured CLOCK_MONOTONIC time, never
//     by the configured period.
//   - An endpoint created during the window is measured from its creation
//     (with a floor of MinExposure, so one early message is not a huge rate).
//   - Publish side "any transport" is max(inter, intra) per endpoint: one
//     publish() can fire both tracepoints. Receive buckets are disjoint and
//     are summed.
//   - Stall visibility: a topic keeps its TOPIC/RECV line, at zero, once a
//     live endpoint has ever counted on that side.
//   - What the distro cannot see is not measured, never zero: on Humble an
//     rclcpp intra-process publish fires no tracepoint, so a publisher whose
//     process delivers its topic intra-process has PubHidden set, and its
//     topic's publish rate and loss are not measured (design note 0002).
package window

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"ros2_pulse/internal/segment"
)

// MinExposure is the shortest time a young endpoint's count is divided by.
const MinExposure = 0.2

// IsBuiltin reports the topics every node carries, hidden from windows unless
// asked for. A comparison, not a map: it runs for every endpoint of every scan.
func IsBuiltin(topic string) bool { return topic == "/rosout" || topic == "/parameter_events" }

// Options shape a window.
type Options struct {
	ShowBuiltin bool // include /rosout and /parameter_events
}

// EndpointRate is one publisher or subscription over the window.
type EndpointRate struct {
	Pid      int
	Node     string
	Inter    float64 // Hz
	Intra    float64 // Hz
	Delta    [2]uint64
	Total    [2]uint64 // cumulative counts
	Exposure float64   // seconds this endpoint was measured over
	Alive    bool
	// Subscriptions: the share (%) of the messages this machine's publishers
	// sent on the topic in this window that it did not receive. Judged only
	// for a live subscription that existed for the whole window, with a
	// baseline, and clamped at 0 (remote publishers deliver more).
	LossPct    float64
	LossJudged bool
	// Publishers: its distro cannot see some of its publishes (Humble's
	// intra-process ones, whose deliveries its process counts): its rates
	// are a lower bound, not a measurement.
	PubHidden bool
	// Subscriptions: its takes may fire no tracepoint (an rclpy subscription
	// on Humble: raw, serialized takes do not reach rmw_take's tracepoint;
	// rclcpp's callbacks always fire callback_start). While it has delivered
	// nothing, its silence is not measured: no loss, never "starved".
	RecvHidden bool
	// QoS: what the probe learnt of it at creation (QoS, type, rmw, domain);
	// nil when nothing was (ABI before 1.5, an endpoint its rcl init did not
	// announce). Shared with the snapshot: read only.
	QoS *segment.QoS
	// Bytes: its inter-process messages' bytes (publishers: sent;
	// subscriptions: received); How "" unless its process measures bytes.
	Bytes Bytes
}

// Starved reports a live subscription, whose takes the probe sees, that has
// never delivered anything while this machine's publishers of its topic
// published in this window.
func (t *Topic) Starved(s *EndpointRate) bool {
	return s.Alive && !s.RecvHidden && s.Total[0]+s.Total[1] == 0 && t.Published > 0 && !t.PubHidden
}

// Topic is the machine-wide view of one topic.
type Topic struct {
	Name                 string
	PubInter, PubIntra   float64 // sums over publishers
	PubAny               float64 // sum over publishers of max(inter, intra)
	RecvInter, RecvIntra float64 // sums over subscriptions
	PubCount, SubCount   int     // live endpoints
	PubInterSeen         bool    // a live publisher has ever counted inter
	PubIntraSeen         bool    // a live publisher has ever counted intra
	RecvSeen             bool    // a live subscription has ever delivered
	Pubs, Subs           []EndpointRate
	Exposure             float64  // longest time any endpoint of the topic was measured in this window
	PubGap, RecvGap      GapStats // merged over the side's live endpoints; HasData false without gap tracking
	Latency              GapStats // receive latency merged over the subscriptions; HasData false without latency tracking
	Published            uint64   // messages sent in the window by this machine's publishers (each once: max of its inter and intra counts)
	Loss                 Loss     // the worst judged subscription
	// PubHidden: a live publisher's publishes are partly invisible on its
	// distro (EndpointRate.PubHidden). PubInter stays exact; PubIntra,
	// PubAny, Published and loss are not measured.
	PubHidden bool
	// PubBytes, RecvBytes: the bytes this machine's publishers sent and its
	// subscriptions received, summed (design note 0033).
	PubBytes, RecvBytes Bytes
}

// PubMeasured reports whether the topic's publish rate of transport
// ("inter", "intra" or "any") is a measurement on every live publisher's distro.
func (t *Topic) PubMeasured(transport string) bool { return transport == "inter" || !t.PubHidden }

// IntraPublishVisible reports whether a distro fires a tracepoint for an
// rclcpp intra-process publish: rclcpp_intra_publish exists from Iron on;
// Humble has none (reference: tracetools-facts, "Intra-process publish in
// Humble"). The probe reports Iron as Jazzy; a distro it could not tell
// fires what it fires, and is counted as such.
func IntraPublishVisible(d segment.Distro) bool { return d != segment.DistroHumble }

// Loss is a topic's worst subscription loss in one window.
type Loss struct {
	Judged   int     // subscriptions judged
	WorstPct float64 // the largest loss among them, %
	Node     string  // the subscription with that loss
	Pid      int
}

// judgeLoss compares each subscription's deliveries with the messages the
// machine published on its topic in the window. Only a subscription that
// lived through the whole window is judged: a late joiner missed messages it
// was never meant to get, and a TransientLocal one may get more. In-flight
// messages at the window edges move a few messages between neighbouring
// windows; they never accumulate.
func judgeLoss(w *Window, baseline bool) {
	for ti := range w.Topics {
		t := &w.Topics[ti]
		for _, p := range t.Pubs {
			t.Published += max(p.Delta[0], p.Delta[1])
		}
		if !baseline || t.PubCount == 0 || t.PubHidden {
			continue // no baseline, no local publisher, or what was published is not seen
		}
		for si := range t.Subs {
			s := &t.Subs[si]
			if !s.Alive || s.Exposure < w.Seconds*0.999 || s.RecvHidden {
				continue // not there all window, or its silence is not measured
			}
			s.LossJudged = true
			if got := s.Delta[0] + s.Delta[1]; t.Published > got {
				s.LossPct = 100 * float64(t.Published-got) / float64(t.Published)
			}
			if t.Loss.Judged == 0 || s.LossPct > t.Loss.WorstPct {
				t.Loss.WorstPct, t.Loss.Node, t.Loss.Pid = s.LossPct, s.Node, s.Pid
			}
			t.Loss.Judged++
		}
	}
}

// Stalled reports a side that has counted before and, with a live endpoint,
// counted nothing in this window (the stall-visibility facts the log keeps).
func (t *Topic) Stalled() bool {
	pub := t.PubCount > 0 && !t.PubHidden && (t.PubInterSeen || t.PubIntraSeen) && t.PubAny == 0
	recv := t.SubCount > 0 && t.RecvSeen && t.RecvInter+t.RecvIntra == 0
	return pub || recv
}

// Active reports whether anything counted in this window.
func (t *Topic) Active() bool { return t.PubInter+t.PubIntra+t.RecvInter+t.RecvIntra > 0 }

// Topic states, worst first, in the words every view uses.
const (
	StateStalled = "STALL"  // a side that counted before is silent now
	StateWarn    = "WARN"   // a verdict names the topic (warned)
	StateExited  = "exited" // every endpoint's process has exited
	StateOK      = "ok"
	StateNoData  = "-" // no traffic ever seen, no verdict
)

// State is the topic's state, given whether a verdict names it.
func (t *Topic) State(warned bool) string {
	switch {
	case t.Stalled():
		return StateStalled
	case warned:
		return StateWarn
	case t.PubCount+t.SubCount == 0 && len(t.Pubs)+len(t.Subs) > 0:
		return StateExited
	case t.Active() || t.PubInterSeen || t.PubIntraSeen || t.RecvSeen:
		return StateOK
	}
	return StateNoData
}

// Proc is one process image.
type Proc struct {
	Pid     int
	OwnPid  int    // its pid in its own PID namespace, where that is another (segment.Snapshot.OwnPid)
	Start   uint64 // its start time in clock ticks after boot (/proc/<pid>/stat's 22nd field); 0 unknown
	Exe     string
	Cmdline []string
	Alive   bool
	Distro  string
	Nodes   []string
	Path    string
	Key     string
	Corrupt int
	Dropped uint64 // endpoints the probe could not fit in its table
}

// Timer is one timer: its node, configured period and measured firing rate,
// how late it was called against its own schedule and how often its callback
// ran longer than its period. rclcpp timers are linked to their node; an
// rclpy timer (seen through rcl_timer_call, ABI 1.4) has no node link and is
// listed only when its process has exactly one node, which owns it.
type Timer struct {
	Node     string
	Ordinal  int // 0, 1, ... among its node's timers in creation order
	Pid      int
	PeriodMs float64
	Hz       float64
	Delta    uint64
	Exposure float64 // seconds the timer was measured over in this window
	// Timing (ABI 1.4): Late is actual minus scheduled call time of each call;
	// Overruns are callbacks longer than the period (rclcpp: rclpy's
	// callbacks are not timed, Duration.N 0 and Callback.Measured false).
	Late      Durations
	LateKnown bool // the process reports its timers' calls (ABI 1.4, timing on)
	Overruns  uint64
	Timed     bool   // its callbacks are timed (rclcpp): Overruns is a measurement
	Why       string // when not Timed: window.NoCallbackTracepoint or window.TimingOff
}

// Service is one service server of a live process over the window: the
// requests its callbacks handled. rclcpp's callbacks fire callback_start;
// rclpy's fire nothing, so an rclpy server's requests are not measured
// (Measured false), never zero.
type Service struct {
	Node     string
	Pid      int
	Name     string
	Delta    uint64
	Measured bool
}

// Window is everything measured between two scans.
type Window struct {
	Run     string  // the run that recorded it, from a log's RUN line ("" live, or in a log without one)
	TsNs    int64   // wall clock at the end of the window
	Seconds float64 // measured length
	Topics  []Topic // sorted by name
	Nodes   []string
	Procs   []Proc  // sorted by pid
	Timers  []Timer // live processes' timers, sorted by node and ordinal
	// Services: live processes' service servers, in segment order. Every
	// callback the probe sees is a sign of life (pulse top's node state).
	Services []Service
	// Calls (ABI 1.6): live processes' service servers and clients with
	// their calls, in segment order (parameter services only while called).
	Calls []Call
	// Timing (ABI 1.4): live processes' callbacks (builtin topics and idle
	// services left out), their threads' busy share, and each node's.
	Callbacks []Callback
	Threads   []Thread
	Busy      []NodeBusy
	// Links (ABI 1.9, ROS_PULSE_LINKS=1): which input each callback's
	// publishes came from, per node, sorted by input and output topic.
	// Paths: the end-to-end paths internal/paths finds in them and in the
	// spec (the recorder fills it; a log carries it).
	Links []Link
	Paths []Path
	// Unmatched (ABI 1.5): why a publisher or subscription meets nobody, or
	// meets with a warning, as internal/diagnose finds it in the window's
	// last scan (the recorder fills it; a log carries it).
	Unmatched []Unmatched
	// A record with a detail period (pulse record --detail) writes lean
	// windows every period and a detail window every detail period. Lean: a
	// window of such a record, without its endpoints, timers, callbacks,
	// busy shares, threads and calls (unknown, not absent). Detail: every
	// section over the detail period (Seconds), beside the lean windows.
	Lean, Detail bool
}

// Unmatched is one endpoint's diagnosis (internal/diagnose.Finding as data).
type Unmatched struct {
	Topic  string
	Node   string
	Pid    int
	Pub    bool     // a publisher nobody hears; else a subscription
	Reason string   // qos_incompatible, type_mismatch, other_domain, other_rmw, discovery_range, no_publisher, ...
	Error  bool     // it meets nobody; else a warning
	Detail string   // the policy and both sides' values, the two domains, the near names, ...
	Fix    string   // one line
	Peers  []string // the other side: "node pid"
	Silent bool     // a subscription that received nothing since it was created
}

// Why is the reason with its detail: "qos_incompatible (reliability: publisher best_effort, subscription reliable)".
func (u *Unmatched) Why() string {
	if u.Detail == "" {
		return u.Reason
	}
	return u.Reason + " (" + u.Detail + ")"
}

// Compute builds the window from prev to cur. prev may be nil (the first
// window of a reader that has just started): then every count is taken from
// zero and every endpoint is measured from its creation.
func Compute(prev, cur *segment.Scan, startMono uint64, tsNs int64, opt Options) *Window {
	return new(Scratch).Compute(prev, cur, startMono, tsNs, opt)
}

// Compute is window.Compute in the scratch's memory.
func (sc *Scratch) Compute(prev, cur *segment.Scan, startMono uint64, tsNs int64, opt Options) *Window {
	t1 := startMono
	if prev != nil {
		t1 = prev.Mono
	}
	t2 := cur.Mono
	w := sc.window()
	w.TsNs, w.Seconds = tsNs, seconds(t2-min(t1, t2))

	// The previous reading of each segment.
	var before map[string]*segment.Snapshot
	if prev != nil {
		before = resetMap(&sc.before, len(prev.Snapshots))
		for _, s := range prev.Snapshots {
			before[s.Key()] = s
		}
	}

	// First pass: number the topics and size their endpoint lists, so the
	// second pass neither hashes a name again nor grows a slice (map work
	// and appends were most of a sample's cost).
	sizes := sc.sizes[:0]
	endpoints, callbacks := 0, 0
	for _, s := range cur.Snapshots {
		endpoints += len(s.Endpoints)
		if !s.Alive {
			continue // an exited process's endpoints have no callbacks in the window
		}
		for i := range s.Endpoints {
			if k := s.Endpoints[i].Kind; k != segment.KindPublisher && k != segment.KindClient {
				callbacks++ // at most: a callback is large, and grown by appending it was half a window's garbage
			}
		}
	}
	if callbacks > cap(w.Callbacks) {
		w.Callbacks = make([]Callback, 0, callbacks)
	}
	topicOf := grow(sc.topicOf[:0], endpoints) // per pub/sub endpoint in scan order: its topic, or -1 when hidden
	index := resetMap(&sc.index, endpoints/2)  // most topics have a publisher and a subscription: grown, it rehashed
	rates := 0
	numberTopic := func(name string, kind segment.Kind) int32 {
		if IsBuiltin(name) && !opt.ShowBuiltin {
			return -1
		}
		ti, ok := index[name]
		if !ok {
			ti = int32(len(sizes))
			index[name] = ti
			sizes = append(sizes, [2]int{})
		}
		sizes[ti][kind-segment.KindPublisher]++
		rates++
		return ti
	}
	// A slot reused since the previous scan (another generation) held an
	// entity that is gone: what it counted to its end is a vanished
	// endpoint's last counts, folded into its topic like an exited process's.
	var vanished []vanishedEndpoint
	for si, s := range cur.Snapshots {
		old := before[s.Key()]
		for i := range s.Endpoints {
			e := &s.Endpoints[i]
			if old != nil {
				if o := segment.FindEndpoint(old.Endpoints, e.Index); o != nil && o.Generation != e.Generation && isPubSub(o.Kind) {
					if ti := numberTopic(o.Name, o.Kind); ti >= 0 {
						vanished = append(vanished, vanishedEndpoint{snap: si, old: o, now: e, topic: ti})
					}
				}
			}
			if isPubSub(e.Kind) {
				topicOf = append(topicOf, numberTopic(e.Name, e.Kind))
			}
		}
	}
	// Topics are numbered in name order before anything is filled: sorting
	// the filled Topic structs (a few hundred bytes each) moved megabytes a
	// window at a real robot's thousand topics.
	sc.renumber.byName(index, sizes, topicOf, vanished)
	sc.sizes, sc.topicOf = sizes, topicOf
	// Every topic's lists are cut from one slab: one allocation, not two per topic.
	slab := sc.endpointSlab(rates)
	cut := func(n int) []EndpointRate {
		part := slab[:0:n]
		slab = slab[n:]
		return part
	}
	w.Topics = grow(w.Topics[:0], len(sizes))[:len(sizes)]
	for place, ti := range sc.renumber.order {
		w.Topics[place] = Topic{Name: sc.renumber.names[ti], Pubs: cut(sizes[place][0]), Subs: cut(sizes[place][1])}
	}
	// An endpoint created inside the window is measured from its creation,
	// with a floor so one early message does not read as a huge rate.
	exposureOf := func(created uint64) float64 {
		return max(seconds(t2-min(t2, max(t1, created))), min(MinExposure, w.Seconds))
	}
	gapAccs := grow(sc.gapAccs[:0], len(sizes))[:len(sizes)] // per topic: publish gaps, receive gaps, receive latency
	clear(gapAccs)
	sc.gapAccs = gapAccs
	w.Procs = grow(w.Procs[:0], len(cur.Snapshots))
	next := 0 // position in topicOf
	liveNodes := resetMap(&sc.liveNodes, 0)
	for _, s := range cur.Snapshots {
		p := procOf(s)
		if s.Alive {
			for _, n := range p.Nodes {
				liveNodes[n] = true
			}
		}
		w.Procs = append(w.Procs, p)

		old, known := before[s.Key()]
		var oldEps []segment.Endpoint
		if known {
			oldEps = old.Endpoints
		}
		// A segment the previous scan saw but could not read has no baseline:
		// count it from the next window on, never its history. One it did not
		// see (not yet listed, or still being created) is counted from zero,
		// whatever its start time: it counted nothing before the scan could
		// have read it (under load a segment's creation can straddle a scan).
		noBaseline := prev != nil && !known && prev.Unread(s.Path)
		// baseline is an endpoint's reading at the window start: its previous
		// record, itself when there is no baseline (nothing counted), or nil
		// for an endpoint born in this window (everything counted).
		baseline := func(e *segment.Endpoint) *segment.Endpoint {
			if o := segment.FindEndpoint(oldEps, e.Index); o != nil && o.Kind == e.Kind && o.Name == e.Name && o.Generation == e.Generation {
				return o
			}
			if noBaseline {
				return e
			}
			return nil
		}
		hidden := IntraDelivered(s) // Humble: topics this process delivers intra-process
		var ordinals map[string]int // timers per node, made on the first timer
		w.Threads = append(w.Threads, threadsOf(s, old, t1, t2)...)
		if known {
			w.Links = append(w.Links, linksOf(s, old)...)
		} else if !noBaseline {
			w.Links = append(w.Links, linksOf(s, nil)...)
		}
		for i := range s.Endpoints {
			e := &s.Endpoints[i]
			base := baseline(e)
			exposure := exposureOf(e.CreatedMono)
			var cb *Callback
			if e.Kind != segment.KindPublisher && e.Kind != segment.KindClient && s.Alive && !e.Retired() && (e.Kind != segment.KindSubscription || !IsBuiltin(e.Name) || opt.ShowBuiltin) {
				c := callbackOf(s, e, base)
				if e.Kind != segment.KindService || c.Duration.N+c.Unended > 0 {
					w.Callbacks = append(w.Callbacks, c)
					cb = &w.Callbacks[len(w.Callbacks)-1]
				}
			}
			if e.Kind == segment.KindTimer && cb != nil && cb.Node != "" {
				node := cb.Node
				if ordinals == nil {
					ordinals = map[string]int{}
				}
				tm := Timer{Node: node, Ordinal: ordinals[node], Pid: s.Pid, PeriodMs: float64(e.Aux) / 1e6}
				cb.Ordinal = tm.Ordinal
				ordinals[node]++
				tm.Delta = e.Counts[segment.SlotInter]
				if base != nil {
					tm.Delta = sub(tm.Delta, base.Counts[segment.SlotInter])
				}
				tm.Exposure = exposure
				if tm.Exposure > 0 {
					tm.Hz = float64(tm.Delta) / tm.Exposure
				}
				tm.Late, tm.Overruns, tm.LateKnown = lateness(e, base)
				tm.Timed, tm.Why = cb.Measured, cb.Why
				w.Timers = append(w.Timers, tm)
			}
			if e.Kind == segment.KindService && e.Node >= 0 && s.Alive && !e.Retired() {
				sv := Service{Node: s.Nodes[e.Node].Name, Pid: s.Pid, Name: e.Name, Delta: e.Counts[segment.SlotInter],
					Measured: e.Flags&segment.FlagRclcpp != 0}
				if base != nil {
					sv.Delta = sub(sv.Delta, base.Counts[segment.SlotInter])
				}
				w.Services = append(w.Services, sv)
			}
			if (e.Kind == segment.KindService || e.Kind == segment.KindClient) && e.Calls != nil && !e.Retired() {
				// An exited process's calls are shown in the window it exited in, for what it did before.
				c := callOf(s, e, base, exposure, t2)
				busy := c.Started+c.Answered+c.Evicted+c.Unmatched+c.SendFailed > 0
				if s.Alive && (!IsParameterService(e.Name) || busy || len(c.Open) > 0) || !s.Alive && busy {
					w.Calls = append(w.Calls, c)
				}
			}
			if e.Kind != segment.KindPublisher && e.Kind != segment.KindSubscription {
				continue
			}
			ti := topicOf[next]
			next++
			if ti < 0 {
				continue
			}
			total := [2]uint64{e.Counts[segment.SlotInter], e.Counts[segment.SlotIntra]}
			delta := total
			if base != nil {
				delta = [2]uint64{sub(total[0], base.Counts[segment.SlotInter]), sub(total[1], base.Counts[segment.SlotIntra])}
			}
			t := &w.Topics[ti]
			r := t.slot(e.Kind) // filled in place: an EndpointRate is ~100 bytes, copied twice it was a tenth of a sample
			r.Pid, r.Delta, r.Total, r.Exposure, r.Alive = s.Pid, delta, total, exposure, s.Alive && !e.Retired()
			if e.Node >= 0 {
				r.Node = s.Nodes[e.Node].Name
			}
			if exposure > 0 {
				r.Inter, r.Intra = float64(delta[0])/exposure, float64(delta[1])/exposure
			}
			t.Exposure = max(t.Exposure, exposure)
			if (e.Gap != nil || e.Latency != nil) && !e.Retired() {
				acc := gapAccs[ti]
				if acc == nil {
					acc = new([3]gapAcc)
					gapAccs[ti] = acc
				}
				var prevGap, prevLat *segment.Gap
				if base != nil {
					prevGap, prevLat = base.Gap, base.Latency
				}
				side := 0
				if e.Kind == segment.KindSubscription {
					side = 1
				}
				acc[side].add(prevGap, e.Gap, t2, s.Alive)
				acc[2].add(prevLat, e.Latency, t2, false) // no "silence" for a latency: its clock is realtime
			}
			if e.Kind == segment.KindPublisher {
				r.PubHidden = hidden[e.Name]
			}
			if e.Kind == segment.KindSubscription {
				r.RecvHidden = RecvHidden(s, e)
			}
			r.QoS = e.QoS
			r.Bytes = bytesOf(s.BytesOn, e, base, delta[0], exposure)
			t.count(e.Kind, r)
		}
	}
	linkServers(w.Calls)
	for _, v := range vanished {
		s := cur.Snapshots[v.snap]
		old := before[s.Key()]
		var tail [2]uint64
		for k := range tail {
			tail[k] = sub(v.now.Base[k], v.old.Counts[k]+v.old.Base[k])
		}
		exposure := exposureOf(v.old.CreatedMono)
		r := EndpointRate{Pid: s.Pid, Delta: tail, Total: [2]uint64{v.old.Counts[0] + tail[0], v.old.Counts[1] + tail[1]}, Exposure: exposure}
		if v.old.Node >= 0 && v.old.Node < len(old.Nodes) {
			r.Node = old.Nodes[v.old.Node].Name
		}
		if exposure > 0 {
			r.Inter, r.Intra = float64(tail[0])/exposure, float64(tail[1])/exposure
		}
		t := &w.Topics[v.topic]
		*t.slot(v.old.Kind) = r
		t.count(v.old.Kind, &r)
	}
	judgeLoss(w, prev != nil)
	sortLinks(w.Links)
	w.Busy = nodeBusy(w.Callbacks, w.Seconds)
	busyFromWaits(w.Busy, w.Threads)
	for ti, acc := range gapAccs {
		if acc != nil {
			t := &w.Topics[ti]
			t.PubGap, t.RecvGap, t.Latency = acc[0].stats(), acc[1].stats(), acc[2].stats()
		}
	}
	for n := range liveNodes {
		w.Nodes = append(w.Nodes, n)
	}
	sort.Strings(w.Nodes)
	// Typed sorts: sort.SliceStable's reflective swaps of a real robot's ~750 timers were ~7 % of reading it.
	slices.SortStableFunc(w.Procs, func(a, b Proc) int { return cmp.Compare(a.Pid, b.Pid) })
	w.Timers = sc.sortTimers(w.Timers)
	return w
}

// Topic returns the named topic, or nil.
func (w *Window) Topic(name string) *Topic {
	i := sort.Search(len(w.Topics), func(i int) bool { return w.Topics[i].Name >= name })
	if i < len(w.Topics) && w.Topics[i].Name == name {
		return &w.Topics[i]
	}
	return nil
}

// IntraDelivered lists, for a process whose distro cannot see intra-process
// publishes, the topics it has delivered intra-process: its publishers on
// them publish intra-process unseen. Nil (and free) on Jazzy and later.
func IntraDelivered(s *segment.Snapshot) map[string]bool {
	if IntraPublishVisible(s.Distro) {
		return nil
	}
	var out map[string]bool
	for i := range s.Endpoints {
		e := &s.Endpoints[i]
		if e.Kind == segment.KindSubscription && e.Counts[segment.SlotIntra] > 0 {
			if out == nil {
				out = map[string]bool{}
			}
			out[e.Name] = true
		}
	}
	return out
}

// RecvHidden reports a subscription that has delivered nothing and whose
// takes may fire no tracepoint: an rclpy one (rclcpp's callbacks always fire
// callback_start) on Humble, where raw (serialized) takes do not reach
// rmw_take's tracepoint (design note 0013). Its silence is not measured.
func RecvHidden(s *segment.Snapshot, e *segment.Endpoint) bool {
	return e.Kind == segment.KindSubscription && e.Counts[segment.SlotInter]+e.Counts[segment.SlotIntra] == 0 &&
		e.Flags&segment.FlagRclcpp == 0 && s.Distro == segment.DistroHumble
}

// PublishedByTopic sums what the live publishers of each topic have
// published, each message once, where every publish is seen (not a Humble
// publisher whose process delivers its topic intra-process).
func PublishedByTopic(scan *segment.Scan) map[string]uint64 {
	out := map[string]uint64{}
	for _, s := range scan.Snapshots {
		if !s.Alive {
			continue
		}
		hidden := IntraDelivered(s)
		for i := range s.Endpoints {
			if e := &s.Endpoints[i]; e.Kind == segment.KindPublisher && !e.Retired() && !hidden[e.Name] {
				out[e.Name] += max(e.Counts[segment.SlotInter], e.Counts[segment.SlotIntra])
			}
		}
	}
	return out
}

// byName renumbers the topics numbered in first-seen order (sizes, topicOf,
// vanished) in name order, in place; r.names[r.order[place]] is the name at
// a place.
func (r *renumbering) byName(index map[string]int32, sizes [][2]int, topicOf []int32, vanished []vanishedEndpoint) {
	n := len(sizes)
	// The same topics numbered the same as last window (a settled graph):
	// last window's order holds, and its sort (~8,000 name comparisons at
	// robot size) is skipped.
	same := len(r.names) == n && len(r.order) == n && len(r.rank) == n
	r.names = grow(r.names[:0], n)[:n]
	for name, ti := range index {
		same = same && r.names[ti] == name
		r.names[ti] = name
	}
	if !same {
		r.order = grow(r.order[:0], n)[:n]
		for i := range r.order {
			r.order[i] = int32(i)
		}
		slices.SortFunc(r.order, func(a, b int32) int { return strings.Compare(r.names[a], r.names[b]) })
		r.rank = grow(r.rank[:0], n)[:n]
		for place, ti := range r.order {
			r.rank[ti] = int32(place)
		}
	}
	r.sizes = grow(r.sizes[:0], n)[:n]
	for ti := range sizes {
		r.sizes[r.rank[ti]] = sizes[ti]
	}
	copy(sizes, r.sizes)
	for k, ti := range topicOf {
		if ti >= 0 {
			topicOf[k] = r.rank[ti]
		}
	}
	for i := range vanished {
		vanished[i].topic = r.rank[vanished[i].topic]
	}
}

// vanishedEndpoint is an entity whose slot was reused since the previous scan.
type vanishedEndpoint struct {
	snap     int               // in the current scan
	old, now *segment.Endpoint // the slot then and now
	topic    int32
}

func isPubSub(k segment.Kind) bool {
	return k == segment.KindPublisher || k == segment.KindSubscription
}

// slot is a new endpoint's place in the topic's publishers or subscriptions.
func (t *Topic) slot(kind segment.Kind) *EndpointRate {
	if kind == segment.KindPublisher {
		t.Pubs = append(t.Pubs, EndpointRate{})
		return &t.Pubs[len(t.Pubs)-1]
	}
	t.Subs = append(t.Subs, EndpointRate{})
	return &t.Subs[len(t.Subs)-1]
}

// count adds r, an endpoint of the topic (in its slot), to the topic's sums.
func (t *Topic) count(kind segment.Kind, r *EndpointRate) {
	if kind == segment.KindPublisher {
		t.PubHidden = t.PubHidden || (r.PubHidden && r.Alive)
		t.PubInter += r.Inter
		t.PubIntra += r.Intra
		t.PubBytes.AddSide(r.Bytes)
		t.PubAny += max(r.Inter, r.Intra)
		if r.Alive {
			t.PubCount++
			t.PubInterSeen = t.PubInterSeen || r.Total[0] > 0
			t.PubIntraSeen = t.PubIntraSeen || r.Total[1] > 0
		}
		return
	}
	t.RecvInter += r.Inter
	t.RecvIntra += r.Intra
	t.RecvBytes.AddSide(r.Bytes)
	if r.Alive {
		t.SubCount++
		t.RecvSeen = t.RecvSeen || r.Total[0]+r.Total[1] > 0
	}
}

// procOf is the process of a segment snapshot, its node names sorted.
func procOf(s *segment.Snapshot) Proc {
	p := Proc{Pid: s.Pid, OwnPid: s.OwnPid, Start: s.ProcStartTicks, Exe: s.Exe, Cmdline: s.Cmdline, Alive: s.Alive, Distro: s.Distro.String(),
		Path: s.Path, Key: s.Key(), Corrupt: s.Corrupt, Dropped: s.DroppedEndpoints}
	for _, n := range s.Nodes {
		p.Nodes = append(p.Nodes, n.Name)
	}
	sort.Strings(p.Nodes)
	return p
}

// Procs lists the processes of a scan without computing a window (for
// readers that only need who is alive and which nodes it hosts).
func Procs(scan *segment.Scan) []Proc {
	out := make([]Proc, 0, len(scan.Snapshots))
	for _, s := range scan.Snapshots {
		out = append(out, procOf(s))
	}
	return out
}

// State is "alive" or "exited", as logs and summaries print it.
func (p *Proc) State() string {
	if p.Alive {
		return "alive"
	}
	return "exited"
}

// NodeNames joins process node names for display.
func (p *Proc) NodeNames() string { return strings.Join(p.Nodes, ",") }

func seconds(ns uint64) float64 { return float64(ns) / 1e9 }

// sub is a-b for monotonic counters; a decrease (impossible from a sane probe) reads as zero.
func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
