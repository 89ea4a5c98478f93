// Package export turns the segments of this machine into Prometheus
// metrics (`pulse export`). The probe's counters are cumulative and
// monotonic, which is exactly Prometheus's counter model: the exporter only
// reads and labels them, and Prometheus does the rate math.
//
// Counting rules (docs/design/0008-prometheus-export.md):
//   - Per endpoint (the default), a counter is the probe's own cumulative
//     count: a restart of the exporter neither resets nor loses it. An
//     exited process's series stay for Retain, so its last counts are
//     scraped, then go (and its segment is removed).
//   - Per topic (--per-topic), a counter is the sum over the topic's
//     endpoints of what they counted since this exporter first saw them
//     (from their creation when they are younger), plus what endpoints that
//     have gone had counted: a process exit never makes it go down; an
//     exporter restart is a counter reset, which rate() handles.
package export

import (
	"io"
	"math"
	"ros2_pulse/internal/compat"
	"ros2_pulse/internal/diagnose"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"ros2_pulse/internal/cpu"
	"ros2_pulse/internal/health"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// Options shape the exporter.
type Options struct {
	Dir      string
	PerTopic bool // aggregate per topic instead of per endpoint
	// NoHistograms leaves out the gap and latency histograms, most of a
	// robot's series once gap tracking is on (docs/PERFORMANCE.md §6); their
	// spec verdicts and the last message's age stay.
	NoHistograms bool
	Retain       time.Duration // keep an exited process's series this long (negative: forever, never remove)
	ProcRoot     string        // "" for /proc
	Version      string
	Warn         io.Writer // where Empty is said
	Empty        string    // said once when a scrape finds no probed process
}

const ns = "ros2_pulse"

var (
	endpointLabels = []string{"topic", "node", "pid", "side", "transport"}
	topicLabels    = []string{"topic", "side", "transport"}
	gapEndpoint    = []string{"topic", "node", "pid", "side"}
	gapTopic       = []string{"topic", "side"}
)

// descs are the metric families, one per idea.
type descs struct {
	messages, published, gap, latency, lastAge, nodeUp, procUp, procs, cpuSec, rss, timerFires, timerPeriod, build         *prometheus.Desc
	ruleOK, ruleUnjudgeable, specMin, specMax, dropped, starved, unmatched, endpointInfo                                   *prometheus.Desc
	callbackDuration, timerLateness, timerOverruns, threadBusy, threadWait, wakeups                                        *prometheus.Desc
	serviceRequests, serviceResponses, serviceAbandoned, serviceResponse, serviceOutstanding, serviceOldest, serverMissing *prometheus.Desc

	serviceSendFailed *prometheus.Desc // ABI 1.8
	bytes             *prometheus.Desc // ROS_PULSE_BYTES=1 (design note 0033)
}

// desc is the family ros2_pulse_<name>.
func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(ns+"_"+name, help, labels, nil)
}

