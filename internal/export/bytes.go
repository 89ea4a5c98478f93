package export

import (
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// bytesSeries keeps an endpoint's bytes counter monotonic: each scrape adds
// the bytes of the messages counted since the last, at that interval's
// sizes (window.BytesDelta), so a changing sampled mean never lowers it.
type bytesSeries struct {
	prev     segment.Bytes
	n        uint64 // inter-process messages at the last scrape
	total    float64
	measured bool
	scrape   uint64
}

// bytesTotal is endpoint e's bytes since it started, and whether any could
// be measured (bytes on, its type read).
func (c *Collector) bytesTotal(s *segment.Snapshot, e *segment.Endpoint, id string) (float64, bool) {
	if !s.BytesOn {
		return 0, false
	}
	b := c.bytesSeen[id]
	if b == nil {
		b = &bytesSeries{}
		c.bytesSeen[id] = b
	}
	n := e.Counts[segment.SlotInter]
	if d, how := window.BytesDelta(e.Bytes, b.prev, n-min(n, b.n)); how != window.BytesNone {
		b.total += d
		b.measured = true
	}
	b.prev, b.n, b.scrape = e.Bytes, n, c.scrape
	return b.total, b.measured
}
