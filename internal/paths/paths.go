// Package paths finds a window's end-to-end paths (issue 47, design note
// 0032): chains of topics whose every hop is a node's latency link
// (window.Link), found from the links (sensor topics, which no link
// outputs, to actuator topics, which no link takes) and named in the spec
// (`paths:`), with each path's latency distribution over the window.
package paths

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// MaxFound bounds the paths found from the links in one window: a graph of
// many branches has more source-to-sink chains than anyone reads.
const MaxFound = 64

// Fill sets w.Paths: the spec's named paths first, in its order, then the
// paths found from w.Links, by first and last topic.
func Fill(w *window.Window, rules []spec.PathRule) {
	w.Paths = Of(w.Links, rules)
}

// Of returns the named and found paths of one window's links.
func Of(links []window.Link, rules []spec.PathRule) []window.Path {
	if len(links) == 0 && len(rules) == 0 {
		return nil
	}
	var out []window.Path
	for _, r := range rules {
		p := build(r.Via, links)
		p.Name, p.Named, p.MaxMs = r.Name, true, r.MaxMs
		out = append(out, p)
	}
	// Paths are found through message links only: a timer's sampled link
	// says only that its node had that input, which a node publishing
	// diagnostics on a timer has too; a named path may go through one.
	messages := slices.DeleteFunc(slices.Clone(links), func(l window.Link) bool { return l.Sampled })
	found := chains(messages)
	ends := map[string]int{}
	for _, chain := range found {
		ends[chain[0]+" -> "+chain[len(chain)-1]]++
	}
	for _, chain := range found {
		p := build(chain, messages)
		if p.Name = chain[0] + " -> " + chain[len(chain)-1]; ends[p.Name] > 1 {
			p.Name = strings.Join(chain, " -> ") // two chains between the same ends: named by their topics
		}
		out = append(out, p)
	}
	return out
}

// chains lists the topic chains from every source (a topic no link
// outputs) to every sink (one no link takes), each topic at most once a
// chain, in source then sink order, at most MaxFound.
func chains(links []window.Link) [][]string {
	next := map[string][]string{}
	outputs := map[string]bool{}
	for i := range links {
		l := &links[i]
		if (l.Alive || l.N > 0) && !slices.Contains(next[l.From], l.To) {
			next[l.From] = append(next[l.From], l.To)
			outputs[l.To] = true
		}
	}
	var sources []string
	for from := range next {
		if !outputs[from] {
			sources = append(sources, from)
		}
	}
	slices.Sort(sources)
	for _, n := range next {
		slices.Sort(n)
	}
	var out [][]string
	var walk func(chain []string)
	walk = func(chain []string) {
		if len(out) >= MaxFound {
			return
		}
		last := chain[len(chain)-1]
		if len(next[last]) == 0 {
			out = append(out, slices.Clone(chain))
			return
		}
		for _, to := range next[last] {
			if !slices.Contains(chain, to) { // a feedback loop ends the chain where it would close
				walk(append(chain, to))
			} else if len(chain) > 1 {
				out = append(out, slices.Clone(chain))
			}
		}
	}
	for _, s := range sources {
		walk([]string{s})
	}
	return out
}

// build makes the path through topics: its hops from the links, and its
// latency when every hop carried messages.
func build(topics []string, links []window.Link) window.Path {
	p := window.Path{Topics: topics, Measured: true, Hops: window.HopsOf(topics, links)}
	best := make([][]point, 0, len(p.Hops))
	sampled := false
	for _, h := range p.Hops {
		if !h.Measured {
			p.Measured, p.Missing = false, h.From+" -> "+h.To
			return p
		}
		best = append(best, distribution(h.AgeHist, h.Age.MeanMs))
		sampled = sampled || h.Sampled
	}
	p.N = p.Hops[len(p.Hops)-1].N
	p.Best = latency(best)
	for _, h := range p.Hops {
		p.Best.MaxMs += topBound(h.Age)
	}
	p.Worst = p.Best // without sampled links the worst case waits nowhere more
	if sampled {
		worst := make([][]point, 0, len(p.Hops))
		for _, h := range p.Hops {
			worst = append(worst, distribution(h.WorstHist, h.Worst.MeanMs))
		}
		p.Worst = latency(worst)
		for _, h := range p.Hops {
			p.Worst.MaxMs += topBound(h.Worst)
		}
	}
	return p
}

// topBound is the upper bound of a hop's highest bucket of d, ms: no message
// of the window took longer on it.
func topBound(d window.Durations) float64 {
	return d.MaxMs * 1.125 // MaxMs is its bucket's lower bound or the mean; a bucket spans 1/8 of its lower bound
}

// point is one value of a latency distribution and its probability.
type point struct{ v, p float64 }

// distribution is a hop's ages as points: each bucket's middle, scaled so
// their mean is the hop's exact mean (a path's mean is then exact too).
func distribution(hist []window.Bucket, meanMs float64) []point {
	var pts []point
	var n, mean float64
	for _, x := range hist {
		b, c := x.B, x.N
		lo, hi := window.TimeBucketBounds(b)
		v := (lo + hi) / 2e6
		if math.IsInf(hi, 1) {
			v = lo / 1e6
		}
		pts = append(pts, point{v, float64(c)})
		n += float64(c)
		mean += v * float64(c)
	}
	if n == 0 {
		return nil
	}
	scale := 1.0
	if mean > 0 && meanMs > 0 {
		scale = meanMs / (mean / n)
	}
	for i := range pts {
		pts[i].v *= scale
		pts[i].p /= n
	}
	return pts
}

// latency adds the hops' distributions as independent (a convolution,
// re-binned to 1/1000 of its range so its size stays bounded) and reads
// the mean, p50 and p99.
func latency(dists [][]point) window.Latency {
	sum := []point{{0, 1}}
	for _, d := range dists {
		if len(d) == 0 {
			continue
		}
		next := make([]point, 0, len(sum)*len(d))
		for _, a := range sum {
			for _, b := range d {
				next = append(next, point{a.v + b.v, a.p * b.p})
			}
		}
		sum = rebin(next)
	}
	var l window.Latency
	for _, pt := range sum {
		l.MeanMs += pt.v * pt.p
	}
	l.P50Ms, l.P99Ms = quantile(sum, 0.5), quantile(sum, 0.99)
	return l
}

// rebin merges points closer than 1/1000 of the range into their weighted mean.
func rebin(pts []point) []point {
	slices.SortFunc(pts, func(a, b point) int { return cmp.Compare(a.v, b.v) })
	width := (pts[len(pts)-1].v - pts[0].v) / 1000
	out := pts[:0]
	for _, pt := range pts {
		if k := len(out) - 1; k >= 0 && pt.v-out[k].v <= width {
			w := out[k].p + pt.p
			out[k].v = (out[k].v*out[k].p + pt.v*pt.p) / w
			out[k].p = w
			continue
		}
		out = append(out, pt)
	}
	return out
}

// quantile is the smallest value whose cumulative probability reaches q.
func quantile(pts []point, q float64) float64 {
	acc := 0.0
	for _, pt := range pts {
		acc += pt.p
		if acc >= q-1e-9 {
			return pt.v
		}
	}
	return pts[len(pts)-1].v
}