func newDescs(perTopic bool) descs {
	msgL, gapL, pubL := endpointLabels, gapEndpoint, []string{"topic", "node", "pid"}
	if perTopic {
		msgL, gapL, pubL = topicLabels, gapTopic, []string{"topic"}
	}
	d := desc
	return descs{
		messages:    d("messages_total", "Messages published (side=pub, at rcl_publish or rclcpp_intra_publish) or delivered to a callback (side=recv), by transport.", msgL...),
		published:   d("published_messages_total", "Messages a publisher sent, each once whatever its transports (the larger of its inter and intra counts): what each subscription on this machine should receive, for loss.", pubL...),
		gap:         d("message_gap_seconds", "Time between consecutive messages of an endpoint (gap tracking on: ROS_TOPIC_STATS_JITTER=1).", gapL...),
		latency:     d("message_latency_seconds", "Receive latency of a subscription: take time minus the message's source timestamp (ROS_TOPIC_STATS_LATENCY=1; exact on one host, across hosts as good as their clock sync).", gapL...),
		lastAge:     d("last_message_age_seconds", "Seconds since the last message of an endpoint or topic side (exact with gap tracking, else at scrape resolution).", gapL...),
		nodeUp:      d("node_up", "1 while the node's process is alive, 0 once it has exited (kept for the retention time).", "node", "pid"),
		procUp:      d("process_up", "1 while a probed process is alive, 0 once it has exited.", "pid", "exe"),
		procs:       d("processes", "Probed processes by state.", "state"),
		cpuSec:      d("process_cpu_seconds_total", "User and system CPU time of a probed process.", "pid", "nodes"),
		rss:         d("process_resident_memory_bytes", "Resident memory of a probed process.", "pid", "nodes"),
		timerFires:  d("timer_fires_total", "Callbacks of an rclcpp timer.", "node", "pid", "timer"),
		timerPeriod: d("timer_period_seconds", "Configured period of an rclcpp timer.", "node", "pid", "timer"),
		build:       d("build_info", "pulse's version.", "version", "goversion"),
		ruleOK: d("spec_rule_ok", "1 when the spec rule held in the last judged window, 0 when it was violated (kind rate, gap, latency, loss, node, timer, timer_late, timer_overrun, callback: topic is the rule's topic or node, busy, service: topic is the service and side server or client, action: topic is the action, path: topic is the path's name).",
			"kind", "topic", "side", "transport", "node", "timer"),
		ruleUnjudgeable: d("spec_rule_unjudgeable", "1 when a spec rule cannot be judged (a max_gap_ms rule without gap data).", "kind", "topic", "side", "transport", "node", "timer"),
		specMin:         d("spec_min_hz", "The spec's min_hz for a topic side and transport.", "topic", "side", "transport"),
		specMax:         d("spec_max_hz", "The spec's max_hz for a topic side and transport.", "topic", "side", "transport"),
		dropped:         d("dropped_endpoints_total", "Endpoints a process could not fit in its segment (ROS_PULSE_MAX_ENDPOINTS).", "pid"),
		callbackDuration: d("callback_duration_seconds", "How long each callback ran, callback_start to callback_end (rclcpp; rclpy's callbacks fire neither: no series). name is the topic or service, timer the timer's ordinal in its node.",
			"kind", "name", "node", "pid", "timer"),
		timerLateness: d("timer_lateness_seconds", "How late each call of a timer came against its own schedule (rcl's expected call time; rclcpp and rclpy).", "node", "pid", "timer"),
		timerOverruns: d("timer_overruns_total", "Callbacks of a timer that ran longer than its period.", "node", "pid", "timer"),
		wakeups: d("process_wakeups_total", "Callbacks and takes the probe saw in a process (deliveries, timer fires, service requests): rate(process_cpu_seconds_total) over rate() of this is the CPU a wake-up costs, recorded as ros2_pulse_cpu_seconds_per_message.",
			"pid", "nodes"),
		threadBusy: d("thread_busy_seconds_total", "Time a thread spent inside its outermost callbacks (one running now counts up to the scrape; rclcpp: threads that ran a callback): rate() is the thread's busy ratio.",
			"pid", "tid", "thread"),
		threadWait: d("thread_wait_seconds_total", "Time a thread spent inside rcl_wait (one waiting now counts up to the scrape; any client library's executor threads): 1 - rate() is its share outside the wait, working.",
			"pid", "tid", "thread"),
		unmatched: d("endpoint_unmatched", "1 for a live publisher or subscription that meets nobody on this machine, with why (qos_incompatible, type_mismatch, other_domain, other_rmw, discovery_range, no_publisher), and for a starved subscription (subscription_starved 1) whose only publishers here run another DDS vendor's RMW, with its likely cause (cross_vendor: ROS 2 does not guarantee communication between different DDS vendors; run both sides with one RMW_IMPLEMENTATION); absent otherwise.",
			"topic", "node", "pid", "side", "reason"),
		endpointInfo: d("endpoint_info", "1 per live publisher and subscription, labelled with what the probe learnt at its creation: message type, rmw implementation, domain and the actual QoS.",
			"topic", "node", "pid", "side", "type", "rmw", "domain", "reliability", "durability", "history", "depth", "deadline", "liveliness", "lease"),
		serviceRequests: d("service_requests_total", "Service calls by any client library (ABI 1.6): side=server, requests its server took (rcl_take_request); side=client, requests its client sent (rcl_send_request). action parts are services named <action>/_action/send_goal, get_result, cancel_goal.",
			callLabels...),
		serviceResponses: d("service_responses_total", "Service calls answered: side=server, responses sent for a request it took; side=client, responses taken for a call it sent. requests - responses is what is still open or was never answered.",
			callLabels...),
		serviceAbandoned: d("service_abandoned_total", "Calls still unanswered when 32 newer calls had been made (the probe stops waiting for them: never answered, or answered too late to be matched).",
			callLabels...),
		serviceSendFailed: d("service_send_failed_total", "Responses a server could not send (ABI 1.8, side=server only): rcl_send_response refused them (RCL_RET_TIMEOUT on Fast DDS: the client went away before the answer; rclcpp and rclpy warn and move on). Their calls are closed, neither answered nor outstanding, and not in service_response_seconds.",
			callLabels...),
		serviceResponse: d("service_response_seconds", "Time of each answered call: side=server, from taking the request to sending its response (handling); side=client, from sending the request to taking its response (round trip).",
			callLabels...),
		serviceOutstanding: d("service_outstanding", "Calls open now: side=server, requests taken and not yet answered; side=client, requests sent and not yet answered (at most 32 are tracked).",
			callLabels...),
		serviceOldest: d("service_oldest_outstanding_seconds", "Age of the oldest call open now (0 when none): a client's call past its timeout has timed out.",
			callLabels...),
		serverMissing: d("service_server_missing", "1 for a live client whose service no live process on this machine serves (a server on another host is not seen), else 0.",
			"service", "node", "pid"),
		bytes: d("bytes_total", "Bytes of an endpoint's inter-process messages as serialized (4-byte header and CDR body; ROS_PULSE_BYTES=1): side=pub sent, side=recv received. Exact for fixed-size types and serialized messages, else the sampled messages' mean size times the count; no series where no type support could size them. rate() is the bandwidth.",
			gapL...),
		starved: d("subscription_starved", "For a live subscription that has received nothing yet: 1 once this machine's publishers of its topic have published since the exporter first saw it (a QoS, type, domain, rmw or name mismatch, or publishers only on another DDS vendor's RMW: endpoint_unmatched names the cause where it is visible), else 0.",
			"topic", "node", "pid"),
	}
}

// series is one exported value's history in per-topic mode, or for
// unwrapping 32-bit histogram buckets and tracking the last change.
type series struct {
	base    []float64  // what the endpoint had counted when first seen (per-topic baseline)
	last    []float64  // the last reading, unwrapped
	raw     []uint32   // the last raw 32-bit buckets, for unwrapping
	changed time.Time  // when the count last changed, as seen at scrapes
	agg     *aggregate // per topic: the aggregate it feeds (its kind and labels)
	scrape  uint64     // the last scrape that read it
}

