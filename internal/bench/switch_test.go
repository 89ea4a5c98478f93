package bench

import (
	"math"
	"testing"
)

// A share is the whole leg's added cost less the part's, pair by pair: a
// drift that moves all four runs of a pair alike cancels from it.
func TestShareRowPaired(t *testing.T) {
	off := map[string][]float64{"whole": {50, 60, 70}, "part": {30, 40, 50}}
	on := map[string][]float64{"whole": {80, 92, 100}, "part": {32, 42, 52}}
	r := shareRow(Share{"pub", "whole", "part"}, 1, 3, off, on)
	// added: whole 30, 32, 30; part 2, 2, 2; shares 28, 30, 28
	if math.Abs(r.AddedNs-28.667) > 0.001 {
		t.Errorf("added %.3f, want 28.667", r.AddedNs)
	}
	if want := math.Sqrt(4.0/3) / math.Sqrt(3); math.Abs(r.AddedSEM-want) > 0.001 {
		t.Errorf("SEM %.4f, want %.4f", r.AddedSEM, want)
	}
	if r.OffNs != 20 || math.Abs(r.OnNs-48.667) > 0.001 || r.Leg != "pub" || r.Pairs != 3 {
		t.Errorf("row %+v", r)
	}
}
