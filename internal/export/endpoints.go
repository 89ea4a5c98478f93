package export

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"ros2_pulse/internal/compat"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

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
