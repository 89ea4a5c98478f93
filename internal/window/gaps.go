package window

import (
	"math"

	"ros2_pulse/internal/segment"
)

// BucketBounds returns the gap range [lo, hi) in nanoseconds of bucket b of
// rp_gap (segment.h): 16 linear buckets of 1024 ns, then 16 per octave. The
// last bucket is open-ended (hi = +Inf).
func BucketBounds(b int) (lo, hi float64) {
	return logLinearBounds(b, 16, segment.GapBuckets)
}

// logLinearBounds is the range [lo, hi) in ns of bucket b of the probe's
// log-linear histograms (segment.h): perOctave linear buckets of 1024 ns,
// then perOctave per octave; the last of n buckets is open-ended.
func logLinearBounds(b, perOctave, n int) (lo, hi float64) {
	lower := func(b int) float64 {
		if b < perOctave {
			return float64(b) * 1024
		}
		return math.Ldexp(float64(perOctave+b%perOctave), b/perOctave-1) * 1024
	}
	lo = lower(b)
	if b >= n-1 {
		return lo, math.Inf(1)
	}
	return lo, lower(b + 1)
}

// GapStats describes the gaps closed in one window (from bucket deltas) and
// the gap still open at its end.
type GapStats struct {
	N                          uint64  // gaps closed in the window
	MeanMs, StddevMs           float64 // from the exact sum; stddev from bucket midpoints
	P50Ms, P90Ms, P99Ms, MaxMs float64 // bucket upper bounds: within 6.25 % above the truth
	MinMs                      float64 // the smallest gap's bucket lower bound: within 6.25 % below
	OpenMs                     float64 // silence at the end of the window ("silent for ...")
	HasData                    bool    // the endpoint has had at least one message
}

// MaxDtMs is the largest gap of the window, the open one included, as in
// upstream's JITTER line: a stall shows while it lasts, not only after.
func (g *GapStats) MaxDtMs() float64 { return math.Max(g.MaxMs, g.OpenMs) }

// gapAcc merges the gap histograms of one or more endpoints over a window.
type gapAcc struct {
	delta [segment.GapBuckets]uint64
	n     uint64
	sumNs uint64
	st    GapStats
}

// add diffs two readings of one endpoint's histogram. prev may be nil (the
// endpoint is new in this window). Buckets wrap modulo 2^32.
func (a *gapAcc) add(prev, cur *segment.Gap, endMono uint64, alive bool) {
	if cur == nil || cur.LastMono == 0 {
		return
	}
	a.st.HasData = true
	if alive && endMono > cur.LastMono {
		a.st.OpenMs = math.Max(a.st.OpenMs, float64(endMono-cur.LastMono)/1e6)
	}
	sum := cur.SumNs
	if prev != nil {
		sum -= prev.SumNs
	}
	a.sumNs += sum
	for b := range a.delta {
		d := cur.Buckets[b]
		if prev != nil {
			d -= prev.Buckets[b] // modular: right across one wrap
		}
		a.delta[b] += uint64(d)
		a.n += uint64(d)
	}
}

// stats turns the merged histogram into the window's gap statistics.
func (a *gapAcc) stats() GapStats {
	st := a.st
	st.N = a.n
	if a.n == 0 {
		return st
	}
	mean := float64(a.sumNs) / float64(a.n)
	st.MeanMs = mean / 1e6
	var sq float64
	st.MinMs = -1
	for b, d := range a.delta {
		if d == 0 {
			continue
		}
		lo, hi := BucketBounds(b)
		if st.MinMs < 0 {
			st.MinMs = lo / 1e6
		}
		if math.IsInf(hi, 1) {
			hi = lo
		}
		mid := (lo + hi) / 2
		sq += float64(d) * (mid - mean) * (mid - mean)
		st.MaxMs = hi / 1e6
	}
	st.StddevMs = math.Sqrt(sq/float64(a.n)) / 1e6
	quantile := func(q float64) float64 {
		target := uint64(math.Ceil(q * float64(a.n)))
		var acc uint64
		for b, d := range a.delta {
			if acc += d; acc >= target {
				lo, hi := BucketBounds(b)
				if math.IsInf(hi, 1) {
					return lo / 1e6
				}
				return hi / 1e6
			}
		}
		return st.MaxMs
	}
	st.P50Ms, st.P90Ms, st.P99Ms = quantile(0.5), quantile(0.9), quantile(0.99)
	return st
}
