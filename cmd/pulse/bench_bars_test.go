package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Bars are read as NAME=MEAN,SEM; anything else is refused by name, and the
// plot is written.
func TestBenchBars(t *testing.T) {
	names, means, sems, err := parseBars([]string{"before=4.99,0.10", "after=4.17,0.2"})
	if err != nil || !slices.Equal(names, []string{"before", "after"}) || !slices.Equal(means, []float64{4.99, 4.17}) || !slices.Equal(sems, []float64{0.1, 0.2}) {
		t.Fatalf("%q %v %v %v", names, means, sems, err)
	}
	for _, bad := range []string{"x", "=1,2", "x=1", "x=a,1", "x=1,-1", "x=1,b"} {
		if _, _, _, err := parseBars([]string{bad}); err == nil {
			t.Errorf("%q read", bad)
		}
	}
	out := filepath.Join(t.TempDir(), "bars.png")
	c := benchBarsCmd()
	c.SetArgs([]string{"--out", out, "--title", "t", "a=1,0.1", "b=2,0.2"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Fatalf("the plot: %v", err)
	}
}

func FuzzParseBars(f *testing.F) {
	f.Add("a=1,0.5")
	f.Add("=,")
	f.Fuzz(func(t *testing.T, arg string) {
		names, means, sems, err := parseBars([]string{arg})
		if err == nil && (len(names) != 1 || names[0] == "" || len(means) != 1 || sems[0] < 0) {
			t.Fatalf("%q read as %q %v %v", arg, names, means, sems)
		}
	})
}
