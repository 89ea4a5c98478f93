// Package bridge turns windows into the two ROS 2 messages ROS tools already
// read: statistics_msgs/MetricsMessage on /statistics and
// diagnostic_msgs/DiagnosticArray on /diagnostics. It is pure Go; the DDS
// side (internal/dds, cgo and CycloneDDS) only publishes what it builds,
// behind the Publisher interface.
package bridge

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// Time is builtin_interfaces/Time.
type Time struct {
	Sec     int32
	Nanosec uint32
}

// TimeOf converts wall-clock nanoseconds.
func TimeOf(ns int64) Time {
	return Time{Sec: int32(ns / 1e9), Nanosec: uint32(ns % 1e9)}
}

// statistics_msgs/StatisticDataType.
const (
	Average     uint8 = 1
	Minimum     uint8 = 2
	Maximum     uint8 = 3
	Stddev      uint8 = 4
	SampleCount uint8 = 5
)

// DataPoint is statistics_msgs/StatisticDataPoint.
type DataPoint struct {
	Type uint8
	Data float64 // NaN: no data
}

// Metrics is statistics_msgs/MetricsMessage.
type Metrics struct {
	SourceName    string // measurement_source_name: the node
	MetricsSource string // the topic
	Unit          string // "ms" for the message period, "Hz" for the rate, "age_ms" for the message age
	Start, Stop   Time
	Points        []DataPoint
}

// diagnostic_msgs/DiagnosticStatus levels.
const (
	OK    uint8 = 0
	WARN  uint8 = 1
	ERROR uint8 = 2
	STALE uint8 = 3
)

// KeyValue is diagnostic_msgs/KeyValue.
type KeyValue struct{ Key, Value string }

// Status is diagnostic_msgs/DiagnosticStatus.
type Status struct {
	Level      uint8
	Name       string
	Message    string
	HardwareID string
	Values     []KeyValue
}

// Array is diagnostic_msgs/DiagnosticArray.
type Array struct {
	Stamp   Time
	FrameID string
	Status  []Status
}

// Publisher sends messages to the ROS graph (internal/dds implements it).
type Publisher interface {
	Statistics([]Metrics) error
	Diagnostics(Array) error
	Close()
}

// rclcpp's data point order: average, maximum, minimum, sample count, stddev.
func points(avg, maxV, minV, count, sd float64) []DataPoint {
	return []DataPoint{{Average, avg}, {Maximum, maxV}, {Minimum, minV}, {SampleCount, count}, {Stddev, sd}}
}

// Statistics builds the /statistics messages of a window: for every topic
// and every node that receives it (or, for a topic nobody here receives,
// that publishes it), the message period in ms (from gap data when it
// exists; else its mean from the rate, the rest NaN) and the rate in Hz.
// rclcpp cannot see intra-process deliveries on Humble or Jazzy; these can.
func Statistics(w *window.Window) []Metrics {
	stop := TimeOf(w.TsNs)
	start := TimeOf(w.TsNs - int64(w.Seconds*1e9))
	var out []Metrics
	for i := range w.Topics {
		t := &w.Topics[i]
		eps, gap := t.Subs, t.RecvGap
		if len(eps) == 0 {
			eps, gap = t.Pubs, t.PubGap
		}
		for _, e := range eps {
			if !e.Alive || e.Total[0]+e.Total[1] == 0 || e.PubHidden {
				continue // counts no tracepoint sees (loaned takes, Humble raw takes and intra publishes): no figure, never a zero
			}
			hz := e.Inter + e.Intra
			n := float64(e.Delta[0] + e.Delta[1])
			period := points(math.NaN(), math.NaN(), math.NaN(), 0, math.NaN())
			switch {
			case gap.HasData && gap.N > 0:
				period = points(gap.MeanMs, gap.MaxMs, gap.MinMs, float64(gap.N), gap.StddevMs)
			case hz > 0:
				period = points(1000/hz, math.NaN(), math.NaN(), n, math.NaN())
			}
			out = append(out,
				Metrics{SourceName: e.Node, MetricsSource: t.Name, Unit: "ms", Start: start, Stop: stop, Points: period},
				Metrics{SourceName: e.Node, MetricsSource: t.Name, Unit: "Hz", Start: start, Stop: stop,
					Points: points(hz, math.NaN(), math.NaN(), n, math.NaN())})
		}
		// rclcpp's message_age: take time minus source timestamp, merged over
		// the topic's subscriptions, so measured by pulse, not by one node.
		if l := t.Latency; l.HasData && l.N > 0 {
			out = append(out, Metrics{SourceName: AgeSource, MetricsSource: t.Name, Unit: "age_ms", Start: start, Stop: stop,
				Points: points(l.MeanMs, l.MaxMs, nanIfZero(l.MinMs), float64(l.N), math.NaN())})
		}
	}
	return out
}

