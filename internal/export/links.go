package export

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// Latency links and end-to-end paths (ABI 1.9, issue 47).
//
// Each link's two histograms are the probe's own cumulative buckets, as the
// callback durations are: link_age_seconds (the input message's source
// timestamp to the publish it caused: the hop's transport and the node's
// work) and link_own_seconds (the callback's start to the publish). A
// path's latency is not a sum of counters Prometheus could add (its
// quantiles are a convolution), so path_latency_seconds is a summary of the
// last window the recorder judged: its p50 and p99 and count, with
// path_bound_seconds beside a named path's bound. The mean of a path, though,
// is the sum of its hops' means: the recording rules in
// deploy/prometheus add those up.

func linkDescs() linkFamilies {
	d, l := desc, []string{"from", "to", "node", "pid"}
	return linkFamilies{
		age: d("link_age_seconds", "Latency links (ROS_PULSE_LINKS=1): from the source timestamp of a message a callback took on topic from to each publish it made on topic to (the hop's transport plus the node's work; across hosts as good as their clock sync).", l...),
		own: d("link_own_seconds", "Latency links: from the start of the callback that took a message on from (rclpy: the take) to each publish it made on to: the node's own share.", l...),
		pathLatency: d("path_latency_seconds", "End-to-end latency of a path (its first topic's message sent to its last hop's publish) in the last judged window: the hops' latencies added as independent. Named paths come from the spec, others are found from the links (sensor topics to actuator topics).",
			"path", "named"),
		pathBound: d("path_bound_seconds", "The spec's max_ms of a named path, in seconds.", "path"),
	}
}

type linkFamilies struct {
	age, own, pathLatency, pathBound *prometheus.Desc
}

// links adds a process's link histograms to this scrape, created when its input was.
func (c *Collector) links(s *segment.Snapshot, key, pid string, preexisting bool, created func(*segment.Endpoint) time.Time) {
	if c.opt.NoHistograms || c.opt.PerTopic {
		return
	}
	for i := range s.Links {
		l := &s.Links[i]
		in, out := segment.FindEndpoint(s.Endpoints, l.Input), segment.FindEndpoint(s.Endpoints, l.Output)
		if in == nil || out == nil || l.Sampled {
			continue // a timer's sampled link: in the paths' worst case, not in the message links' histograms
		}
		node := window.NodeOf(s, in)
		id := key + "#link." + strconv.Itoa(in.Index) + "." + strconv.FormatUint(uint64(in.Generation), 10) + "." +
			strconv.Itoa(out.Index) + "." + strconv.FormatUint(uint64(out.Generation), 10) + "." + strconv.FormatBool(l.Rclpy)
		vals, _ := c.histValues(id+".age", l.AgeBuckets[:], l.AgeSumNs, preexisting)
		c.mergeTiming(c.lf.age, vals, created(in), in.Name, out.Name, node, pid)
		vals, _ = c.histValues(id+".own", l.OwnBuckets[:], l.OwnSumNs, preexisting)
		c.mergeTiming(c.lf.own, vals, created(in), in.Name, out.Name, node, pid)
	}
}

// pathGauges holds the last judged window's paths (the recorder's).
type pathGauges struct {
	mu    sync.Mutex
	paths []window.Path
}

// SetPaths stores the paths of the last judged window (the recorder's
// OnWindow hook calls it, with SetVerdicts).
func (c *Collector) SetPaths(ps []window.Path) {
	c.paths.mu.Lock()
	c.paths.paths = ps
	c.paths.mu.Unlock()
}

// collectPaths sends each measured path's summary, and each named path's bound.
func (c *Collector) collectPaths(ch chan<- prometheus.Metric) {
	c.paths.mu.Lock()
	defer c.paths.mu.Unlock()
	for _, p := range c.paths.paths {
		if p.Named && p.MaxMs > 0 {
			emit(ch, c.lf.pathBound, prometheus.GaugeValue, p.MaxMs/1e3, time.Time{}, p.Name)
		}
		if !p.Measured {
			continue // not measured: no series, never a 0
		}
		m, err := prometheus.NewConstSummary(c.lf.pathLatency, p.N, p.Worst.MeanMs*float64(p.N)/1e3,
			map[float64]float64{0.5: p.Worst.P50Ms / 1e3, 0.99: p.Worst.P99Ms / 1e3}, p.Name, strconv.FormatBool(p.Named))
		if err == nil {
			ch <- m
		}
	}
}
