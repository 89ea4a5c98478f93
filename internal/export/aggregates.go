package export

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"ros2_pulse/internal/segment"
)

// aggregate collects one per-topic series during a scan.
type aggregate struct {
	key    string
	kind   string // "msg", "pub", "gap", "latency" or "age"
	labels []string
	vals   []float64 // counter: [count]; gap: [count, sum, buckets...]
	ageS   float64   // smallest age of the side's endpoints; NaN when unknown
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

func minNaN(a, b float64) float64 {
	if math.IsNaN(a) || b < a {
		return b
	}
	return a
}
