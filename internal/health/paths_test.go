package health

import (
	"testing"
	"time"

	"ros2_pulse/internal/paths"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// pathWindow: /s -> /m -> /e, each hop every message at about ms each.
func pathWindow(hopMs float64) *window.Window {
	var b int
	for b = 0; ; b++ {
		if lo, hi := window.TimeBucketBounds(b); hopMs*1e6 >= lo && hopMs*1e6 < hi {
			break
		}
	}
	mk := func(from, to string) window.Link {
		h := []window.Bucket{{B: b, N: 10}}
		return window.Link{Node: "/n" + from, From: from, To: to, Alive: true, N: 10, AgeHist: h, Age: window.HistStats(h, 10*hopMs)}
	}
	return &window.Window{Seconds: 1, Links: []window.Link{mk("/s", "/m"), mk("/m", "/e")}}
}

func judgeTwice(s *spec.Spec, w *window.Window) []Warning {
	e := New(s)
	e.Judge(w, false, time.Now()) // the first window is never judged
	return e.Judge(w, false, time.Now())
}

// A named path's p99 above max_ms is path_slow, judged on the path the
// recorder found, or found again from the links of a window recorded
// without the spec (pulse check of a log): the same verdict live and offline.
func TestPathSlow(t *testing.T) {
	rule := spec.PathRule{Name: "main", Via: []string{"/s", "/m", "/e"}, MaxMs: 15}
	s := &spec.Spec{Paths: []spec.PathRule{rule}}
	for _, c := range []struct {
		hopMs float64
		slow  bool
	}{{5, false}, {10, true}} {
		live := pathWindow(c.hopMs)
		paths.Fill(live, s.Paths)
		offline := pathWindow(c.hopMs) // recorded without the spec: links, no named path
		paths.Fill(offline, nil)
		for name, w := range map[string]*window.Window{"live": live, "offline": offline} {
			warns := judgeTwice(s, w)
			slow := len(warns) == 1 && warns[0].Kind == PathSlow && warns[0].Topic == "main" && warns[0].Bound == 15
			if slow != c.slow || !c.slow && len(warns) != 0 {
				t.Errorf("%s, hops of %g ms: %+v, want slow %v", name, c.hopMs, warns, c.slow)
			}
			if slow && (warns[0].Value < 19 || warns[0].Value > 21.5) {
				t.Errorf("%s: p99 %.3f ms, want about 20", name, warns[0].Value)
			}
		}
	}
}

// A bounded path that cannot be measured says why: no links at all (links
// off), or the hop that carried nothing; an unbounded one is never judged.
func TestPathCannotJudge(t *testing.T) {
	s := &spec.Spec{Paths: []spec.PathRule{
		{Name: "main", Via: []string{"/s", "/m", "/e"}, MaxMs: 15},
		{Name: "shown", Via: []string{"/s", "/x"}},
	}}
	if w := judgeTwice(s, &window.Window{Seconds: 1}); len(w) != 1 || w[0].Kind != CannotJudge || w[0].Reason != NoLinkData || w[0].Metric != "path" {
		t.Errorf("links off: %+v", w)
	}
	gap := pathWindow(5)
	gap.Links = gap.Links[:1]
	if w := judgeTwice(s, gap); len(w) != 1 || w[0].Reason != PathNotMeasured || w[0].Cause != "hop /m -> /e" {
		t.Errorf("a hop without links: %+v", w)
	}
}
