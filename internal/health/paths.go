package health

import (
	"slices"

	"ros2_pulse/internal/paths"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// PathSlow is a named path whose end-to-end latency's p99 (its worst case:
// with the waiting at sampled links) was above its max_ms in the window
// (issue 47). Topic: the path's name; Value: the p99, ms; Bound: max_ms.
const PathSlow Kind = "path_slow"

// Why a path rule cannot be judged (Metric "path").
const (
	NoLinkData      = "no_link_data"      // no process here links callbacks (ROS_PULSE_LINKS=1 is off)
	PathNotMeasured = "path_not_measured" // a hop carried no linked message in the window (Cause: which)
)

// judgePaths judges the spec's bounded paths in w: the window's own path
// of that name (what the recorder found with this spec), or, for a window
// recorded without it (pulse check of another run's log), the same path
// found now from the window's links.
func judgePaths(rules []spec.PathRule, w *window.Window) []Warning {
	var out []Warning
	for _, r := range rules {
		if r.MaxMs == 0 {
			continue // named to be shown, not judged
		}
		p := namedPath(w, r)
		switch {
		case p == nil:
			out = append(out, Warning{Kind: CannotJudge, Metric: "path", Reason: NoLinkData, Topic: r.Name, Timer: -1, Bound: r.MaxMs})
		case !p.Measured:
			out = append(out, Warning{Kind: CannotJudge, Metric: "path", Reason: PathNotMeasured, Topic: r.Name, Timer: -1,
				Bound: r.MaxMs, Cause: "hop " + p.Missing})
		case p.Worst.P99Ms > r.MaxMs:
			out = append(out, Warning{Kind: PathSlow, Topic: r.Name, Timer: -1, Value: p.Worst.P99Ms, Bound: r.MaxMs})
		}
	}
	return out
}

// namedPath is w's path named r.Name through r.Via, found again from w's
// links when w was recorded without it; nil when w has neither (links off).
func namedPath(w *window.Window, r spec.PathRule) *window.Path {
	for i := range w.Paths {
		if p := &w.Paths[i]; p.Named && p.Name == r.Name && slices.Equal(p.Topics, r.Via) {
			return p
		}
	}
	if len(w.Links) == 0 {
		return nil
	}
	ps := paths.Of(w.Links, []spec.PathRule{r})
	return &ps[0]
}
