package window

import (
	"cmp"
	"slices"

	"ros2_pulse/internal/segment"
)

// Link is one node's latency link over the window (ABI 1.9, design note
// 0032): its callback took a message on From and published on To while
// handling it. Age runs from the input message's source timestamp to the
// publish (the hop's transport and the node's work); Own from the
// callback's start (rclpy: the take) to the publish.
type Link struct {
	Pid   int
	Node  string // the node of the input subscription
	From  string // the input topic
	To    string // the output topic
	Rclpy bool   // linked by rclpy's rule (an awaiting async callback is not seen)
	// Sampled: a timer of the node published from From's latest message
	// (CARET's use_latest_message, design note 0032 rule 3): Age is the
	// best case, from that latest message; Worst from the first message
	// since the previous sample, the longest any input of the cycle waited.
	Sampled bool
	Alive   bool
	N       uint64 // linked publishes in the window
	// Unaged: linked publishes whose input's source timestamp was ahead of
	// this host's clock (another host, clocks apart): not in Age.
	Unaged    uint64
	Age, Own  Durations
	AgeHist   []Bucket // Age by bucket (TimeBucketBounds): what a path adds up
	OwnHist   []Bucket
	Worst     Durations // Sampled only
	WorstHist []Bucket
}

// linksOf diffs a process's links from old (its previous snapshot, nil:
// from zero) to s. A link whose endpoints changed entity since old is new.
func linksOf(s, old *segment.Snapshot) []Link {
	if len(s.Links) == 0 {
		return nil
	}
	out := make([]Link, 0, len(s.Links))
	for i := range s.Links {
		l := &s.Links[i]
		in, pub := segment.FindEndpoint(s.Endpoints, l.Input), segment.FindEndpoint(s.Endpoints, l.Output)
		if in == nil || pub == nil {
			continue
		}
		var prev *segment.Link
		if old != nil {
			prev = priorLink(old, s, l)
		}
		if prev == nil && !s.Alive && l.Count == 0 {
			continue
		}
		wl := Link{Pid: s.Pid, Node: NodeOf(s, in), From: in.Name, To: pub.Name, Rclpy: l.Rclpy, Sampled: l.Sampled, Alive: s.Alive}
		var age, own, worst durAcc
		if prev == nil {
			wl.N, wl.Unaged = l.Count, l.Unaged
			age.add(0, nil, l.AgeSumNs, &l.AgeBuckets)
			own.add(0, nil, l.OwnSumNs, &l.OwnBuckets)
			worst.add(0, nil, l.WorstSumNs, &l.WorstBuckets)
		} else {
			wl.N, wl.Unaged = sub(l.Count, prev.Count), sub(l.Unaged, prev.Unaged)
			age.add(prev.AgeSumNs, &prev.AgeBuckets, l.AgeSumNs, &l.AgeBuckets)
			own.add(prev.OwnSumNs, &prev.OwnBuckets, l.OwnSumNs, &l.OwnBuckets)
			worst.add(prev.WorstSumNs, &prev.WorstBuckets, l.WorstSumNs, &l.WorstBuckets)
		}
		if wl.N == 0 && !s.Alive {
			continue
		}
		wl.Age, wl.Own = age.stats(), own.stats()
		wl.AgeHist, wl.OwnHist = sparse(&age.delta), sparse(&own.delta)
		if l.Sampled {
			wl.Worst, wl.WorstHist = worst.stats(), sparse(&worst.delta)
		}
		out = append(out, wl)
	}
	return out
}

// priorLink is old's reading of link l of s: the same pair, rule and
// entities (their slots not reused since).
func priorLink(old, s *segment.Snapshot, l *segment.Link) *segment.Link {
	for i := range old.Links {
		o := &old.Links[i]
		if o.Input != l.Input || o.Output != l.Output || o.Rclpy != l.Rclpy || o.Sampled != l.Sampled {
			continue
		}
		for _, idx := range [2]int{l.Input, l.Output} {
			a, b := segment.FindEndpoint(old.Endpoints, idx), segment.FindEndpoint(s.Endpoints, idx)
			if a == nil || b == nil || a.Generation != b.Generation {
				return nil
			}
		}
		return o
	}
	return nil
}

// sparse lists a histogram's non-empty buckets.
func sparse(delta *[segment.TimeBuckets]uint64) []Bucket {
	var out []Bucket
	for b, n := range delta {
		if n > 0 {
			out = append(out, Bucket{B: b, N: n})
		}
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sortLinks orders links by input topic, output topic, node and pid, a message link before a sampled one.
func sortLinks(ls []Link) {
	slices.SortFunc(ls, func(a, b Link) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Node, b.Node), cmp.Compare(a.Pid, b.Pid),
			cmp.Compare(b2i(a.Sampled), b2i(b.Sampled)))
	})
}

// HistStats summarises durations given by bucket (a Link's AgeHist) whose
// exact sum is sumMs: what a merged or read-back histogram says.
func HistStats(hist []Bucket, sumMs float64) Durations {
	var delta [segment.TimeBuckets]uint64
	var n uint64
	for _, b := range hist {
		if b.B >= 0 && b.B < segment.TimeBuckets {
			delta[b.B] += b.N
			n += b.N
		}
	}
	return histStats(&delta, nonZero(&delta), n, uint64(sumMs*1e6))
}

// AddLinks folds links of a later window into acc, the same node's link of
// the same pair in the same process adding up (counts, sums, buckets): a
// run's links as one window's. Age and Own are recomputed from the sums.
func AddLinks(acc, links []Link) []Link {
	for i := range links {
		l := &links[i]
		k := slices.IndexFunc(acc, func(o Link) bool {
			return o.Pid == l.Pid && o.Node == l.Node && o.From == l.From && o.To == l.To && o.Rclpy == l.Rclpy && o.Sampled == l.Sampled
		})
		if k < 0 {
			acc = append(acc, Link{Pid: l.Pid, Node: l.Node, From: l.From, To: l.To, Rclpy: l.Rclpy, Sampled: l.Sampled})
			k = len(acc) - 1
		}
		o := &acc[k]
		o.Alive = l.Alive
		o.N += l.N
		o.Unaged += l.Unaged
		o.AgeHist = addBuckets(o.AgeHist, l.AgeHist)
		o.OwnHist = addBuckets(o.OwnHist, l.OwnHist)
		o.Age = HistStats(o.AgeHist, o.Age.SumMs+l.Age.SumMs)
		o.Own = HistStats(o.OwnHist, o.Own.SumMs+l.Own.SumMs)
		if l.Sampled {
			o.WorstHist = addBuckets(o.WorstHist, l.WorstHist)
			o.Worst = HistStats(o.WorstHist, o.Worst.SumMs+l.Worst.SumMs)
		}
	}
	return acc
}
