package health

import (
	"sort"
	"time"

	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// Moment is one point of a set of recorded logs: the windows of every log
// that cover it, merged, and its verdict.
type Moment struct {
	W      *window.Window
	Judged bool      // false: a ramp-up, a final sliver or a skipped last window
	Warns  []Warning // the verdict, when judged
}

// sliverFraction: a window shorter than this share of the log's usual
// window is a final partial window (a process's exit), never judged.
const sliverFraction = 0.5

// JudgeLogs judges recorded logs against the evaluator's spec, every moment
// after the first (upstream judged only the last window, so a fault in the
// middle of a run passed). Several logs are sources of the same time span
// (upstream's per-process logs, or several machines): each log's windows
// are aligned in time with those of the log that spans longest, and merged.
// A moment is not judged when it holds a log's first window, a log's last
// window under skipLast, or a sliver.
func (e *Evaluator) JudgeLogs(logs [][]*window.Window, skipLast bool) []Moment {
	ref := -1
	for i, l := range logs {
		if len(l) > 0 && (ref < 0 || span(l) > span(logs[ref])) {
			ref = i
		}
	}
	if ref < 0 {
		return nil
	}
	usual := make([]float64, len(logs))
	for i, l := range logs {
		usual[i] = medianSeconds(l)
	}
	cursor := make([]int, len(logs))
	var out []Moment
	for _, rw := range logs[ref] {
		members := []*window.Window{}
		judged := true
		for i, l := range logs {
			// Monotone matching: each window is used once, the nearest in order.
			tol := int64(0.75 * max(usual[i], usual[ref]) * 1e9)
			for cursor[i] < len(l) && l[cursor[i]].TsNs < rw.TsNs-tol {
				cursor[i]++
			}
			if cursor[i] >= len(l) || l[cursor[i]].TsNs > rw.TsNs+tol {
				continue
			}
			k := cursor[i]
			cursor[i]++
			w := l[k]
			members = append(members, w)
			if k == 0 || skipLast && k == len(l)-1 || w.Seconds < sliverFraction*usual[i] {
				judged = false
			}
		}
		m := Moment{W: window.Merge(members), Judged: judged}
		m.Warns = e.Judge(m.W, !judged, time.Unix(0, rw.TsNs))
		m.Judged = judged && e.windows > 1 // the evaluator never judges its first window
		out = append(out, m)
	}
	return out
}

func span(l []*window.Window) int64 { return l[len(l)-1].TsNs - l[0].TsNs }

func medianSeconds(l []*window.Window) float64 {
	if len(l) == 0 {
		return 0
	}
	s := make([]float64, len(l))
	for i, w := range l {
		s[i] = w.Seconds
	}
	sort.Float64s(s)
	return s[len(s)/2]
}

// JudgeRuns judges recorded logs run by run. Each log is cut at its RUN
// lines; the runs of different logs that overlap in time are sources of
// one span and are judged together (as JudgeLogs merges them); every such
// group gets an evaluator of its own, so a run's first window is a ramp-up
// and no verdict's age carries over from the run before. skipLast skips
// each run's last window.
func JudgeRuns(s *spec.Spec, logs [][]*window.Window, skipLast bool) []Moment {
	type part struct {
		ws         []*window.Window
		start, end int64
	}
	var parts []part
	for _, l := range logs {
		for i := 0; i < len(l); {
			j := i + 1
			for j < len(l) && l[j].Run == l[i].Run {
				j++
			}
			parts = append(parts, part{l[i:j], l[i].TsNs - int64(l[i].Seconds*1e9), l[j-1].TsNs})
			i = j
		}
	}
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].start < parts[j].start })
	var out []Moment
	for i := 0; i < len(parts); {
		group, end := [][]*window.Window{parts[i].ws}, parts[i].end
		j := i + 1
		for ; j < len(parts) && parts[j].start < end; j++ {
			group, end = append(group, parts[j].ws), max(end, parts[j].end)
		}
		out = append(out, New(s).JudgeLogs(group, skipLast)...)
		i = j
	}
	return out
}
