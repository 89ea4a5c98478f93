package window

import (
	"cmp"
	"slices"
	"strings"
)

// Path is one end-to-end path over the window (issue 47): a chain of
// topics, each hop a node's latency link from one to the next. internal/paths
// finds them (from the links, and named in the spec) and fills these.
type Path struct {
	Name   string   // the spec's name, or "FIRST -> LAST" for a path found from the links
	Named  bool     // named in the spec (checked against MaxMs); else found
	Topics []string // first topic (a sensor's) ... last (an actuator's)
	Hops   []Hop    // len(Topics)-1: hop i links Topics[i] to Topics[i+1]
	// Measured: every hop has a link that carried messages in the window;
	// else Missing names the first hop that did not ("FROM -> TO") and
	// the latencies are not measured (zero), never a guess.
	Measured bool
	Missing  string
	N        uint64 // messages linked at its last hop in the window
	// Latency from the first topic's message leaving its publisher (its
	// source timestamp) to the last hop's publish, in ms. Best: through
	// message links (CARET's best case); Worst adds the waiting at sampled
	// links (a timer publishing the latest input), equal to Best without
	// them. The distribution is the hops' added as independent (each hop's
	// mean is exact, so the path's mean is); Max is the sum of the hops'
	// maxima, a bound no message exceeded.
	Best, Worst Latency
	MaxMs       float64 // the spec's bound (0: none)
}

// Hop is one link of a path: the node(s) that carried From to To.
type Hop struct {
	From, To string
	Node     string // the linking node ("a, b" when several link the pair)
	N        uint64
	Age      Durations // source timestamp of From's message to To's publish
	Own      Durations // the node's own share: its callback's start to the publish
	Sampled  bool      // a sampled link carried it: its worst case (Worst) adds the cycle's waiting
	Measured bool      // a link carried messages with an age in the window
	AgeHist  []Bucket  // Age by bucket (its links' added): what a path's latency adds up
	// The worst case: a sampled link's ages from its cycle's first message,
	// a message link's own ages (equal to Age without sampled links).
	Worst     Durations
	WorstHist []Bucket
}

// HopsOf is the hops of a path through topics, from a window's links: each
// hop every link of its pair adds up (several nodes or processes may link
// one pair), an exited process's only for what it linked in the window.
func HopsOf(topics []string, links []Link) []Hop {
	hops := make([]Hop, 0, max(len(topics)-1, 0))
	for i := 0; i+1 < len(topics); i++ {
		h := Hop{From: topics[i], To: topics[i+1]}
		var ageSum, ownSum, worstSum float64
		var own []Bucket
		var nodes []string
		var unaged uint64
		for k := range links {
			l := &links[k]
			if l.From != h.From || l.To != h.To || !l.Alive && l.N == 0 {
				continue
			}
			if !slices.Contains(nodes, l.Node) {
				nodes = append(nodes, l.Node)
			}
			h.N += l.N
			unaged += l.Unaged
			ageSum += l.Age.SumMs
			ownSum += l.Own.SumMs
			h.AgeHist = addBuckets(h.AgeHist, l.AgeHist)
			own = addBuckets(own, l.OwnHist)
			if l.Sampled {
				h.Sampled = true
				worstSum += l.Worst.SumMs
				h.WorstHist = addBuckets(h.WorstHist, l.WorstHist)
			} else {
				worstSum += l.Age.SumMs
				h.WorstHist = addBuckets(h.WorstHist, l.AgeHist)
			}
		}
		h.Node = strings.Join(nodes, ", ")
		h.Measured = h.N > unaged
		h.Age, h.Own = HistStats(h.AgeHist, ageSum), HistStats(own, ownSum)
		h.Worst = HistStats(h.WorstHist, worstSum)
		hops = append(hops, h)
	}
	return hops
}

// addBuckets adds src's counts into dst (bucket order kept).
func addBuckets(dst, src []Bucket) []Bucket {
	for _, b := range src {
		k, found := slices.BinarySearchFunc(dst, b.B, func(x Bucket, t int) int { return cmp.Compare(x.B, t) })
		if found {
			dst[k].N += b.N
		} else {
			dst = slices.Insert(dst, k, b)
		}
	}
	return dst
}

// Latency is a path's end-to-end latency distribution in one window, ms.
type Latency struct {
	MeanMs, P50Ms, P99Ms, MaxMs float64
}

// Slow reports a named path whose p99 is above its bound.
func (p *Path) Slow() bool { return p.Named && p.Measured && p.MaxMs > 0 && p.Worst.P99Ms > p.MaxMs }