// Collector is a prometheus.Collector over a segment directory.
type Collector struct {
	opt     Options
	d       descs
	started uint64 // CLOCK_MONOTONIC when the exporter started

	mu        sync.Mutex
	reader    *segment.Reader
	cpu       *cpu.Reader
	seen      map[string]*series    // by segment key + endpoint + side
	gone      map[string]*aggregate // per topic: what vanished endpoints had counted
	scrape    uint64                // scrapes so far: series not read in this one are gone
	diagnosis diagnose.Memo         // why endpoints meet nobody, recomputed when the graph changes
	pending   map[string]*merged    // this scrape's per-endpoint series, merged by labels
	order     []string
	verdicts  *verdicts
	empty     segment.EmptyNotice
	// silentSubs: for each subscription seen with nothing received, what its
	// topic's publishers here had published when it was first seen so.
	silentSubs map[string]silentSub
	starvedNow []starvedSub // this scrape's starved subscriptions, for their cause
	lf         linkFamilies // latency links and paths (links.go)
	bytesSeen  map[string]*bytesSeries
	paths      pathGauges
}

// starvedSub is a subscription whose starved gauge is 1 in this scrape.
type starvedSub struct {
	topic, node string
	pid         int
}

type silentSub struct {
	published uint64
	scrape    uint64
}

// New returns a collector over opt.Dir.
func New(opt Options) (*Collector, error) {
	r, err := cpu.NewReader(opt.ProcRoot)
	if err != nil {
		return nil, err
	}
	reader := segment.NewReader(opt.Dir)
	reader.Retain(opt.Retain, true) // its last counts were scraped for Retain; per-topic sums keep them; ended runs go too
	return &Collector{opt: opt, d: newDescs(opt.PerTopic), lf: linkDescs(), started: segment.NowMono(), reader: reader, cpu: r,
		seen: map[string]*series{}, gone: map[string]*aggregate{}, pending: map[string]*merged{},
		empty: segment.EmptyNotice{Msg: opt.Empty}, silentSubs: map[string]silentSub{}, bytesSeen: map[string]*bytesSeries{}}, nil
}

// Close releases the segment mappings.
func (c *Collector) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reader.Close()
}

// Describe sends every family's descriptor.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.d.messages, c.d.published, c.d.gap, c.d.latency, c.d.lastAge, c.d.nodeUp, c.d.procUp, c.d.procs, c.d.cpuSec, c.d.rss,
		c.d.timerFires, c.d.timerPeriod, c.d.build, c.d.ruleOK, c.d.ruleUnjudgeable, c.d.specMin, c.d.specMax, c.d.dropped, c.d.starved, c.d.unmatched, c.d.endpointInfo,
		c.d.callbackDuration, c.d.timerLateness, c.d.timerOverruns, c.d.threadBusy, c.d.threadWait, c.d.wakeups,
		c.d.serviceRequests, c.d.serviceResponses, c.d.serviceAbandoned, c.d.serviceResponse, c.d.serviceOutstanding, c.d.serviceOldest, c.d.serverMissing,
		c.d.serviceSendFailed, c.d.bytes, c.lf.age, c.lf.own, c.lf.pathLatency, c.lf.pathBound} {
		ch <- d
	}
}

// sides are the count slots of an endpoint, by transport.
var sides = [2]struct{ transport string }{{"inter"}, {"intra"}}

// sideOf names an endpoint's side.
func sideOf(k segment.Kind) string {
	if k == segment.KindPublisher {
		return "pub"
	}
	return "recv"
}

// Collect scans the directory once and sends every metric.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	emit(ch, c.d.build, prometheus.GaugeValue, 1, time.Time{}, c.opt.Version, runtime.Version())
	c.scrape++
	scan, err := c.reader.Scan()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.d.procs, err)
		return
	}
	c.empty.Observe(scan, c.opt.Warn)
	c.verdicts.collect(c, ch)
	c.collectPaths(ch)
	published := window.PublishedByTopic(scan)
	served := servedHere(scan)
	alive, exited := 0, 0
	aggs := map[string]*aggregate{}
	for _, s := range scan.Snapshots { // exited longer than Retain ago: left out by the reader (and removed)
		if s.Alive {
			alive++
		} else {
			exited++
		}
		c.process(ch, s, scan.Mono, now, aggs, published, served)
	}
	if !c.opt.PerTopic { // why a publisher or subscription meets nobody (per endpoint by nature)
		unmatched := c.diagnosis.Unmatched(scan)
		for _, f := range unmatched {
			if f.Error {
				side := "recv"
				if f.Pub {
					side = "pub"
				}
				c.merge(c.d.unmatched, prometheus.GaugeValue, 1, nil, time.Time{}, f.Topic, f.Node, strconv.Itoa(f.Pid), side, f.Reason)
			}
		}
		for _, ss := range c.starvedNow { // a starved one whose only publishers are on another DDS vendor: that is its likely cause
			if u, ok := health.StarvedCauseIn(scan, unmatched, ss.topic, ss.node, ss.pid); ok && !u.Error {
				c.merge(c.d.unmatched, prometheus.GaugeValue, 1, nil, time.Time{}, ss.topic, ss.node, strconv.Itoa(ss.pid), "recv", u.Reason)
			}
		}
	}
	c.starvedNow = c.starvedNow[:0]
	for id, ss := range c.silentSubs {
		if ss.scrape != c.scrape {
			delete(c.silentSubs, id) // it received something, or it is gone
		}
	}
	c.flush(ch)
	emit(ch, c.d.procs, prometheus.GaugeValue, float64(alive), time.Time{}, "alive")
	emit(ch, c.d.procs, prometheus.GaugeValue, float64(exited), time.Time{}, "exited")
	// Series that are gone (their segment aged out, or their slot went to a
	// new entity): per topic, what they counted stays.
	for k, st := range c.seen {
		if st.scrape == c.scrape {
			continue
		}
		if a := st.agg; a != nil {
			g := c.gone[a.key]
			if g == nil {
				g = &aggregate{key: a.key, kind: a.kind, labels: a.labels, ageS: math.NaN()}
				c.gone[a.key] = g
			}
			for i, v := range st.last {
				for len(g.vals) <= i {
					g.vals = append(g.vals, 0)
				}
				g.vals[i] += v - st.baseAt(i)
			}
		}
		delete(c.seen, k)
	}
	for k, b := range c.bytesSeen {
		if b.scrape != c.scrape {
			delete(c.bytesSeen, k)
		}
	}
	if c.opt.PerTopic {
		c.emitAggregates(ch, aggs)
	}
}

