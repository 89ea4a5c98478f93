package logfmt

import (
	"fmt"
	"strconv"
	"strings"

	"ros2_pulse/internal/health"
)

// upstreamWarn is upstream's WARN line for w, when upstream had one.
func upstreamWarn(w *health.Warning) (string, bool) {
	switch w.Kind {
	case health.TopicRate:
		if w.Pid != 0 {
			return "", false // per-subscription verdicts are new: ALERT only
		}
		return fmt.Sprintf("WARN TOPIC %s hz=%s expected=[%s,%s]", textName(w.Topic), hz(w.Value), bound(w.Min), bound(w.Max)), true
	case health.TopicMissing:
		if w.Min <= 0 {
			return "", false // 0 Hz breaks no rate bound: ALERT only
		}
		// Upstream judged a topic absent from the logs at 0 Hz.
		return fmt.Sprintf("WARN TOPIC %s hz=%s expected=[%s,%s]", textName(w.Topic), hz(0), bound(w.Min), bound(w.Max)), true
	case health.TopicGap:
		return fmt.Sprintf("WARN TOPIC %s max_dt_ms=%s expected_max_gap_ms=%s", textName(w.Topic), ms(w.Value), bound(w.Bound)), true
	case health.NodeMissing:
		return fmt.Sprintf("WARN NODE %s missing", textName(w.Node)), true
	}
	return "", false
}

// WarnLines renders verdicts as text lines: upstream's WARN line where
// upstream had that verdict, then the ALERT line every verdict gets.
func WarnLines(warns []health.Warning) []string {
	var out []string
	for i := range warns {
		if line, ok := upstreamWarn(&warns[i]); ok {
			out = append(out, line)
		}
		out = append(out, alertLine(&warns[i]))
	}
	return out
}

// alertLine is the new line kind: every verdict with its side, value, bound and age.
func alertLine(w *health.Warning) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ALERT %s", w.Kind)
	if fields, ok := timingFields(w); ok {
		for _, f := range fields {
			if f[0] == "name" || f[0] == "node" || f[0] == "cause" {
				f[1] = textName(f[1])
			}
			fmt.Fprintf(&b, " %s=%s", f[0], f[1])
		}
		fmt.Fprintf(&b, " for_s=%.1f", w.Age.Seconds())
		return b.String()
	}
	if w.Topic != "" {
		fmt.Fprintf(&b, " topic=%s side=%s transport=%s", textName(w.Topic), w.Side, w.Transport)
	}
	if w.Node != "" {
		fmt.Fprintf(&b, " node=%s", textName(w.Node))
	}
	if w.Pid != 0 {
		fmt.Fprintf(&b, " pid=%d", w.Pid)
	}
	if (w.Kind == health.TimerRate || w.Metric == "timer") && w.Timer >= 0 {
		fmt.Fprintf(&b, " timer=%d", w.Timer)
	}
	switch w.Kind {
	case health.TopicRate, health.TimerRate:
		fmt.Fprintf(&b, " hz=%s min_hz=%s max_hz=%s", hz(w.Value), bound(w.Min), bound(w.Max))
	case health.TopicGap:
		fmt.Fprintf(&b, " max_dt_ms=%s max_gap_ms=%s", ms(w.Value), bound(w.Bound))
	case health.TopicLatency:
		fmt.Fprintf(&b, " max_ms=%s max_latency_ms=%s", ms(w.Value), bound(w.Bound))
	case health.TopicLoss:
		fmt.Fprintf(&b, " loss_pct=%s max_loss_pct=%s", pct(w.Value), bound(w.Bound))
	case health.TopicBytes:
		fmt.Fprintf(&b, " bytes_per_s=%s min_bytes_per_s=%s max_bytes_per_s=%s", ms(w.Value), bound(w.Min), bound(w.Max))
	case health.CannotJudge:
		switch w.Metric {
		case "rate", "timer":
			fmt.Fprintf(&b, " min_hz=%s max_hz=%s", bound(w.Min), bound(w.Max))
		case "bytes":
			fmt.Fprintf(&b, " min_bytes_per_s=%s max_bytes_per_s=%s", bound(w.Min), bound(w.Max))
		case "latency":
			fmt.Fprintf(&b, " max_latency_ms=%s", bound(w.Bound))
		case "loss":
			fmt.Fprintf(&b, " max_loss_pct=%s", bound(w.Bound))
		default:
			fmt.Fprintf(&b, " max_gap_ms=%s", bound(w.Bound))
		}
		fmt.Fprintf(&b, " reason=%s", w.Reason)
	case health.Unmatched:
		fmt.Fprintf(&b, " reason=%s", textName(w.Reason))
	case health.RecvLag:
		fmt.Fprintf(&b, " hz=%s pub_hz=%s", hz(w.Value), hz(w.Min))
	case health.RecvStarved:
		fmt.Fprintf(&b, " received=0 pub_hz=%s", hz(w.Min))
	}
	if w.Cause != "" { // why its subscriptions cannot hear the publishers (internal/diagnose)
		fmt.Fprintf(&b, " cause=%s", textName(w.Cause))
	}
	fmt.Fprintf(&b, " for_s=%.1f", w.Age.Seconds())
	return b.String()
}

