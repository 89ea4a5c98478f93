package export

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// timingClassic are the classic buckets of the timing histograms: one per
// decade from 100 µs to 10 s, each at the probe's own bucket edge just below
// the decade (so no observation is split), 6 series per histogram beside
// +Inf, sum and count. Timing is on in every process by default, so its
// buckets are what a robot's series count grows by: a decade is what an
// alert needs (late by more than a 10 ms period, a callback over 100 ms); the
// native histogram, one series where Prometheus has native histograms on,
// keeps the probe's full resolution (docs/PERFORMANCE.md §6).
var timingClassic = func() map[int]bool {
	m := map[int]bool{}
	for decade := 1e5; decade <= 1e10; decade *= 10 {
		for b := 1; b < segment.TimeBuckets; b++ {
			if lo, _ := window.TimeBucketBounds(b); lo > decade {
				m[b-2] = true // bucket b-2 ends at lo(b-1), the last edge at or below the decade
				break
			}
		}
	}
	return m
}()

func timingHistogram(desc *prometheus.Desc, vals []float64, created time.Time, labels ...string) prometheus.Metric {
	return histogram(desc, vals, window.TimeBucketBounds, timingClassic, created, labels...)
}

var callbackKinds = map[segment.Kind]string{segment.KindSubscription: "subscription", segment.KindTimer: "timer", segment.KindService: "service"}

// timing adds an endpoint's callback durations (rclcpp), a timer's lateness
// and overruns to this scrape. A subscription of a builtin topic, and a
// service that has handled nothing yet (every node has six), add nothing;
// --histograms=false leaves out the histograms, not the overruns.
func (c *Collector) timing(e *segment.Endpoint, key, node, pid string, timerOrd int, created time.Time, preexisting bool) {
	if e.Timing == nil {
		return
	}
	kind, name, timer := callbackKinds[e.Kind], e.Name, ""
	if e.Kind == segment.KindTimer {
		name, timer = "", strconv.Itoa(timerOrd)
	}
	if e.Kind == segment.KindSubscription && window.IsBuiltin(e.Name) {
		return
	}
	id := key + "#" + strconv.Itoa(e.Index) + "." + strconv.FormatUint(uint64(e.Generation), 10)
	if e.Flags&segment.FlagRclcpp != 0 && !c.opt.NoHistograms {
		vals, _ := c.histValues(id+".callback", e.Timing.Buckets[:], e.Timing.SumNs, preexisting)
		if vals[0] > 0 || e.Kind != segment.KindService {
			c.mergeTiming(c.d.callbackDuration, vals, created, kind, name, node, pid, timer)
		}
	}
	if e.Lateness == nil {
		return
	}
	if !c.opt.NoHistograms {
		vals, _ := c.histValues(id+".late", e.Lateness.Buckets[:], e.Lateness.SumNs, preexisting)
		c.mergeTiming(c.d.timerLateness, vals, created, node, pid, timer)
	}
	if e.Flags&segment.FlagRclcpp != 0 { // rclpy's callbacks are not timed: no overrun series, never a 0
		c.merge(c.d.timerOverruns, prometheus.CounterValue, float64(e.Timing.Overruns), nil, created, node, pid, timer)
	}
}

func (c *Collector) mergeTiming(d *prometheus.Desc, vals []float64, created time.Time, labels ...string) {
	c.merge(d, prometheus.UntypedValue, 0, vals, created, labels...)
	c.pending[d.String()+"\x00"+joinLabels(labels)].timing = true
}

// threads sends each thread's busy time, a callback running now included,
// where it ran callbacks the probe times (rclpy's threads never do: no busy
// series, never a 0), and its time inside rcl_wait where it waits.
func (c *Collector) threads(ch chan<- prometheus.Metric, s *segment.Snapshot, mono uint64, pid string) {
	for i := range s.Threads {
		th := &s.Threads[i]
		tid := strconv.Itoa(th.Tid)
		if th.Callbacks > 0 || th.OpenNs != 0 {
			emit(ch, c.d.threadBusy, prometheus.CounterValue, float64(th.BusyAt(mono))/1e9, time.Time{}, pid, tid, th.Name)
		}
		if th.Waiter() {
			emit(ch, c.d.threadWait, prometheus.CounterValue, float64(th.WaitAt(mono))/1e9, time.Time{}, pid, tid, th.Name)
		}
	}
}