func (st *series) baseAt(i int) float64 {
	if i < len(st.base) {
		return st.base[i]
	}
	return 0
}

// aggregate collects one per-topic series during a scan.
type aggregate struct {
	key    string
	kind   string // "msg", "pub", "gap", "latency" or "age"
	labels []string
	vals   []float64 // counter: [count]; gap: [count, sum, buckets...]
	ageS   float64   // smallest age of the side's endpoints; NaN when unknown
}

// track records a reading of an endpoint value and returns its series.
func (c *Collector) track(id string, vals []float64, preexisting bool, agg *aggregate, now time.Time) *series {
	st := c.seen[id]
	if st == nil {
		st = &series{agg: agg}
		if preexisting { // counted before we looked: per topic counts from now
			st.base = append([]float64(nil), vals...)
		}
		c.seen[id] = st
	} else if len(st.last) > 0 && vals[0] != st.last[0] {
		st.changed = now
	}
	st.last = append(st.last[:0], vals...)
	st.scrape = c.scrape
	return st
}

// process sends one segment's metrics, or adds them to the per-topic aggregates.
func (c *Collector) process(ch chan<- prometheus.Metric, s *segment.Snapshot, mono uint64, now time.Time, aggs map[string]*aggregate,
	published map[string]uint64, served map[string]bool) {
	pid := strconv.Itoa(s.Pid)
	up := 0.0
	if s.Alive {
		up = 1
	}
	procNodes := make([]string, 0, len(s.Nodes))
	for _, n := range s.Nodes {
		procNodes = append(procNodes, n.Name)
		emit(ch, c.d.nodeUp, prometheus.GaugeValue, up, time.Time{}, n.Name, pid)
	}
	sort.Strings(procNodes)
	nodesLabel := strings.Join(procNodes, ",")
	emit(ch, c.d.procUp, prometheus.GaugeValue, up, time.Time{}, pid, s.Exe)
	emit(ch, c.d.dropped, prometheus.CounterValue, float64(s.DroppedEndpoints), time.Time{}, pid)
	if s.Alive {
		if r, err := c.cpu.Read(s.Pid, s.ProcStartTicks); err == nil {
			emit(ch, c.d.cpuSec, prometheus.CounterValue, r.CPUSeconds, time.Time{}, pid, nodesLabel)
			emit(ch, c.d.wakeups, prometheus.CounterValue, float64(window.SnapshotWakeups(s)), time.Time{}, pid, nodesLabel)
			emit(ch, c.d.rss, prometheus.GaugeValue, float64(r.RSSBytes), time.Time{}, pid, nodesLabel)
		}
	}
	preexisting := s.StartMono < c.started
	key := s.Key()
	if s.Alive && !c.opt.PerTopic {
		c.threads(ch, s, mono, pid)
	}
	created := func(e *segment.Endpoint) time.Time {
		return time.Unix(0, int64(s.StartReal+(e.CreatedMono-min(e.CreatedMono, s.StartMono))))
	}
	c.links(s, key, pid, preexisting, created)
	timerOrd := map[int]int{}
	hidden := window.IntraDelivered(s) // Humble: publishers whose intra-process publishes no tracepoint sees
	for i := range s.Endpoints {
		e := &s.Endpoints[i]
		node := window.NodeOf(s, e)
		if e.Kind != segment.KindPublisher && !e.Retired() && !c.opt.PerTopic {
			c.timing(e, key, node, pid, timerOrd[e.Node], created(e), preexisting)
			c.calls(e, key, node, pid, mono, s.Alive, created(e), preexisting, served)
		}
		if e.Kind == segment.KindTimer {
			ord := strconv.Itoa(timerOrd[e.Node])
			timerOrd[e.Node]++
			emit(ch, c.d.timerFires, prometheus.CounterValue, float64(e.Counts[segment.SlotInter]), created(e), node, pid, ord)
			emit(ch, c.d.timerPeriod, prometheus.GaugeValue, float64(e.Aux)/1e9, time.Time{}, node, pid, ord)
			continue
		}
		if e.Kind != segment.KindPublisher && e.Kind != segment.KindSubscription || e.Retired() || window.IsBuiltin(e.Name) {
			continue
		}
		side := sideOf(e.Kind)
		id := key + "#" + strconv.Itoa(e.Index) + "." + strconv.FormatUint(uint64(e.Generation), 10) // a reused slot is another entity
		if q := e.QoS; q != nil && s.Alive && !c.opt.PerTopic {
			c.merge(c.d.endpointInfo, prometheus.GaugeValue, 1, nil, time.Time{}, infoLabels(e.Name, node, pid, side, q)...)
		}
		ages := math.NaN()
		pubHidden := e.Kind == segment.KindPublisher && hidden[e.Name]
		recvHidden := window.RecvHidden(s, e)
		if e.Kind == segment.KindSubscription && s.Alive && !recvHidden && !c.opt.PerTopic &&
			e.Counts[segment.SlotInter]+e.Counts[segment.SlotIntra] == 0 {
			ss, ok := c.silentSubs[id]
			if !ok {
				ss.published = published[e.Name]
			}
			ss.scrape = c.scrape
			c.silentSubs[id] = ss
			starved := 0.0
			if published[e.Name] > ss.published {
				starved = 1
				c.starvedNow = append(c.starvedNow, starvedSub{e.Name, node, s.Pid})
			}
			c.merge(c.d.starved, prometheus.GaugeValue, starved, nil, time.Time{}, e.Name, node, pid)
		}
		for slot, sd := range sides {
			if pubHidden || recvHidden {
				break // not measured on this distro: no series, never a zero
			}
			v := float64(e.Counts[slot])
			if v == 0 && slot != segment.SlotInter {
				continue // an intra series appears once intra has counted: half the series on most robots
			}
			var agg *aggregate
			if c.opt.PerTopic {
				agg = getAgg(aggs, "msg", e.Name, side, sd.transport)
			}
			st := c.track(id+"."+sd.transport, []float64{v}, preexisting, agg, now)
			if !st.changed.IsZero() {
				ages = minNaN(ages, now.Sub(st.changed).Seconds())
			}
			if agg != nil {
				agg.vals[0] += v - st.baseAt(0)
				continue
			}
			c.merge(c.d.messages, prometheus.CounterValue, v, nil, created(e), e.Name, node, pid, side, sd.transport)
		}
		if e.Kind == segment.KindPublisher && !pubHidden {
			v := float64(max(e.Counts[segment.SlotInter], e.Counts[segment.SlotIntra]))
			var agg *aggregate
			if c.opt.PerTopic {
				agg = getAgg(aggs, "pub", e.Name)
			}
			st := c.track(id+".published", []float64{v}, preexisting, agg, now)
			if agg != nil {
				agg.vals[0] += v - st.baseAt(0)
			} else {
				c.merge(c.d.published, prometheus.CounterValue, v, nil, created(e), e.Name, node, pid)
			}
		}
		if total, ok := c.bytesTotal(s, e, id); ok {
			var agg *aggregate
			if c.opt.PerTopic {
				agg = getAgg(aggs, "bytes", e.Name, side)
			}
			st := c.track(id+".bytes", []float64{total}, preexisting, agg, now)
			if agg != nil {
				agg.vals[0] += total - st.baseAt(0)
			} else {
				c.merge(c.d.bytes, prometheus.CounterValue, total, nil, created(e), e.Name, node, pid, side)
			}
		}
		if e.Gap != nil && e.Gap.LastMono != 0 {
			ages = float64(mono-min(mono, e.Gap.LastMono)) / 1e9 // exact: the probe's own clock
		}
		for _, h := range []struct {
			kind string
			desc *prometheus.Desc
			g    *segment.Gap
		}{{"gap", c.d.gap, e.Gap}, {"latency", c.d.latency, e.Latency}} {
			if h.g == nil || c.opt.NoHistograms {
				continue
			}
			vals, st := c.gapValues(id+"."+h.kind, h.g, preexisting)
			if c.opt.PerTopic {
				a := getAgg(aggs, h.kind, e.Name, side)
				st.agg = a
				for i, v := range vals {
					for len(a.vals) <= i {
						a.vals = append(a.vals, 0)
					}
					a.vals[i] += v - st.baseAt(i)
				}
			} else {
				c.merge(h.desc, prometheus.UntypedValue, 0, vals, created(e), e.Name, node, pid, side)
			}
		}
		if !math.IsNaN(ages) {
			if c.opt.PerTopic {
				a := getAgg(aggs, "age", e.Name, side)
				a.ageS = minNaN(a.ageS, ages)
			} else {
				c.merge(c.d.lastAge, prometheus.GaugeValue, ages, nil, time.Time{}, e.Name, node, pid, side)
			}
		}
	}
}

