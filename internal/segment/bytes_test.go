package segment

import (
	"testing"
	"unsafe"
)

// withBytes appends a bytes section (ABI 1.9) in the header's extension
// places to a segment from build, one record per endpoint slot.
func withBytes(mem []byte, recs []rawBytes) []byte {
	h := (*rawHeader)(unsafe.Pointer(&mem[0]))
	off := (uint64(len(mem)) + 63) &^ 63
	count := h.EndpointCapacity
	total := off + uint64(count)*uint64(unsafe.Sizeof(rawBytes{}))
	out := aligned(make([]byte, total))
	copy(out, mem)
	h = (*rawHeader)(unsafe.Pointer(&out[0]))
	h.TotalSize, h.AbiMinor = total, ABIMinor
	h.ExtSections[h.ExtSectionCount] = rawSection{SectionBytes, count, off, uint64(unsafe.Sizeof(rawBytes{}))}
	h.ExtSectionCount++
	for i, r := range recs {
		*(*rawBytes)(unsafe.Pointer(&out[off+uint64(i)*uint64(unsafe.Sizeof(rawBytes{}))])) = r
	}
	return out
}

// A bytes section is read for publishers and subscriptions only, as it
// says; a record claiming both a type and an unreadable one is read as
// unreadable (no fixed size trusted); a section that does not match the
// endpoint table is an error, not a misread.
func TestParseBytes(t *testing.T) {
	// sample(): 0 publisher /chatter, 1 subscription /chatter, 2 timer
	recs := []rawBytes{
		{SampledBytes: 1060 * 4, Sampled: 4, FixedSize: 0, Flags: BytesTyped, MaxSize: 1060, Every: 16},
		{FixedSize: 44, Flags: BytesTyped | BytesUnreadable, MaxSize: 44},
		{FixedSize: 99, Flags: BytesTyped},
	}
	s, err := Parse(withBytes(sample(), recs))
	if err != nil {
		t.Fatal(err)
	}
	if !s.BytesOn {
		t.Fatal("bytes section not seen")
	}
	pub, sub, timer := s.Endpoints[0].Bytes, s.Endpoints[1].Bytes, s.Endpoints[2].Bytes
	if !pub.Typed || pub.Sampled != 4 || pub.SampledBytes != 4240 || pub.Every != 16 || pub.MaxSize != 1060 {
		t.Errorf("publisher %+v", pub)
	}
	if sub.Typed || !sub.Unreadable || sub.FixedSize != 0 {
		t.Errorf("a contradictory record %+v", sub)
	}
	if timer != (Bytes{}) {
		t.Errorf("a timer's bytes %+v", timer)
	}
	if s, err := Parse(sample()); err != nil || s.BytesOn {
		t.Errorf("without a section: on %v, %v", s != nil && s.BytesOn, err)
	}
	bad := withBytes(sample(), nil)
	h := (*rawHeader)(unsafe.Pointer(&bad[0]))
	h.ExtSections[h.ExtSectionCount-1].Count--
	if _, err := Parse(bad); err == nil {
		t.Error("a bytes section smaller than the endpoint table parsed")
	}
}
