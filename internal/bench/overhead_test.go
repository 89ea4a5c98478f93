package bench

import (
	"slices"
	"strings"
	"testing"
)

func TestSelectArms(t *testing.T) {
	got, err := SelectArms([]string{"probe_gap", "none"})
	if err != nil || !slices.Equal(got, []string{"none", "probe_gap"}) {
		t.Errorf("SelectArms(probe_gap, none) = %v, %v; want [none probe_gap] in the default order", got, err)
	}
	if got, err := SelectArms(OverheadArms); err != nil || !slices.Equal(got, OverheadArms) {
		t.Errorf("SelectArms(all) = %v, %v", got, err)
	}
	for _, bad := range [][]string{{"probe", "probe_gap"}, {"none"}, {"none", "fast"}, nil} {
		if _, err := SelectArms(bad); err == nil {
			t.Errorf("SelectArms(%v) took it", bad)
		} else if !strings.Contains(err.Error(), "none") && !strings.Contains(err.Error(), "unknown") {
			t.Errorf("SelectArms(%v): %v does not say what is wrong", bad, err)
		}
	}
	// Two arms alternate their order trial by trial (the paired protocol).
	if a, b := Rotations([]string{"none", "probe_gap"}, 0), Rotations([]string{"none", "probe_gap"}, 1); a[0] == b[0] {
		t.Errorf("two arms did not alternate: %v then %v", a, b)
	}
}