func minNaN(a, b float64) float64 {
	if math.IsNaN(a) || b < a {
		return b
	}
	return a
}

// getAgg returns this scan's aggregate of kind for labels.
func getAgg(aggs map[string]*aggregate, kind string, labels ...string) *aggregate {
	key := kind + "\x00" + strings.Join(labels, "\x00")
	a := aggs[key]
	if a == nil {
		a = &aggregate{key: key, kind: kind, labels: labels, ageS: math.NaN()}
		if kind == "msg" || kind == "pub" || kind == "bytes" {
			a.vals = []float64{0}
		}
		aggs[key] = a
	}
	return a
}

// gapValues reads an endpoint's gap or latency histogram (histValues).
func (c *Collector) gapValues(id string, g *segment.Gap, preexisting bool) ([]float64, *series) {
	return c.histValues(id, g.Buckets[:], g.SumNs, preexisting)
}

// histValues reads a probe histogram as [count, sum seconds, bucket
// counts...], unwrapping the probe's 32-bit buckets against the last reading.
func (c *Collector) histValues(id string, buckets []uint32, sumNs uint64, preexisting bool) ([]float64, *series) {
	st := c.seen[id]
	n := len(buckets)
	vals := make([]float64, 2+n)
	if st == nil {
		st = &series{raw: make([]uint32, n), last: make([]float64, 2+n)}
		c.seen[id] = st
		for b, v := range buckets {
			vals[2+b] = float64(v)
		}
	} else {
		for b, v := range buckets {
			vals[2+b] = st.last[2+b] + float64(v-st.raw[b]) // modular difference: right across a wrap
		}
	}
	st.scrape = c.scrape
	copy(st.raw, buckets)
	for b := 0; b < n; b++ {
		vals[0] += vals[2+b]
	}
	vals[1] = float64(sumNs) / 1e9
	if preexisting && st.base == nil {
		st.base = append([]float64(nil), vals...)
	}
	st.last = append(st.last[:0], vals...)
	return vals, st
}

