package segment

import (
	"slices"
	"unsafe"
)

// Link is one input linked to one output in a process (see rp_link in
// segment.h, design note 0032): a subscription's callback published on a
// publisher while handling a message it took. Records of one pair (two
// threads may claim one at once) are added together. Counts are monotonic;
// bucket counts wrap modulo 2^32 (readers diff them).
type Link struct {
	Input, Output int  // endpoint indices (Endpoint.Index) of the subscription and the publisher
	Rclpy         bool // linked by rclpy's rule: the publishes after a take on its thread, until its next take, wait, timer call or service take
	// Sampled: a timer of the input's node published from the input's
	// latest message (CARET's use_latest_message); AgeBuckets then hold the
	// best case (the latest message's age), WorstBuckets the worst (the age
	// of the first message since the previous sample).
	Sampled  bool
	Count    uint64 // linked publishes: the sum of OwnBuckets
	Unaged   uint64 // of them, with no age (the input's source timestamp was ahead of this host's clock)
	AgeSumNs uint64
	OwnSumNs uint64
	// AgeBuckets: from the input message's source timestamp to the publish
	// (CLOCK_REALTIME; its transport and the node's work). OwnBuckets: from
	// the callback's start (rclpy: the take) to the publish, the node's own
	// share. Both in the TimeBuckets scheme.
	AgeBuckets   [TimeBuckets]uint32
	OwnBuckets   [TimeBuckets]uint32
	WorstSumNs   uint64
	WorstBuckets [TimeBuckets]uint32 // Sampled only
}

// readLinks reads every READY link whose two endpoints are still the
// entities it linked (the same generations, in snap.Endpoints), one Link a
// pair. A record being claimed, or claimed by a writer that died before
// publishing it, is skipped.
func readLinks(mem []byte, sec *rawSection, snap *Snapshot) []Link {
	type entity struct {
		gen  uint32
		kind Kind
	}
	eps := make(map[int]entity, len(snap.Endpoints))
	for i := range snap.Endpoints {
		eps[snap.Endpoints[i].Index] = entity{snap.Endpoints[i].Generation, snap.Endpoints[i].Kind}
	}
	var out []Link
	for i := uint32(0); i < sec.Count; i++ {
		r := (*rawLink)(unsafe.Pointer(&mem[sec.Offset+uint64(i)*sec.Stride]))
		switch load32(&r.State) {
		case RecordEmpty:
			return out // claimed in table order: nothing after an empty record
		case RecordReady:
		default:
			continue
		}
		in, outp := int(r.Input), int(r.Output)
		ei, ok1 := eps[in]
		eo, ok2 := eps[outp]
		if r.Kind != LinkMessage && r.Kind != LinkSampled || !ok1 || !ok2 || ei.gen != r.InputGeneration ||
			eo.gen != r.OutputGeneration || ei.kind != KindSubscription || eo.kind != KindPublisher {
			continue // a later kind, entities gone, or a record that does not hold what it says
		}
		rclpy, sampled := r.Flags&LinkFlagRclpy != 0, r.Kind == LinkSampled
		k := slices.IndexFunc(out, func(l Link) bool {
			return l.Input == in && l.Output == outp && l.Rclpy == rclpy && l.Sampled == sampled
		})
		if k < 0 {
			out = append(out, Link{Input: in, Output: outp, Rclpy: rclpy, Sampled: sampled})
			k = len(out) - 1
		}
		l := &out[k]
		l.Unaged += load64(&r.Unaged)
		l.AgeSumNs += load64(&r.AgeSumNs)
		l.OwnSumNs += load64(&r.OwnSumNs)
		for b := range l.OwnBuckets {
			own := load32(&r.OwnBuckets[b])
			l.OwnBuckets[b] += own
			l.AgeBuckets[b] += load32(&r.AgeBuckets[b])
			l.Count += uint64(own)
		}
		if sampled {
			l.WorstSumNs += load64(&r.WorstSumNs)
			for b := range l.WorstBuckets {
				l.WorstBuckets[b] += load32(&r.WorstBuckets[b])
			}
		}
	}
	return out
}
