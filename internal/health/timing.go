package health

import (
	"math"

	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// judgeTiming judges the callback, timer-timing and busy rules of s on w.
// Every verdict is certain: a callback's MaxMs is a lower bound of the
// longest one, so "slower than max_ms" is never a false alarm. A rule whose
// callbacks exist but are not timed says cannot_judge and why; a rule whose
// node or topic has no callback in the window has nothing to judge.
func judgeTiming(s *spec.Spec, w *window.Window) []Warning {
	var out []Warning
	for _, r := range s.Callbacks {
		out = append(out, judgeCallbacks(r, w)...)
	}
	for _, r := range s.Timers {
		if r.HasTiming() {
			out = append(out, judgeTimerTiming(r, w)...)
		}
	}
	for _, r := range s.NodeRules {
		out = append(out, judgeBusy(r, w)...)
	}
	return out
}

func cannotJudge(metric, why, node, topic string, timer int, bound float64) Warning {
	return Warning{Kind: CannotJudge, Metric: metric, Reason: why, Node: node, Topic: topic, Timer: timer, Bound: bound}
}

// judgeCallbacks: every subscription callback of the topic r.Name, or every
// callback of the node r.Name.
func judgeCallbacks(r spec.CallbackRule, w *window.Window) []Warning {
	var out []Warning
	why := ""
	for _, c := range w.Callbacks {
		if c.Node != r.Name && (c.Kind != "subscription" || c.Name != r.Name) {
			continue
		}
		if !c.Measured {
			why = c.Why
			continue
		}
		if c.Duration.N > 0 && c.Duration.MaxMs > r.MaxMs {
			timer := -1
			if c.Kind == "timer" {
				timer = c.Ordinal
			}
			out = append(out, Warning{Kind: CallbackSlow, Node: c.Node, Pid: c.Pid, Topic: c.Name, Timer: timer, Value: c.Duration.MaxMs, Bound: r.MaxMs, Metric: c.Kind})
		}
	}
	if len(out) == 0 && why != "" {
		out = append(out, cannotJudge("callback", why, "", r.Name, -1, r.MaxMs))
	}
	return out
}

func judgeTimerTiming(r spec.TimerRule, w *window.Window) []Warning {
	var out []Warning
	for _, tm := range w.Timers {
		if tm.Node != r.Node || (r.Ordinal >= 0 && tm.Ordinal != r.Ordinal) {
			continue
		}
		if !tm.LateKnown {
			out = append(out, cannotJudge("timer_late", TimingOff, r.Node, "", tm.Ordinal, r.MaxLateMs))
			continue
		}
		if tm.Late.N > 0 && tm.Late.MaxMs > r.MaxLateMs {
			out = append(out, Warning{Kind: TimerLate, Node: r.Node, Pid: tm.Pid, Timer: tm.Ordinal, Value: tm.Late.MaxMs, Bound: r.MaxLateMs})
		}
		if !math.IsInf(r.MaxOverruns, 1) && !tm.Timed {
			out = append(out, cannotJudge("timer_overrun", tm.Why, r.Node, "", tm.Ordinal, r.MaxOverruns))
		} else if !math.IsInf(r.MaxOverruns, 1) && float64(tm.Overruns) > r.MaxOverruns {
			out = append(out, Warning{Kind: TimerOverrun, Node: r.Node, Pid: tm.Pid, Timer: tm.Ordinal, Value: float64(tm.Overruns), Bound: r.MaxOverruns})
		}
	}
	return out
}

func judgeBusy(r spec.NodeRule, w *window.Window) []Warning {
	var out []Warning
	for _, b := range w.Busy {
		if b.Node != r.Node {
			continue
		}
		switch {
		case !b.Measured:
			why := NoCallbackTiming
			for _, c := range w.Callbacks {
				if c.Node == r.Node && c.Why == TimingOff {
					why = TimingOff
				}
			}
			out = append(out, cannotJudge("busy", why, r.Node, "", -1, r.MaxBusyPct))
		case b.Pct > r.MaxBusyPct:
			out = append(out, Warning{Kind: NodeBusy, Node: r.Node, Pid: b.Pid, Timer: -1, Value: b.Pct, Bound: r.MaxBusyPct})
		}
	}
	return out
}