// emitAggregates sends the per-topic series, with what vanished endpoints
// counted; a topic whose endpoints are all gone keeps its last counts, so a
// later publisher never makes its counter go down.
func (c *Collector) emitAggregates(ch chan<- prometheus.Metric, aggs map[string]*aggregate) {
	for key, g := range c.gone {
		a := aggs[key]
		if a == nil {
			a = &aggregate{key: key, kind: g.kind, labels: g.labels, ageS: math.NaN()}
			aggs[key] = a
		}
		for i, v := range g.vals {
			for len(a.vals) <= i {
				a.vals = append(a.vals, 0)
			}
			a.vals[i] += v
		}
	}
	keys := make([]string, 0, len(aggs))
	for k := range aggs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a := aggs[k]
		switch a.kind {
		case "msg":
			emit(ch, c.d.messages, prometheus.CounterValue, a.vals[0], time.Time{}, a.labels...)
		case "pub":
			emit(ch, c.d.published, prometheus.CounterValue, a.vals[0], time.Time{}, a.labels...)
		case "bytes":
			emit(ch, c.d.bytes, prometheus.CounterValue, a.vals[0], time.Time{}, a.labels...)
		case "gap", "latency":
			desc := c.d.gap
			if a.kind == "latency" {
				desc = c.d.latency
			}
			if len(a.vals) == 2+segment.GapBuckets {
				ch <- gapHistogram(desc, a.vals, time.Time{}, a.labels...)
			}
		case "age":
			if !math.IsNaN(a.ageS) {
				emit(ch, c.d.lastAge, prometheus.GaugeValue, a.ageS, time.Time{}, a.labels...)
			}
		}
	}
}

// emit sends one metric. Label values from a segment are whatever a process
// wrote: invalid UTF-8 is replaced, so one hostile name cannot fail a scrape.
// merged is one series of a scrape that several endpoints may share: two
// publishers of one topic in one node (legal in ROS) have the same labels,
// and a family may hold each label set once. Counters and histograms add
// up; the age gauge keeps the youngest.
type merged struct {
	desc    *prometheus.Desc
	vt      prometheus.ValueType
	v       float64
	hist    []float64 // a histogram (vals as histValues reads them): gap or latency, else timing when timing is set
	timing  bool
	created time.Time
	labels  []string
}

// merge adds an endpoint's sample to this scrape's series of its labels.
func (c *Collector) merge(d *prometheus.Desc, vt prometheus.ValueType, v float64, hist []float64, created time.Time, labels ...string) {
	key := d.String() + "\x00" + joinLabels(labels)
	m := c.pending[key]
	if m == nil {
		c.pending[key] = &merged{desc: d, vt: vt, v: v, hist: append([]float64(nil), hist...), created: created, labels: labels}
		c.order = append(c.order, key)
		return
	}
	switch {
	case hist != nil:
		for i := range hist {
			if i < len(m.hist) {
				m.hist[i] += hist[i]
			}
		}
	case vt == prometheus.GaugeValue:
		m.v = math.Min(m.v, v)
	default:
		m.v += v
	}
	if !created.IsZero() && (m.created.IsZero() || created.Before(m.created)) {
		m.created = created
	}
}

func joinLabels(labels []string) string { return strings.Join(labels, "\x00") }

// flush sends this scrape's merged series.
func (c *Collector) flush(ch chan<- prometheus.Metric) {
	for _, key := range c.order {
		m := c.pending[key]
		if m.hist != nil && m.timing {
			ch <- timingHistogram(m.desc, m.hist, m.created, m.labels...)
		} else if m.hist != nil {
			ch <- gapHistogram(m.desc, m.hist, m.created, m.labels...)
		} else {
			emit(ch, m.desc, m.vt, m.v, m.created, m.labels...)
		}
	}
	c.pending, c.order = map[string]*merged{}, c.order[:0]
}

func emit(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v float64, created time.Time, labels ...string) {
	for i, l := range labels {
		if !utf8.ValidString(l) {
			labels[i] = strings.ToValidUTF8(l, "\uFFFD")
		}
	}
	var m prometheus.Metric
	var err error
	if created.IsZero() {
		m, err = prometheus.NewConstMetric(d, t, v, labels...)
	} else {
		m, err = prometheus.NewConstMetricWithCreatedTimestamp(d, t, v, created, labels...)
	}
	if err != nil {
		return // never fail a scrape for one series
	}
	ch <- m
}

// verdicts holds the latest spec verdicts, judged by a recorder loop.
type verdicts struct {
	mu     sync.Mutex
	spec   *spec.Spec
	warns  []health.Warning
	judged bool
}

// SetVerdicts stores the warnings of the last judged window (the recorder's
// OnWindow hook calls it).
func (c *Collector) SetVerdicts(s *spec.Spec, warns []health.Warning) {
	c.mu.Lock()
	if c.verdicts == nil {
		c.verdicts = &verdicts{spec: s}
	}
	v := c.verdicts
	c.mu.Unlock()
	v.mu.Lock()
	v.warns, v.judged = warns, true
	v.mu.Unlock()
}