// timingFields are the fields of a timing verdict (callbacks, timer timing,
// busy nodes), in order, for both formats; false for every other verdict.
func timingFields(w *health.Warning) ([][2]string, bool) {
	var f [][2]string
	add := func(k, v string) { f = append(f, [2]string{k, v}) }
	who := func() {
		if w.Topic != "" {
			add("name", w.Topic) // raw: each format escapes names its way
		}
		if w.Node != "" {
			add("node", w.Node)
		}
		if w.Pid != 0 {
			add("pid", strconv.Itoa(w.Pid))
		}
		if w.Timer >= 0 {
			add("timer", strconv.Itoa(w.Timer))
		}
	}
	switch {
	case w.Kind == health.CallbackSlow:
		who()
		add("callback", w.Metric)
		add("max_ms", ms(w.Value))
		add("bound_ms", bound(w.Bound))
	case w.Kind == health.TimerLate:
		who()
		add("late_ms", ms(w.Value))
		add("max_late_ms", bound(w.Bound))
	case w.Kind == health.TimerOverrun:
		who()
		add("overruns", strconv.FormatFloat(w.Value, 'f', 0, 64))
		add("max_overruns", bound(w.Bound))
	case w.Kind == health.NodeBusy:
		who()
		add("busy_pct", pct(w.Value))
		add("max_busy_pct", bound(w.Bound))
	case w.Kind == health.ServiceMissing:
		add("name", w.Topic)
		add("side", string(w.Side))
		add("min_hz", bound(w.Min))
	case w.Kind == health.ServiceRate:
		who()
		add("side", string(w.Side))
		add("hz", hz(w.Value))
		add("min_hz", bound(w.Min))
	case w.Kind == health.ServiceSlow || w.Kind == health.ServiceTimeout:
		who()
		add("side", string(w.Side))
		add("late", strconv.FormatFloat(w.Value, 'f', 0, 64))
		add("max_response_ms", bound(w.Bound))
	case w.Kind == health.ServiceBacklog:
		who()
		add("side", string(w.Side))
		add("outstanding", strconv.FormatFloat(w.Value, 'f', 0, 64))
		add("max_outstanding", bound(w.Bound))
	case w.Kind == health.ServiceSendFailed:
		who()
		add("side", string(w.Side))
		add("send_failed", strconv.FormatFloat(w.Value, 'f', 0, 64))
	case w.Kind == health.ActionSlow:
		who()
		add("side", string(w.Side))
		add("part", w.Metric)
		add("late", strconv.FormatFloat(w.Value, 'f', 0, 64))
		add("max_"+w.Metric+"_ms", bound(w.Bound))
	case w.Kind == health.PathSlow:
		add("name", w.Topic)
		add("p99_ms", ms(w.Value))
		add("max_ms", bound(w.Bound))
	case w.Kind == health.CannotJudge && w.Metric == "path":
		add("name", w.Topic)
		add("metric", w.Metric)
		add("max_ms", bound(w.Bound))
		add("reason", w.Reason)
		if w.Cause != "" {
			add("cause", w.Cause)
		}
	case w.Kind == health.CannotJudge && w.Metric == "service":
		who()
		add("metric", w.Metric)
		add("side", string(w.Side))
		add("max_response_ms", bound(w.Bound))
		add("reason", w.Reason)
	case w.Kind == health.CannotJudge && timingMetric[w.Metric] != "":
		who()
		add("metric", w.Metric)
		add(timingMetric[w.Metric], bound(w.Bound))
		add("reason", w.Reason)
	default:
		return nil, false
	}
	return f, true
}

// timingMetric names the bound of each timing rule.
var timingMetric = map[string]string{"callback": "bound_ms", "timer_late": "max_late_ms", "timer_overrun": "max_overruns", "busy": "max_busy_pct"}
