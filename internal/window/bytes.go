package window

import (
	"strconv"

	"ros2_pulse/internal/segment"
)

// How a window's bytes were measured (design note 0033).
const (
	BytesExact   = "exact"   // every message's size is known: a fixed-size type, or serialized messages
	BytesSampled = "sampled" // a variable-size type: the sampled messages' mean size times the count
	BytesNone    = "none"    // messages flowed whose size could not be read (no type support, no sample yet)
)

// Bytes is the traffic of an endpoint, or of a topic's publishers or
// subscriptions, in a window: sizes as serialized (the 4-byte header and
// the CDR body), of the inter-process messages (an intra-process delivery
// moves a pointer). How is "" when the process does not measure bytes
// (ROS_PULSE_BYTES unset), else BytesExact, BytesSampled or BytesNone.
type Bytes struct {
	PerS     float64 // bytes a second
	MeanSize float64 // bytes a message; 0 without messages
	Total    float64 // bytes in the window
	Messages uint64  // the messages they are of
	MaxSize  uint32  // the largest message sized so far (cumulative)
	How      string
}

// Measured reports bytes that are a measurement (exact or sampled).
func (b Bytes) Measured() bool { return b.How == BytesExact || b.How == BytesSampled }

// bytesOf is an endpoint's bytes over its n inter-process messages of the
// window (exposure seconds); base is its reading at the window's start, or
// nil when everything it counted is in the window.
func bytesOf(on bool, e, base *segment.Endpoint, n uint64, exposure float64) Bytes {
	if !on {
		return Bytes{}
	}
	var prev segment.Bytes
	if base != nil {
		prev = base.Bytes
	}
	total, how := BytesDelta(e.Bytes, prev, n)
	out := Bytes{Messages: n, MaxSize: e.Bytes.MaxSize, Total: total, How: how}
	if n > 0 {
		out.MeanSize = total / float64(n)
	}
	if exposure > 0 {
		out.PerS = total / exposure
	}
	return out
}

// BytesDelta is the bytes of an endpoint's n inter-process messages between
// two readings of its sizes (prev zero: from its start), and how they were
// measured: exact sizes as given, the others at its fixed size, else at the
// mean of the samples between the readings, else of all its samples; none
// when messages flowed that nothing sizes.
func BytesDelta(cur, prev segment.Bytes, n uint64) (float64, string) {
	sampled, sampledBytes := sub(cur.Sampled, prev.Sampled), sub(cur.SampledBytes, prev.SampledBytes)
	exact := sub(cur.Exact, prev.Exact)
	total := float64(sub(cur.ExactBytes, prev.ExactBytes))
	typed := n - min(n, exact)
	switch {
	case typed == 0:
		return total, BytesExact
	case cur.Typed && cur.FixedSize > 0:
		return total + float64(typed)*float64(cur.FixedSize), BytesExact
	case cur.Typed && sampled > 0: // samples between the readings
		return total + float64(typed)*float64(sampledBytes)/float64(sampled), BytesSampled
	case cur.Typed && cur.Sampled > 0: // none between them (a slow topic): every sample so far
		return total + float64(typed)*float64(cur.SampledBytes)/float64(cur.Sampled), BytesSampled
	}
	return 0, BytesNone
}

// AddSide sums b, an endpoint of a topic's side (or another window of it),
// into s: exact when every part is, sampled when some are sampled, and not
// measured when messages flowed on a part that could not be sized.
func (s *Bytes) AddSide(b Bytes) {
	if b.How == "" {
		return
	}
	s.PerS += b.PerS
	s.Total += b.Total
	s.Messages += b.Messages
	s.MaxSize = max(s.MaxSize, b.MaxSize)
	switch {
	case s.How == BytesNone || b.How == BytesNone && b.Messages > 0:
		s.How = BytesNone
	case s.How == BytesSampled || b.How == BytesSampled:
		s.How = BytesSampled
	default:
		s.How = BytesExact
	}
	if s.Messages > 0 {
		s.MeanSize = s.Total / float64(s.Messages)
	}
}

// HumanBytes writes a byte count in SI units, three significant digits:
// "512 B", "27.6 MB" (views append "/s" to a rate).
func HumanBytes(v float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	u := 0
	for v >= 999.5 && u < len(units)-1 {
		v /= 1000
		u++
	}
	switch {
	case u == 0:
		return strconv.FormatFloat(v, 'f', 0, 64) + " B"
	case v >= 99.95:
		return strconv.FormatFloat(v, 'f', 0, 64) + " " + units[u]
	case v >= 9.995:
		return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[u]
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + " " + units[u]
}