// collect sends one series per spec rule: ok (1/0) or unjudgeable, and the bounds.
func (v *verdicts) collect(c *Collector, ch chan<- prometheus.Metric) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.judged {
		return
	}
	bad, unjudgeable := map[string]bool{}, map[string]bool{}
	for _, w := range v.warns {
		switch w.Kind {
		case health.TopicRate:
			bad[ruleKey("rate", w.Topic, string(w.Side), string(w.Transport), "", "")] = true
		case health.TopicGap:
			bad[ruleKey("gap", w.Topic, string(w.Side), string(w.Transport), "", "")] = true
		case health.TopicLatency:
			bad[ruleKey("latency", w.Topic, string(w.Side), string(w.Transport), "", "")] = true
		case health.TopicLoss:
			bad[ruleKey("loss", w.Topic, string(w.Side), string(w.Transport), "", "")] = true
		case health.TopicBytes:
			bad[ruleKey("bytes", w.Topic, string(w.Side), string(w.Transport), "", "")] = true
		case health.TopicMissing:
			for _, kind := range []string{"rate", "gap", "latency", "loss", "bytes"} {
				bad[ruleKey(kind, w.Topic, string(w.Side), string(w.Transport), "", "")] = true
			}
		case health.CallbackSlow: // the rule names the callback's topic or its node
			bad[ruleKey("callback", w.Topic, "", "", "", "")] = true
			bad[ruleKey("callback", w.Node, "", "", "", "")] = true
		case health.TimerLate, health.TimerOverrun:
			kind := map[health.Kind]string{health.TimerLate: "timer_late", health.TimerOverrun: "timer_overrun"}[w.Kind]
			bad[ruleKey(kind, "", "", "", w.Node, timerLabel(w.Timer))] = true
			bad[ruleKey(kind, "", "", "", w.Node, "any")] = true
		case health.NodeBusy:
			bad[ruleKey("busy", "", "", "", w.Node, "")] = true
		case health.ServiceRate, health.ServiceSlow, health.ServiceTimeout, health.ServiceBacklog, health.ServiceMissing:
			bad[ruleKey("service", w.Topic, string(w.Side), "", "", "")] = true // side: server or client
		case health.ActionSlow:
			bad[ruleKey("action", w.Topic, "", "", "", "")] = true
		case health.PathSlow:
			bad[ruleKey("path", w.Topic, "", "", "", "")] = true
		case health.CannotJudge:
			switch w.Metric {
			case "service":
				unjudgeable[ruleKey("service", w.Topic, string(w.Side), "", "", "")] = true
				continue
			case "callback":
				unjudgeable[ruleKey("callback", w.Topic, "", "", "", "")] = true
				continue
			case "busy":
				unjudgeable[ruleKey("busy", "", "", "", w.Node, "")] = true
				continue
			case "timer_late", "timer_overrun":
				unjudgeable[ruleKey(w.Metric, "", "", "", w.Node, timerLabel(w.Timer))] = true
				unjudgeable[ruleKey(w.Metric, "", "", "", w.Node, "any")] = true
				continue
			}
			if w.Metric == "timer" {
				unjudgeable[ruleKey("timer", "", "", "", w.Node, timerLabel(w.Timer))] = true
			} else {
				unjudgeable[ruleKey(w.Metric, w.Topic, string(w.Side), string(w.Transport), "", "")] = true
			}
		case health.NodeMissing:
			bad[ruleKey("node", "", "", "", w.Node, "")] = true
		case health.TimerRate:
			bad[ruleKey("timer", "", "", "", w.Node, timerLabel(w.Timer))] = true
			bad[ruleKey("timer", "", "", "", w.Node, "any")] = true
		}
	}
	rule := func(kind, topic, side, transport, node, timer string) {
		k := ruleKey(kind, topic, side, transport, node, timer)
		if unjudgeable[k] {
			emit(ch, c.d.ruleUnjudgeable, prometheus.GaugeValue, 1, time.Time{}, kind, topic, side, transport, node, timer)
			return
		}
		ok := 1.0
		if bad[k] {
			ok = 0
		}
		emit(ch, c.d.ruleOK, prometheus.GaugeValue, ok, time.Time{}, kind, topic, side, transport, node, timer)
	}
	for _, r := range v.spec.Topics {
		side, tr := string(r.Side), string(r.Transport)
		if r.HasRate() {
			rule("rate", r.Topic, side, tr, "", "")
			emit(ch, c.d.specMin, prometheus.GaugeValue, r.MinHz, time.Time{}, r.Topic, side, tr)
			if !math.IsInf(r.MaxHz, 1) {
				emit(ch, c.d.specMax, prometheus.GaugeValue, r.MaxHz, time.Time{}, r.Topic, side, tr)
			}
		}
		if r.HasGap() {
			rule("gap", r.Topic, side, tr, "", "")
		}
		if r.HasLatency() {
			rule("latency", r.Topic, side, tr, "", "")
		}
		if r.HasLoss() {
			rule("loss", r.Topic, side, tr, "", "")
		}
		if r.HasBytes() {
			rule("bytes", r.Topic, side, tr, "", "")
		}
	}
	for _, n := range v.spec.Nodes {
		rule("node", "", "", "", n, "")
	}
	for _, r := range v.spec.Timers {
		if r.MinHz > 0 {
			rule("timer", "", "", "", r.Node, timerLabel(r.Ordinal))
		}
		if !math.IsInf(r.MaxLateMs, 1) {
			rule("timer_late", "", "", "", r.Node, timerLabel(r.Ordinal))
		}
		if !math.IsInf(r.MaxOverruns, 1) {
			rule("timer_overrun", "", "", "", r.Node, timerLabel(r.Ordinal))
		}
	}
	for _, r := range v.spec.Callbacks {
		rule("callback", r.Name, "", "", "", "")
	}
	for _, r := range v.spec.NodeRules {
		rule("busy", "", "", "", r.Node, "")
	}
	for _, r := range v.spec.Services {
		rule("service", r.Name, r.Side(), "", "", "")
	}
	for _, r := range v.spec.Actions {
		rule("action", r.Name, "", "", "", "")
	}
	for _, r := range v.spec.Paths {
		if r.MaxMs > 0 {
			rule("path", r.Name, "", "", "", "")
		}
	}
}

