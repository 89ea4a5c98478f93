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
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"ros2_pulse/internal/cpu"
	"ros2_pulse/internal/diagnose"
	"ros2_pulse/internal/health"
	"ros2_pulse/internal/segment"
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