// AgeSource is the measurement_source_name of message-age statistics, which
// are merged over a topic's subscriptions rather than taken by one node.
const AgeSource = "ros2_pulse"

func nanIfZero(v float64) float64 {
	if v == 0 {
		return math.NaN()
	}
	return v
}

func hz(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// Diagnostics builds the /diagnostics array of a window: one status per topic
// and one per node. Levels: ERROR for a stall, a missing topic or node, an
// exited process; WARN for any other verdict (rate, gap, timer, lag); STALE
// for a rule that cannot be judged or a topic never seen flowing; OK
// otherwise. Keys carry the measured values and the spec's bounds; greenwave's
// keys are included so its TUIs read them.
func Diagnostics(w *window.Window, s *spec.Spec, warns []health.Warning, hardwareID string) Array {
	arr := Array{Stamp: TimeOf(w.TsNs)}
	byTopic := map[string][]health.Warning{}
	byNode := map[string][]health.Warning{}
	byService := map[string][]health.Warning{}
	for _, x := range warns {
		if x.Kind == health.CallbackSlow { // a node's callback: said on its node's status
			byNode[x.Node] = append(byNode[x.Node], x)
		} else if serviceKinds[x.Kind] || x.Kind == health.CannotJudge && x.Metric == "service" {
			byService[x.Topic] = append(byService[x.Topic], x)
		} else if x.Topic != "" {
			byTopic[x.Topic] = append(byTopic[x.Topic], x)
		} else if x.Node != "" {
			byNode[x.Node] = append(byNode[x.Node], x)
		}
	}
	rules := map[string][]spec.TopicRule{}
	if s != nil {
		for _, r := range s.Topics {
			rules[r.Topic] = append(rules[r.Topic], r)
		}
	}
	names := map[string]bool{}
	for i := range w.Topics {
		names[w.Topics[i].Name] = true
	}
	for t := range rules {
		names[t] = true // a declared topic is reported even when absent
	}
	for _, name := range sortedKeys(names) {
		arr.Status = append(arr.Status, topicStatus(w.Topic(name), name, rules[name], byTopic[name], hardwareID))
	}
	busy, slowest := map[string]float64{}, map[string]float64{}
	for _, b := range w.Busy {
		if b.Measured {
			busy[b.Node+"\x00"+strconv.Itoa(b.Pid)] = b.Pct
		}
	}
	for _, c := range w.Callbacks {
		if k := c.Node + "\x00" + strconv.Itoa(c.Pid); c.Measured && c.Duration.N > 0 {
			slowest[k] = max(slowest[k], c.Duration.MaxMs)
		}
	}
	seen, threads := map[string]bool{}, window.ProcessBusy(w.Threads)
	for _, p := range w.Procs {
		for _, n := range p.Nodes {
			seen[n] = true
			st := Status{Name: n, HardwareID: hardwareID, Level: OK, Message: "alive",
				Values: []KeyValue{{"pid", strconv.Itoa(p.Pid)}, {"state", p.State()}, {"exe", p.Exe}}}
			k := n + "\x00" + strconv.Itoa(p.Pid)
			if v, ok := busy[k]; ok && p.Alive { // callback timing (rclcpp): absent when not measured
				st.Values = append(st.Values, KeyValue{"busy_pct", strconv.FormatFloat(v, 'f', 1, 64)})
			}
			if v, ok := slowest[k]; ok && p.Alive {
				st.Values = append(st.Values, KeyValue{"slowest_callback_ms", strconv.FormatFloat(v, 'f', 3, 64)})
			}
			if pb, ok := threads[p.Pid]; ok && p.Alive { // its process's busiest executor thread starves every node it serves
				st.Values = append(st.Values, KeyValue{"executor_thread_pct", strconv.FormatFloat(pb.BusiestPct, 'f', 1, 64)})
				if pb.BusiestPct >= saturatedPct {
					st.Level, st.Message = WARN, fmt.Sprintf("executor thread %d of its process %.0f %% busy: no time left for its callbacks", pb.BusiestTid, pb.BusiestPct)
				}
			}
			if !p.Alive {
				st.Level, st.Message = ERROR, "process exited"
			}
			for _, u := range w.Unmatched { // what this node's publishers and subscriptions cannot meet, and why
				if u.Node != n || u.Pid != p.Pid || !u.Error || !p.Alive {
					continue
				}
				what := "hears nothing of "
				if u.Pub {
					what = "is heard by nobody on "
				}
				msg := what + u.Topic + ": " + u.Why()
				st.Values = append(st.Values, KeyValue{"unmatched " + u.Topic, u.Reason})
				if st.Level < WARN {
					st.Level, st.Message = WARN, msg
				} else if st.Level == WARN {
					st.Message += "; " + msg
				}
			}
			applyVerdicts(&st, byNode[n])
			arr.Status = append(arr.Status, st)
		}
	}
	arr.Status = append(arr.Status, serviceStatuses(w, byService, hardwareID)...)
	missing := map[string]bool{} // required nodes never seen
	for n := range byNode {
		if !seen[n] {
			missing[n] = true
		}
	}
	for _, n := range sortedKeys(missing) {
		st := Status{Name: n, HardwareID: hardwareID, Level: ERROR, Message: "missing", Values: []KeyValue{{"state", "missing"}}}
		applyVerdicts(&st, byNode[n])
		arr.Status = append(arr.Status, st)
	}
	return arr
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func topicStatus(t *window.Topic, name string, rules []spec.TopicRule, ws []health.Warning, hardwareID string) Status {
	st := Status{Name: name, HardwareID: hardwareID, Level: OK}
	var pub, recv float64
	if t != nil {
		pub, recv = t.PubAny, t.RecvInter+t.RecvIntra
		if t.PubMeasured("any") {
			st.Values = append(st.Values, KeyValue{"pub_hz", hz(pub)})
		}
		st.Values = append(st.Values, KeyValue{"recv_hz", hz(recv)},
			KeyValue{"publishers", strconv.Itoa(t.PubCount)}, KeyValue{"subscriptions", strconv.Itoa(t.SubCount)},
			// greenwave's keys: the node-side and message-side rates.
			KeyValue{"frame_rate_node", hz(recv)})
		if t.PubMeasured("any") {
			st.Values = append(st.Values, KeyValue{"frame_rate_msg", hz(pub)})
		}
		if g := maxGap(t); g >= 0 {
			st.Values = append(st.Values, KeyValue{"max_gap_ms", strconv.FormatFloat(g, 'f', 1, 64)})
		}
		if l := t.Latency; l.HasData && l.N > 0 { // greenwave's key for the message age
			st.Values = append(st.Values, KeyValue{"current_delay_from_realtime_ms", strconv.FormatFloat(l.MeanMs, 'f', 3, 64)},
				KeyValue{"max_delay_ms", strconv.FormatFloat(l.MaxMs, 'f', 3, 64)})
		}
		if t.Loss.Judged > 0 {
			st.Values = append(st.Values, KeyValue{"worst_loss_pct", strconv.FormatFloat(t.Loss.WorstPct, 'f', 2, 64)})
		}
		// bytes (ROS_PULSE_BYTES=1): each side's bytes a second, how they were measured, and its mean message size
		for _, side := range []struct {
			key string
			b   window.Bytes
		}{{"pub", t.PubBytes}, {"recv", t.RecvBytes}} {
			if side.b.Measured() {
				st.Values = append(st.Values, KeyValue{side.key + "_bytes_per_s", strconv.FormatFloat(side.b.PerS, 'f', 0, 64)},
					KeyValue{side.key + "_bytes", side.b.How})
				if side.b.Messages > 0 {
					st.Values = append(st.Values, KeyValue{side.key + "_mean_bytes", strconv.FormatFloat(side.b.MeanSize, 'f', 0, 64)})
				}
			} else if side.b.How == window.BytesNone {
				st.Values = append(st.Values, KeyValue{side.key + "_bytes", "not_measured"})
			}
		}
	}
	for _, r := range rules {
		pre := string(r.Side) + "_" + string(r.Transport) + "_"
		if r.HasRate() {
			st.Values = append(st.Values, KeyValue{pre + "min_hz", strconv.FormatFloat(r.MinHz, 'g', -1, 64)})
			if !math.IsInf(r.MaxHz, 1) {
				st.Values = append(st.Values, KeyValue{pre + "max_hz", strconv.FormatFloat(r.MaxHz, 'g', -1, 64)})
			}
			st.Values = append(st.Values, KeyValue{"expected_frequency", strconv.FormatFloat(r.MinHz, 'g', -1, 64)})
		}
		if r.HasGap() {
			st.Values = append(st.Values, KeyValue{pre + "max_gap_ms", strconv.FormatFloat(r.MaxGapMs, 'g', -1, 64)})
		}
	}
	switch {
	case t == nil:
		st.Level, st.Message = ERROR, "no endpoint on this machine"
	case t.Stalled():
		st.Level, st.Message = ERROR, "stalled"
	case !t.Active() && !t.PubInterSeen && !t.PubIntraSeen && !t.RecvSeen:
		st.Level, st.Message = STALE, "no traffic yet"
	default:
		st.Message = fmt.Sprintf("%s Hz", hz(math.Max(pub, recv)))
	}
	applyVerdicts(&st, ws)
	return st
}

func maxGap(t *window.Topic) float64 {
	g := -1.0
	if t.PubGap.HasData {
		g = t.PubGap.MaxDtMs()
	}
	if t.RecvGap.HasData {
		g = math.Max(g, t.RecvGap.MaxDtMs())
	}
	return g
}

// applyVerdicts raises a status's level by its warnings and says why, shortly.
// saturatedPct: an executor thread this busy leaves the nodes it serves no
// time (as top and graph draw it).
const saturatedPct = 90.0

func applyVerdicts(st *Status, ws []health.Warning) {
	var why []string
	for _, w := range ws {
		level := WARN
		switch w.Kind {
		case health.TopicMissing, health.NodeMissing, health.ServiceMissing:
			level = ERROR
		case health.CannotJudge:
			level = STALE
		}
		if level > st.Level || st.Level == STALE && level == ERROR {
			st.Level = level
		}
		why = append(why, describe(&w))
	}
	if len(why) > 0 {
		st.Message = strings.Join(why, "; ")
	}
}

func describe(w *health.Warning) string {
	switch w.Kind {
	case health.TopicRate:
		who := string(w.Side)
		if w.Pid != 0 {
			who = w.Node
		}
		s := fmt.Sprintf("%s %s Hz outside [%g, %g]", who, hz(w.Value), w.Min, w.Max)
		if w.Cause != "" {
			s += ": " + w.Cause
		}
		return s
	case health.TopicGap:
		return fmt.Sprintf("%s gap %.0f ms > %g ms", w.Side, w.Value, w.Bound)
	case health.TopicMissing:
		return fmt.Sprintf("no live %s endpoint", w.Side)
	case health.NodeMissing:
		return "missing"
	case health.TimerRate:
		return fmt.Sprintf("timer %s Hz < %g", hz(w.Value), w.Min)
	case health.TopicLatency:
		return fmt.Sprintf("latency %.1f ms > %g ms", w.Value, w.Bound)
	case health.TopicBytes:
		return fmt.Sprintf("%s %s/s outside [%g, %g] B/s", w.Side, window.HumanBytes(w.Value), w.Min, w.Max)
	case health.CannotJudge:
		return w.Metric + " rule not judged: " + w.Why()
	case health.RecvLag:
		if w.Cause != "" { // it stopped receiving, and why
			return fmt.Sprintf("%s receives %s of %s Hz: %s", w.Node, hz(w.Value), hz(w.Min), w.CauseAndFix())
		}
		return fmt.Sprintf("%s receives %s of %s Hz", w.Node, hz(w.Value), hz(w.Min))
	case health.RecvStarved:
		if w.Cause != "" {
			return w.Node + " hears nothing: " + w.CauseAndFix()
		}
		return w.Node + " " + health.StarvedWords(w.Min)
	case health.CallbackSlow:
		return fmt.Sprintf("%s callback %s took at least %.1f ms > %g ms", w.Metric, w.Topic, w.Value, w.Bound)
	case health.TimerLate:
		return fmt.Sprintf("timer %d called %.1f ms late > %g ms", w.Timer, w.Value, w.Bound)
	case health.TimerOverrun:
		return fmt.Sprintf("timer %d overran its period %.0f times > %g", w.Timer, w.Value, w.Bound)
	case health.NodeBusy:
		return fmt.Sprintf("busy %.0f %% of the window in callbacks > %g %%", w.Value, w.Bound)
	case health.ServiceMissing:
		return fmt.Sprintf("no live %s", w.Side)
	case health.ServiceRate:
		return fmt.Sprintf("%s %s %s calls/s < %g", w.Side, w.Node, hz(w.Value), w.Min)
	case health.ServiceSlow:
		return fmt.Sprintf("server %s: %.0f answers later than %g ms", w.Node, w.Value, w.Bound)
	case health.ServiceTimeout:
		return fmt.Sprintf("client %s: %.0f calls timed out (%g ms)", w.Node, w.Value, w.Bound)
	case health.ServiceBacklog:
		return fmt.Sprintf("%s %s: %.0f calls open > %g", w.Side, w.Node, w.Value, w.Bound)
	case health.ServiceSendFailed:
		return fmt.Sprintf("server %s: %s; fix: %s", w.Node, health.SendFailedWords(w.Value), health.SendFailedFix)
	case health.ActionSlow:
		return fmt.Sprintf("%s %s: %.0f %s later than %g ms", w.Side, w.Node, w.Value, map[string]string{"accept": "goals accepted", "result": "results"}[w.Metric], w.Bound)
	}
	return string(w.Kind)
}

// serviceKinds are the verdicts said on a service's status.
var serviceKinds = map[health.Kind]bool{health.ServiceMissing: true, health.ServiceRate: true, health.ServiceSlow: true,
	health.ServiceTimeout: true, health.ServiceBacklog: true, health.ActionSlow: true, health.ServiceSendFailed: true}

// serviceStatuses are one status per service and action with servers or
// clients here ("service:/name", "action:/name"): its servers and clients,
// the requests taken per second, handling and round trip at p99, the calls
// open; WARN for a verdict or a client with no server here, ERROR for a
// rule's service with no server or client at all.
func serviceStatuses(w *window.Window, verdicts map[string][]health.Warning, hardwareID string) []Status {
	type agg struct {
		action                 bool
		servers, clients, open int
		hz, handleP99, rttP99  float64
		noServer               bool
	}
	all := map[string]*agg{}
	for i := range w.Calls {
		c := &w.Calls[i]
		if !c.Alive || c.Idle() {
			continue
		}
		name, part, isAction := c.ShownAs()
		a := all[name]
		if a == nil {
			a = &agg{action: isAction}
			all[name] = a
		}
		a.open += len(c.Open)
		if part != "" && part != "send_goal" {
			continue
		}
		if c.Client {
			a.clients++
			a.noServer = a.noServer || !c.HasServer
			a.rttP99 = max(a.rttP99, c.Time.P99Ms)
		} else {
			a.servers++
			a.hz += c.Hz
			a.handleP99 = max(a.handleP99, c.Time.P99Ms)
		}
	}
	names := map[string]bool{}
	for n := range all {
		names[n] = true
	}
	for n := range verdicts {
		names[n] = true
	}
	var out []Status
	for _, name := range sortedKeys(names) {
		a := all[name]
		kind := "service:"
		if a != nil && a.action {
			kind = "action:"
		}
		st := Status{Name: kind + name, HardwareID: hardwareID, Level: OK}
		switch {
		case a == nil:
			st.Level, st.Message = ERROR, "no server or client on this machine"
		default:
			st.Values = []KeyValue{{"servers", strconv.Itoa(a.servers)}, {"clients", strconv.Itoa(a.clients)}, {"requests_hz", hz(a.hz)},
				{"handling_p99_ms", strconv.FormatFloat(a.handleP99, 'f', 3, 64)}, {"round_trip_p99_ms", strconv.FormatFloat(a.rttP99, 'f', 3, 64)},
				{"open_calls", strconv.Itoa(a.open)}}
			st.Message = fmt.Sprintf("%s requests/s", hz(a.hz))
			if a.noServer {
				st.Level, st.Message = WARN, "a client calls it and no process on this machine serves it"
			}
		}
		applyVerdicts(&st, verdicts[name])
		out = append(out, st)
	}
	return out
}

// GoldenMetrics and GoldenArray are the fixed messages of the CDR golden
// test (`pulse-bridge --golden` publishes them; bridge/testdata holds their
// hand-checked encodings).
func GoldenMetrics() Metrics {
	return Metrics{SourceName: "/n", MetricsSource: "/t", Unit: "ms", Start: Time{1, 2}, Stop: Time{3, 4}, Points: []DataPoint{{Average, 0.5}}}
}

// GoldenArray: see GoldenMetrics.
func GoldenArray() Array {
	return Array{Stamp: Time{5, 6}, Status: []Status{{Level: WARN, Name: "/t", Message: "m", HardwareID: "h", Values: []KeyValue{{"k", "v"}}}}}
}

// GoldenEntitiesInfo is the fixed ros_discovery_info message of the CDR
// golden test: participant GUID 01..10, node "/n", one writer GUID 11..20.
func GoldenEntitiesInfo() (participant [16]byte, node Node, writers [][16]byte) {
	var w [16]byte
	for i := range participant {
		participant[i], w[i] = byte(1+i), byte(0x11+i)
	}
	return participant, Node{Namespace: "/", Name: "n"}, [][16]byte{w}
}

// StatisticsGap is the pause between two /statistics messages of one
// window. A ROS subscriber with the default QoS keeps the last 10 messages,
// and a window holds two or three per topic and subscriber, so written in
// one burst most would be lost before its executor takes them. Written 4 ms
// apart, a subscriber that takes at 50 Hz or faster sees at most 5 between
// two takes. The whole window stays within half its period, so windows
// never queue: beyond about period/8ms messages, the gap shrinks (docs/REFERENCE.md:
// limits).
func StatisticsGap(messages int, period time.Duration) time.Duration {
	const gap = 4 * time.Millisecond
	if messages < 2 {
		return 0
	}
	return min(gap, period/2/time.Duration(messages-1))
}
