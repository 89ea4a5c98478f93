package window

import (
	"testing"

	"ros2_pulse/internal/segment"
)

// An endpoint's bytes between two readings (design note 0033): serialized
// messages exact as given, the rest at the fixed size (exact) or at the
// mean of the samples between the readings, else of all its samples
// (sampled); none when messages flowed that nothing sizes.
func TestBytesDelta(t *testing.T) {
	fixed := segment.Bytes{Typed: true, FixedSize: 44}
	sampledPrev := segment.Bytes{Typed: true, Sampled: 10, SampledBytes: 10000}
	sampledCur := segment.Bytes{Typed: true, Sampled: 12, SampledBytes: 13000, Exact: 2, ExactBytes: 900}
	for _, c := range []struct {
		name      string
		cur, prev segment.Bytes
		n         uint64
		total     float64
		how       string
	}{
		{"fixed", fixed, segment.Bytes{}, 10, 440, BytesExact},
		{"sampled in the window, and two serialized", sampledCur, sampledPrev, 12, 900 + 10*1500, BytesSampled},
		{"no sample in the window: all of them", segment.Bytes{Typed: true, Sampled: 10, SampledBytes: 10000}, sampledPrev, 3, 3000, BytesSampled},
		{"only serialized", segment.Bytes{Exact: 3, ExactBytes: 3000}, segment.Bytes{}, 3, 3000, BytesExact},
		{"unreadable", segment.Bytes{Unreadable: true}, segment.Bytes{}, 5, 0, BytesNone},
		{"typed, never sampled", segment.Bytes{Typed: true}, segment.Bytes{}, 5, 0, BytesNone},
		{"no messages", segment.Bytes{Unreadable: true}, segment.Bytes{}, 0, 0, BytesExact},
	} {
		total, how := BytesDelta(c.cur, c.prev, c.n)
		if total != c.total || how != c.how {
			t.Errorf("%s: %v bytes %s, want %v %s", c.name, total, how, c.total, c.how)
		}
	}
}

// A topic side is exact when every endpoint is, sampled when one is, and
// not measured when an endpoint with messages could not be sized.
func TestBytesAddSide(t *testing.T) {
	var s Bytes
	s.AddSide(Bytes{How: BytesExact, PerS: 100, Total: 100, Messages: 2, MaxSize: 50})
	s.AddSide(Bytes{How: BytesSampled, PerS: 300, Total: 300, Messages: 2, MaxSize: 200})
	if s.How != BytesSampled || s.PerS != 400 || s.MeanSize != 100 || s.MaxSize != 200 {
		t.Errorf("exact + sampled: %+v", s)
	}
	s.AddSide(Bytes{How: BytesNone})
	if s.How != BytesSampled {
		t.Errorf("an unmeasured endpoint without messages made the side %s", s.How)
	}
	s.AddSide(Bytes{How: BytesNone, Messages: 1})
	if s.How != BytesNone {
		t.Errorf("an unmeasured endpoint with messages left the side %s", s.How)
	}
	if s.AddSide(Bytes{}); s.Messages != 5 {
		t.Errorf("an endpoint without bytes counted: %+v", s)
	}
}

func TestHumanBytes(t *testing.T) {
	for v, want := range map[float64]string{0: "0 B", 512: "512 B", 999: "999 B", 1000: "1.00 kB", 27.6e6: "27.6 MB", 921652: "922 kB", 1.5e9: "1.50 GB"} {
		if got := HumanBytes(v); got != want {
			t.Errorf("%v: %q, want %q", v, got, want)
		}
	}
}
