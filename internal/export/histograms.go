package export

import (
	"math"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

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
