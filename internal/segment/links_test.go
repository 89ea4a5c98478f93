package segment

import (
	"testing"
	"unsafe"
)

// withLinks appends a links section (ABI 1.9) in the header's extension
// places to a segment from build, with records recs.
func withLinks(mem []byte, recs []rawLink) []byte {
	h := (*rawHeader)(unsafe.Pointer(&mem[0]))
	off := (uint64(len(mem)) + 63) &^ 63
	count := h.EndpointCapacity
	total := off + uint64(count)*uint64(unsafe.Sizeof(rawLink{}))
	out := aligned(make([]byte, total))
	copy(out, mem)
	h = (*rawHeader)(unsafe.Pointer(&out[0]))
	h.TotalSize, h.AbiMinor = total, ABIMinor
	h.ExtSections[h.ExtSectionCount] = rawSection{SectionLinks, count, off, uint64(unsafe.Sizeof(rawLink{}))}
	h.ExtSectionCount++
	for i, r := range recs {
		*(*rawLink)(unsafe.Pointer(&out[off+uint64(i)*uint64(unsafe.Sizeof(rawLink{}))])) = r
	}
	return out
}

// linkRec is a READY message link from endpoint in to out with n publishes in one bucket of each histogram.
func linkRec(in, out uint32, n uint32) rawLink {
	r := rawLink{State: RecordReady, Kind: LinkMessage, Input: in, Output: out, AgeSumNs: uint64(n) * 3_000_000, OwnSumNs: uint64(n) * 1_000_000}
	r.AgeBuckets[40], r.OwnBuckets[24] = n, n
	return r
}

// A link section is untrusted input like the rest: only READY message links
// between a live subscription and a live publisher of the generations they
// name are read; records of one pair add up; nothing after an empty record
// is read (records are claimed in order).
func TestParseLinks(t *testing.T) {
	// sample(): 0 publisher /chatter, 1 subscription /chatter, 2 timer
	claimed := linkRec(1, 0, 7)
	claimed.State = LinkClaimed
	stale := linkRec(1, 0, 9)
	stale.InputGeneration = 3
	py := linkRec(1, 0, 2)
	py.Flags = LinkFlagRclpy
	recs := []rawLink{
		linkRec(1, 0, 4), linkRec(1, 0, 6), // one pair claimed twice: 10
		claimed, stale, py,
		linkRec(0, 1, 5),    // a publisher as input: not what a link holds
		linkRec(1, 2, 5),    // a timer as output
		linkRec(1, 99, 5),   // no such endpoint
		{Kind: LinkMessage}, // empty: the end of the claimed records
		linkRec(1, 0, 1000), // never read
	}
	s, err := Parse(withLinks(sample(), recs))
	if err != nil {
		t.Fatal(err)
	}
	if !s.LinksOn || len(s.Links) != 2 {
		t.Fatalf("links on %v, %d links %+v; want the pair and its rclpy twin", s.LinksOn, len(s.Links), s.Links)
	}
	l := s.Links[0]
	if l.Input != 1 || l.Output != 0 || l.Rclpy || l.Count != 10 || l.AgeSumNs != 30_000_000 || l.AgeBuckets[40] != 10 || l.OwnBuckets[24] != 10 {
		t.Errorf("merged link %+v", l)
	}
	if p := s.Links[1]; !p.Rclpy || p.Count != 2 {
		t.Errorf("rclpy link %+v", p)
	}
	without, err := Parse(sample())
	if err != nil || without.LinksOn || without.Links != nil {
		t.Errorf("a segment without links: on %v, %v (%v)", without.LinksOn, without.Links, err)
	}
}

// A links section larger than the endpoint table, or of records smaller
// than this ABI's, is refused, not read past.
func TestParseRejectsHostileLinks(t *testing.T) {
	for name, mangle := range map[string]func(h *rawHeader){
		"count":  func(h *rawHeader) { h.ExtSections[0].Count = h.EndpointCapacity + 1 },
		"stride": func(h *rawHeader) { h.ExtSections[0].Stride = 64 },
	} {
		mem := withLinks(sample(), []rawLink{linkRec(1, 0, 1)})
		mangle(hdr(mem))
		if _, err := Parse(mem); err == nil {
			t.Errorf("%s: a hostile links section parsed", name)
		}
	}
}
