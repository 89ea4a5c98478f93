package export

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/spec"
)

// verdicts holds the latest spec verdicts, judged by a recorder loop.
type verdicts struct {
	mu     sync.Mutex
	spec   *spec.Spec
	warns  []health.Warning
	judged bool
}

// SetVerdicts stores the warnings of the last judged window (the recorder's
// OnWindow hook calls it).
func (c *Collector) SetVerdicts(s *spec.Spec, warns []health.Warning) {
	c.mu.Lock()
	if c.verdicts == nil {
		c.verdicts = &verdicts{spec: s}
	}
	v := c.verdicts
	c.mu.Unlock()
	v.mu.Lock()
	v.warns, v.judged = warns, true
	v.mu.Unlock()
}

// collect sends one series per spec rule: ok (1/0) or unjudgeable, and the bounds.
func (v *verdicts) collect(c *Collector, ch chan<- prometheus.Metric) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.judged {
		return
	}
	bad, unjudgeable := map[string]bool{}, map[string]bool{}
	for _, w := range v.warns {
		switch w.Kind {
		case health.TopicRate:
			bad[ruleKey("rate", w.Topic, string(w.Side), string(w.Transport), "", "")] = true
		case health.TopicGap:
			bad[ruleKey("gap", w.Topic, string(w.Side), string(w.Transport), "", "")] = true
		case health.TopicLatency:
			bad[ruleKey("latency", w.Topic, string(w.Side), string(w.Transport), "", "")] = true
		case health.TopicLoss:
			bad[ruleKey("loss", w.Topic, string(w.Side), string(w.Transport), "", "")] = true
		case health.TopicBytes:
			bad[ruleKey("bytes", w.Topic, string(w.Side), string(w.Transport), "", "")] = true
		case health.TopicMissing:
			for _, kind := range []string{"rate", "gap", "latency", "loss", "bytes"} {
				bad[ruleKey(kind, w.Topic, string(w.Side), string(w.Transport), "", "")] = true
			}
		case health.CallbackSlow: // the rule names the callback's topic or its node
			bad[ruleKey("callback", w.Topic, "", "", "", "")] = true
			bad[ruleKey("callback", w.Node, "", "", "", "")] = true
		case health.TimerLate, health.TimerOverrun:
			kind := map[health.Kind]string{health.TimerLate: "timer_late", health.TimerOverrun: "timer_overrun"}[w.Kind]
			bad[ruleKey(kind, "", "", "", w.Node, timerLabel(w.Timer))] = true
			bad[ruleKey(kind, "", "", "", w.Node, "any")] = true
		case health.NodeBusy:
			bad[ruleKey("busy", "", "", "", w.Node, "")] = true
		case health.ServiceRate, health.ServiceSlow, health.ServiceTimeout, health.ServiceBacklog, health.ServiceMissing:
			bad[ruleKey("service", w.Topic, string(w.Side), "", "", "")] = true // side: server or client
		case health.ActionSlow:
			bad[ruleKey("action", w.Topic, "", "", "", "")] = true
		case health.PathSlow:
			bad[ruleKey("path", w.Topic, "", "", "", "")] = true
		case health.CannotJudge:
			switch w.Metric {
			case "service":
				unjudgeable[ruleKey("service", w.Topic, string(w.Side), "", "", "")] = true
				continue
			case "callback":
				unjudgeable[ruleKey("callback", w.Topic, "", "", "", "")] = true
				continue
			case "busy":
				unjudgeable[ruleKey("busy", "", "", "", w.Node, "")] = true
				continue
			case "timer_late", "timer_overrun":
				unjudgeable[ruleKey(w.Metric, "", "", "", w.Node, timerLabel(w.Timer))] = true
				unjudgeable[ruleKey(w.Metric, "", "", "", w.Node, "any")] = true
				continue
			}
			if w.Metric == "timer" {
				unjudgeable[ruleKey("timer", "", "", "", w.Node, timerLabel(w.Timer))] = true
			} else {
				unjudgeable[ruleKey(w.Metric, w.Topic, string(w.Side), string(w.Transport), "", "")] = true
			}
		case health.NodeMissing:
			bad[ruleKey("node", "", "", "", w.Node, "")] = true
		case health.TimerRate:
			bad[ruleKey("timer", "", "", "", w.Node, timerLabel(w.Timer))] = true
			bad[ruleKey("timer", "", "", "", w.Node, "any")] = true
		}
	}
	rule := func(kind, topic, side, transport, node, timer string) {
		k := ruleKey(kind, topic, side, transport, node, timer)
		if unjudgeable[k] {
			emit(ch, c.d.ruleUnjudgeable, prometheus.GaugeValue, 1, time.Time{}, kind, topic, side, transport, node, timer)
			return
		}
		ok := 1.0
		if bad[k] {
			ok = 0
		}
		emit(ch, c.d.ruleOK, prometheus.GaugeValue, ok, time.Time{}, kind, topic, side, transport, node, timer)
	}
	for _, r := range v.spec.Topics {
		side, tr := string(r.Side), string(r.Transport)
		if r.HasRate() {
			rule("rate", r.Topic, side, tr, "", "")
			emit(ch, c.d.specMin, prometheus.GaugeValue, r.MinHz, time.Time{}, r.Topic, side, tr)
			if !math.IsInf(r.MaxHz, 1) {
				emit(ch, c.d.specMax, prometheus.GaugeValue, r.MaxHz, time.Time{}, r.Topic, side, tr)
			}
		}
		if r.HasGap() {
			rule("gap", r.Topic, side, tr, "", "")
		}
		if r.HasLatency() {
			rule("latency", r.Topic, side, tr, "", "")
		}
		if r.HasLoss() {
			rule("loss", r.Topic, side, tr, "", "")
		}
		if r.HasBytes() {
			rule("bytes", r.Topic, side, tr, "", "")
		}
	}
	for _, n := range v.spec.Nodes {
		rule("node", "", "", "", n, "")
	}
	for _, r := range v.spec.Timers {
		if r.MinHz > 0 {
			rule("timer", "", "", "", r.Node, timerLabel(r.Ordinal))
		}
		if !math.IsInf(r.MaxLateMs, 1) {
			rule("timer_late", "", "", "", r.Node, timerLabel(r.Ordinal))
		}
		if !math.IsInf(r.MaxOverruns, 1) {
			rule("timer_overrun", "", "", "", r.Node, timerLabel(r.Ordinal))
		}
	}
	for _, r := range v.spec.Callbacks {
		rule("callback", r.Name, "", "", "", "")
	}
	for _, r := range v.spec.NodeRules {
		rule("busy", "", "", "", r.Node, "")
	}
	for _, r := range v.spec.Services {
		rule("service", r.Name, r.Side(), "", "", "")
	}
	for _, r := range v.spec.Actions {
		rule("action", r.Name, "", "", "", "")
	}
	for _, r := range v.spec.Paths {
		if r.MaxMs > 0 {
			rule("path", r.Name, "", "", "", "")
		}
	}
}

func timerLabel(ord int) string {
	if ord < 0 {
		return "any"
	}
	return strconv.Itoa(ord)
}

func ruleKey(parts ...string) string {
	out := ""
	for _, p := range parts {
		out += p + "\x00"
	}
	return out
}