func timerLabel(ord int) string {
	if ord < 0 {
		return "any"
	}
	return strconv.Itoa(ord)
}

func ruleKey(parts ...string) string {
	out := ""
	for _, p := range parts {
		out += p + "\x00"
	}
	return out
}

// classicBounds are the classic buckets of the gap histogram: every octave
// of the probe's own bucket bounds from ~1 ms to ~17 s (exact bounds, so no
// observation is split), 15 series per endpoint instead of 384.
var classicBounds = func() map[int]bool {
	m := map[int]bool{}
	for b := 16 * 7; b <= 16*22; b += 16 { // bucket 16k starts at 2^(k+3) * 1024 ns
		m[b-1] = true // the bucket ending where octave k begins
	}
	return m
}()

// gapHistogram is one gap histogram with classic buckets (classicBounds) and
// a native (sparse, schema 4) one, so a Prometheus with native histograms on
// gets the probe's resolution.
func gapHistogram(desc *prometheus.Desc, vals []float64, created time.Time, labels ...string) prometheus.Metric {
	return histogram(desc, vals, window.BucketBounds, classicBounds, created, labels...)
}

// histogram builds a histogram metric from histValues' vals, the probe's
// bucket bounds and which of its buckets end a classic bucket.
func histogram(desc *prometheus.Desc, vals []float64, bounds func(int) (float64, float64), classicAt map[int]bool,
	created time.Time, labels ...string) prometheus.Metric {
	count := uint64(vals[0])
	sum := vals[1]
	classic := map[float64]uint64{}
	native := map[int]int64{}
	var cum uint64
	for b := 0; b < len(vals)-2; b++ {
		n := uint64(vals[2+b])
		cum += n
		lo, hi := bounds(b)
		if classicAt[b] {
			classic[hi/1e9] = cum
		}
		if n > 0 {
			// The native bucket of this bucket's midpoint (the last bucket is
			// open-ended: just above its lower bound; the first starts at 0).
			mid := (lo + hi) / 2
			if math.IsInf(hi, 1) {
				mid = lo * 1.01
			}
			native[nativeIndex(mid/1e9)] += int64(n)
		}
	}
	for i, l := range labels {
		labels[i] = strings.ToValidUTF8(l, "\uFFFD")
	}
	cl, err := prometheus.NewConstHistogramWithCreatedTimestamp(desc, count, sum, classic, created, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(desc, err)
	}
	nat, err := prometheus.NewConstNativeHistogram(desc, count, sum, native, nil, 0, 4, 0, created, labels...)
	if err != nil {
		return cl
	}
	return &bothHistograms{classic: cl, native: nat}
}

// nativeIndex is the schema-4 bucket of v > 0: upper bound 2^(i/16) >= v.
func nativeIndex(v float64) int {
	return int(math.Ceil(math.Log2(v) * 16))
}

// bothHistograms writes one histogram with classic buckets and native spans.
type bothHistograms struct{ classic, native prometheus.Metric }

func (b *bothHistograms) Desc() *prometheus.Desc { return b.classic.Desc() }

func (b *bothHistograms) Write(out *dto.Metric) error {
	var n dto.Metric
	if err := b.native.Write(&n); err != nil {
		return err
	}
	if err := b.classic.Write(out); err != nil {
		return err
	}
	h := out.Histogram
	h.Schema, h.ZeroThreshold, h.ZeroCount = n.Histogram.Schema, n.Histogram.ZeroThreshold, n.Histogram.ZeroCount
	h.PositiveSpan, h.PositiveDelta = n.Histogram.PositiveSpan, n.Histogram.PositiveDelta
	return nil
}

// infoLabels are an endpoint_info series' labels: "" for what is unknown.
func infoLabels(topic, node, pid, side string, q *segment.QoS) []string {
	domain := ""
	if q.Domain >= 0 {
		domain = strconv.Itoa(q.Domain)
	}
	l := []string{topic, node, pid, side, q.Type, q.RMW, domain, "", "", "", "", "", "", ""}
	if q.Actual {
		l[7], l[8], l[9] = compat.Reliability(q.Reliability), compat.Durability(q.Durability), compat.History(q.History)
		l[10], l[11], l[12], l[13] = strconv.FormatUint(uint64(q.Depth), 10), compat.Duration(q.DeadlineNs), compat.Liveliness(q.Liveliness), compat.Duration(q.LeaseNs)
	}
	return l
}

// bytesSeries keeps an endpoint's bytes counter monotonic: each scrape adds
// the bytes of the messages counted since the last, at that interval's
// sizes (window.BytesDelta), so a changing sampled mean never lowers it.
type bytesSeries struct {
	prev     segment.Bytes
	n        uint64 // inter-process messages at the last scrape
	total    float64
	measured bool
	scrape   uint64
}

// bytesTotal is endpoint e's bytes since it started, and whether any could
// be measured (bytes on, its type read).
func (c *Collector) bytesTotal(s *segment.Snapshot, e *segment.Endpoint, id string) (float64, bool) {
	if !s.BytesOn {
		return 0, false
	}
	b := c.bytesSeen[id]
	if b == nil {
		b = &bytesSeries{}
		c.bytesSeen[id] = b
	}
	n := e.Counts[segment.SlotInter]
	if d, how := window.BytesDelta(e.Bytes, b.prev, n-min(n, b.n)); how != window.BytesNone {
		b.total += d
		b.measured = true
	}
	b.prev, b.n, b.scrape = e.Bytes, n, c.scrape
	return b.total, b.measured
}
