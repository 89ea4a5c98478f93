package window

import "ros2_pulse/internal/segment"

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
	cur := e.Bytes
	if !on {
		return Bytes{}
	}
	d := cur
	if base != nil {
		b := base.Bytes
		d.SampledBytes, d.Sampled = sub(d.SampledBytes, b.SampledBytes), sub(d.Sampled, b.Sampled)
		d.ExactBytes, d.Exact = sub(d.ExactBytes, b.ExactBytes), sub(d.Exact, b.Exact)
	}
	out := Bytes{Messages: n, MaxSize: cur.MaxSize, Total: float64(d.ExactBytes), How: BytesExact}
	typed := n - min(n, d.Exact)
	switch {
	case typed == 0:
	case cur.Typed && cur.FixedSize > 0:
		out.Total += float64(typed) * float64(cur.FixedSize)
	case cur.Typed && d.Sampled > 0: // this window's samples
		out.Total += float64(typed) * float64(d.SampledBytes) / float64(d.Sampled)
		out.How = BytesSampled
	case cur.Typed && cur.Sampled > 0: // none in this window (a slow topic): every sample so far
		out.Total += float64(typed) * float64(cur.SampledBytes) / float64(cur.Sampled)
		out.How = BytesSampled
	default:
		return Bytes{Messages: n, MaxSize: cur.MaxSize, How: BytesNone}
	}
	if n > 0 {
		out.MeanSize = out.Total / float64(n)
	}
	if exposure > 0 {
		out.PerS = out.Total / exposure
	}
	return out
}

// add sums b, an endpoint of a topic's side, into the side's bytes: the
// side is exact when every endpoint is, sampled when some are sampled, and
// not measured when messages flowed on an endpoint that could not be sized.
func (s *Bytes) add(b Bytes) {
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
