// Package spec loads the expected-rate spec: what "healthy" means for the
// whole machine. It is strict on purpose: a declared rule must never be
// silently unchecked, so every mistake is an error that names the line and
// the key (upstream pitfalls 20 and 21).
//
//	topics:
//	  /scan: {min_hz: 9, max_hz: 11}                 # one rule (side recv, transport any)
//	  /cmd_vel:                                      # several rules
//	    - {min_hz: 18, side: pub}
//	    - {max_gap_ms: 200, side: recv}
//	  /camera/image: {max_latency_ms: 50}              # receive latency (recv side)
//	  /points: {max_loss_pct: 1}                     # every subscription's loss (recv side)
//	nodes: [/controller, /base_driver]               # must be alive
//	nodes:                                           # or a mapping, with how busy each may be
//	  /controller: {max_busy_pct: 80}                # share of each window in its callbacks
//	  /base_driver: {}
//	timers:
//	  /controller: {min_hz: 90, max_late_ms: 2, max_overruns: 0}  # every timer of the node
//	  /planner: {min_hz: 4, timer: 1}                # only its second timer
//	callbacks:
//	  /scan: {max_ms: 20}                            # every subscription callback of a topic
//	  /controller: {max_ms: 5}                       # or every callback of a node
package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"
)

// MaxBytes bounds a spec file: a mistyped path to a rosbag must fail fast.
const MaxBytes = 1 << 20

// Side is the side of a topic a rule judges.
type Side string

const (
	Pub  Side = "pub"
	Recv Side = "recv"
)

// Transport selects the rate a rule reads.
type Transport string

const (
	Inter Transport = "inter"
	Intra Transport = "intra"
	Any   Transport = "any"
)

// TopicRule is one rule on one topic. Unset bounds are 0 and +Inf.
type TopicRule struct {
	Topic      string
	Side       Side
	Transport  Transport
	MinHz      float64
	MaxHz      float64 // +Inf when unbounded
	MaxGapMs   float64 // +Inf when unbounded
	MaxLatMs   float64 // max_latency_ms, receive side only; +Inf when unbounded
	MaxLossPct float64 // max_loss_pct, receive side only; +Inf when unbounded
	// min_bytes_per_s, max_bytes_per_s: the side's bytes a second, summed
	// over its endpoints (design note 0033); 0 and +Inf when unbounded.
	MinBytesPerS, MaxBytesPerS float64
	Line                       int
}

// HasRate reports whether the rule bounds the rate.
func (r TopicRule) HasRate() bool { return r.MinHz > 0 || !math.IsInf(r.MaxHz, 1) }

// HasGap reports whether the rule bounds the gap.
func (r TopicRule) HasGap() bool { return !math.IsInf(r.MaxGapMs, 1) }

// HasLatency reports whether the rule bounds the receive latency.
func (r TopicRule) HasLatency() bool { return !math.IsInf(r.MaxLatMs, 1) }

// HasBytes reports whether the rule bounds the side's bytes a second.
func (r TopicRule) HasBytes() bool { return r.MinBytesPerS > 0 || !math.IsInf(r.MaxBytesPerS, 1) }

// HasLoss reports whether the rule bounds each subscription's loss.
func (r TopicRule) HasLoss() bool { return !math.IsInf(r.MaxLossPct, 1) }

// TimerRule bounds a node's timer(s): at least MinHz, called at most
// MaxLateMs late, at most MaxOverruns callbacks longer than the period per
// window. Unset: 0, +Inf, +Inf.
type TimerRule struct {
	Node        string
	Ordinal     int // -1: every timer of the node
	MinHz       float64
	MaxLateMs   float64
	MaxOverruns float64
	Line        int
}

// HasTiming reports whether the rule bounds lateness or overruns.
func (r TimerRule) HasTiming() bool {
	return !math.IsInf(r.MaxLateMs, 1) || !math.IsInf(r.MaxOverruns, 1)
}

// NodeRule bounds the share of each window a node spends in its callbacks.
type NodeRule struct {
	Node       string
	MaxBusyPct float64
	Line       int
}

// CallbackRule bounds how long a callback may run: every subscription
// callback of a topic, or every callback of a node, whichever Name is.
type CallbackRule struct {
	Name  string
	MaxMs float64
	Line  int
}

// ServiceRule bounds a service's calls on one side: its servers (requests
// taken per second, answers later than MaxResponseMs, requests open) or its
// clients (calls sent per second, calls unanswered past MaxResponseMs: time
// outs, calls open). Unset: 0, +Inf, +Inf.
type ServiceRule struct {
	Name           string
	Client         bool // side: client; else server
	MinHz          float64
	MaxResponseMs  float64
	MaxOutstanding float64
	Line           int
}

// Side names the rule's side: "server" or "client".
func (r ServiceRule) Side() string {
	if r.Client {
		return "client"
	}
	return "server"
}

// ActionRule bounds an action's goals: accepted within MaxAcceptMs (the
// send_goal call), their result within MaxResultMs (the get_result call).
type ActionRule struct {
	Name        string
	MaxAcceptMs float64
	MaxResultMs float64
	Line        int
}

// Spec is a validated spec.
type Spec struct {
	Topics    []TopicRule
	Nodes     []string // must be alive
	NodeRules []NodeRule
	Timers    []TimerRule
	Callbacks []CallbackRule
	Services  []ServiceRule
	Actions   []ActionRule
	Paths     []PathRule
}

// NeedsGaps reports whether any rule needs gap tracking in the probes.
func (s *Spec) NeedsGaps() bool {
	for _, r := range s.Topics {
		if r.HasGap() {
			return true
		}
	}
	return false
}

// NeedsBytes reports whether any rule bounds bytes: the probes must measure them (ROS_PULSE_BYTES=1).
func (s *Spec) NeedsBytes() bool {
	for _, r := range s.Topics {
		if r.HasBytes() {
			return true
		}
	}
	return false
}

// NeedsLatency reports whether any rule needs latency tracking in the probes.
func (s *Spec) NeedsLatency() bool {
	for _, r := range s.Topics {
		if r.HasLatency() {
			return true
		}
	}
	return false
}

// Summary is a one-line description ("3 topic rules, 2 nodes, 1 timer rules").
func (s *Spec) Summary() string {
	out := fmt.Sprintf("%d topic rules, %d nodes, %d timer rules", len(s.Topics), len(s.Nodes), len(s.Timers))
	if len(s.Callbacks) > 0 {
		out += fmt.Sprintf(", %d callback rules", len(s.Callbacks))
	}
	if len(s.Services) > 0 {
		out += fmt.Sprintf(", %d service rules", len(s.Services))
	}
	if len(s.Actions) > 0 {
		out += fmt.Sprintf(", %d action rules", len(s.Actions))
	}
	return out + s.pathSummary()
}

// Load reads and validates the spec at path: a regular file of at most
// MaxBytes, opened without blocking (a FIFO or a device fails at once).
func Load(path string) (*Spec, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read spec %s: %w", path, err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("invalid spec %s: %w", path, err)
	}
	return s, nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if st.Size() > MaxBytes {
		return nil, fmt.Errorf("%d bytes, more than the %d a spec may have", st.Size(), MaxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("more than the %d bytes a spec may have", MaxBytes)
	}
	return data, nil
}

func errAt(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("line %d: %s", n.Line, fmt.Sprintf(format, args...))
}

// mapping checks n is a mapping without repeated keys and returns its pairs.
func mapping(n *yaml.Node, what string) ([][2]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, errAt(n, "%s must be a mapping", what)
	}
	seen := map[string]int{}
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, errAt(k, "%s: keys must be plain names", what)
		}
		if line, dup := seen[k.Value]; dup {
			return nil, errAt(k, "%s: key %q repeated (first on line %d)", what, k.Value, line)
		}
		seen[k.Value] = k.Line
		out = append(out, [2]*yaml.Node{k, v})
	}
	return out, nil
}

func number(k, v *yaml.Node) (float64, error) {
	if v.Kind != yaml.ScalarNode || (v.Tag != "!!int" && v.Tag != "!!float") {
		return 0, errAt(v, "%s must be a number, not %q", k.Value, v.Value)
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(v.Value, "_", ""), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, errAt(v, "%s must be a finite number >= 0, not %q", k.Value, v.Value)
	}
	return f, nil
}

func validName(s string) bool {
	if !strings.HasPrefix(s, "/") || len(s) > 255 {
		return false
	}
	for _, r := range s[1:] {
		if !(r == '/' || r == '_' || r == '~' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Parse validates a spec document.
func Parse(data []byte) (*Spec, error) {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return nil, errors.New("line 1: the file starts with a UTF-8 byte-order mark; save it without one")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, errors.New("the spec is empty: it declares no topic, node or timer rule")
	}
	root := doc.Content[0]
	pairs, err := mapping(root, "the spec")
	if err != nil {
		return nil, err
	}
	s := &Spec{}
	for _, p := range pairs {
		k, v := p[0], p[1]
		switch k.Value {
		case "topics":
			if err := s.parseTopics(v); err != nil {
				return nil, err
			}
		case "nodes":
			if err := s.parseNodes(v); err != nil {
				return nil, err
			}
		case "timers":
			if err := s.parseTimers(v); err != nil {
				return nil, err
			}
		case "callbacks":
			if err := s.parseCallbacks(v); err != nil {
				return nil, err
			}
		case "services":
			if err := s.parseServices(v); err != nil {
				return nil, err
			}
		case "actions":
			if err := s.parseActions(v); err != nil {
				return nil, err
			}
		case "paths":
			if err := s.parsePaths(v); err != nil {
				return nil, err
			}
		default:
			return nil, errAt(k, "unknown top-level key %q (expected topics, nodes, timers, callbacks, services, actions or paths)", k.Value)
		}
	}
	if len(s.Topics)+len(s.Nodes)+len(s.Timers)+len(s.Callbacks)+len(s.Services)+len(s.Actions)+len(s.Paths) == 0 {
		return nil, errors.New("the spec declares no topic, node, timer, callback, service, action or path rule")
	}
	if err := s.namesNotTopics(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Spec) parseTopics(n *yaml.Node) error {
	topics, err := mapping(n, "topics")
	if err != nil {
		return err
	}
	type key struct {
		topic     string
		side      Side
		transport Transport
	}
	type merged struct {
		index int            // in s.Topics
		keys  map[string]int // key -> the line it was given on
	}
	seen := map[key]*merged{}
	for _, t := range topics {
		name := t[0].Value
		if !validName(name) {
			return errAt(t[0], "topic %q is not a fully qualified ROS name like /scan", name)
		}
		rules := []*yaml.Node{t[1]}
		if t[1].Kind == yaml.SequenceNode {
			rules = t[1].Content
			if len(rules) == 0 {
				return errAt(t[1], "topic %s has an empty rule list", name)
			}
		}
		for _, rn := range rules {
			r, keys, err := parseTopicRule(name, rn)
			if err != nil {
				return err
			}
			k := key{r.Topic, r.Side, r.Transport}
			m, dup := seen[k]
			if !dup {
				seen[k] = &merged{index: len(s.Topics), keys: keys}
				s.Topics = append(s.Topics, r)
				continue
			}
			// Several items for one topic, side and transport are one rule;
			// only a bound given twice is a conflict.
			into := &s.Topics[m.index]
			for bound, line := range keys {
				if first, twice := m.keys[bound]; twice {
					return errAt(rn, "topic %s: %s given twice for side %s, transport %s (lines %d and %d)",
						name, bound, r.Side, r.Transport, first, line)
				}
				m.keys[bound] = line
				into.set(bound, &r)
			}
			if into.MinHz > into.MaxHz {
				return errAt(rn, "topic %s: min_hz %g is above max_hz %g", name, into.MinHz, into.MaxHz)
			}
			if into.MinBytesPerS > into.MaxBytesPerS {
				return errAt(rn, "topic %s: min_bytes_per_s %g is above max_bytes_per_s %g", name, into.MinBytesPerS, into.MaxBytesPerS)
			}
		}
	}
	return nil
}

// set copies one bound from another rule of the same topic, side and transport.
func (r *TopicRule) set(bound string, from *TopicRule) {
	switch bound {
	case "min_hz":
		r.MinHz = from.MinHz
	case "max_hz":
		r.MaxHz = from.MaxHz
	case "max_gap_ms":
		r.MaxGapMs = from.MaxGapMs
	case "max_latency_ms":
		r.MaxLatMs = from.MaxLatMs
	case "max_loss_pct":
		r.MaxLossPct = from.MaxLossPct
	case "min_bytes_per_s":
		r.MinBytesPerS = from.MinBytesPerS
	case "max_bytes_per_s":
		r.MaxBytesPerS = from.MaxBytesPerS
	}
}

// parseTopicRule reads one rule and the lines of the bounds it sets.
func parseTopicRule(topic string, n *yaml.Node) (TopicRule, map[string]int, error) {
	keys := map[string]int{}
	r := TopicRule{Topic: topic, Side: Recv, Transport: Any, MaxHz: math.Inf(1), MaxGapMs: math.Inf(1), MaxLatMs: math.Inf(1), MaxLossPct: math.Inf(1),
		MaxBytesPerS: math.Inf(1), Line: n.Line}
	pairs, err := mapping(n, "rule of "+topic)
	if err != nil {
		return r, nil, err
	}
	transportSet := false
	for _, p := range pairs {
		k, v := p[0], p[1]
		var err error
		switch k.Value {
		case "min_hz":
			r.MinHz, err = number(k, v)
		case "max_hz":
			r.MaxHz, err = number(k, v)
		case "max_gap_ms":
			if r.MaxGapMs, err = number(k, v); err == nil && r.MaxGapMs == 0 {
				err = errAt(v, "max_gap_ms must be greater than 0")
			}
		case "max_latency_ms":
			if r.MaxLatMs, err = number(k, v); err == nil && r.MaxLatMs == 0 {
				err = errAt(v, "max_latency_ms must be greater than 0")
			}
		case "max_loss_pct":
			if r.MaxLossPct, err = number(k, v); err == nil && r.MaxLossPct >= 100 {
				err = errAt(v, "max_loss_pct must be below 100")
			}
		case "min_bytes_per_s":
			r.MinBytesPerS, err = number(k, v)
		case "max_bytes_per_s":
			r.MaxBytesPerS, err = number(k, v)
		case "side":
			if v.Kind != yaml.ScalarNode || (v.Value != "pub" && v.Value != "recv") {
				err = errAt(v, "side must be pub or recv, not %q", v.Value)
			}
			r.Side = Side(v.Value)
		case "transport":
			if v.Kind != yaml.ScalarNode || (v.Value != "inter" && v.Value != "intra" && v.Value != "any") {
				err = errAt(v, "transport must be inter, intra or any, not %q", v.Value)
			}
			r.Transport, transportSet = Transport(v.Value), true
		default:
			err = errAt(k, "topic %s: unknown key %q (expected min_hz, max_hz, max_gap_ms, max_latency_ms, max_loss_pct, min_bytes_per_s, max_bytes_per_s, side, transport)", topic, k.Value)
		}
		if err != nil {
			return r, nil, err
		}
		if k.Value != "side" && k.Value != "transport" {
			keys[k.Value] = k.Line
		}
	}
	switch {
	case !r.HasRate() && !r.HasGap() && !r.HasLatency() && !r.HasLoss() && !r.HasBytes():
		return r, nil, errAt(n, "topic %s: a rule needs min_hz, max_hz, max_gap_ms, max_latency_ms, max_loss_pct, min_bytes_per_s or max_bytes_per_s", topic)
	case r.HasLatency() && r.Side == Pub:
		return r, nil, errAt(n, "topic %s: max_latency_ms is measured where messages are received: it needs side recv", topic)
	case r.HasLoss() && r.Side == Pub:
		return r, nil, errAt(n, "topic %s: max_loss_pct is measured where messages are received: it needs side recv", topic)
	case r.MinHz > r.MaxHz:
		return r, nil, errAt(n, "topic %s: min_hz %g is above max_hz %g", topic, r.MinHz, r.MaxHz)
	case r.MinBytesPerS > r.MaxBytesPerS:
		return r, nil, errAt(n, "topic %s: min_bytes_per_s %g is above max_bytes_per_s %g", topic, r.MinBytesPerS, r.MaxBytesPerS)
	case !r.HasRate() && transportSet:
		// The gap series merges transports, latency and bytes are
		// inter-process only (intra-process deliveries never reach rmw_take,
		// and move a pointer) and loss counts every delivery: a transport
		// would constrain nothing.
		return r, nil, errAt(n, "topic %s: a gap, latency, loss or bytes rule without a rate cannot choose a transport", topic)
	}
	return r, keys, nil
}

func (s *Spec) parseNodes(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		return s.parseNodeRules(n)
	}
	if n.Kind != yaml.SequenceNode {
		return errAt(n, "nodes must be a list of node names, or a mapping of node names to rules")
	}
	seen := map[string]int{}
	for _, v := range n.Content {
		if v.Kind != yaml.ScalarNode || !validName(v.Value) {
			return errAt(v, "node %q is not a fully qualified name like /controller", v.Value)
		}
		if line, dup := seen[v.Value]; dup {
			return errAt(v, "node %s listed twice (first on line %d)", v.Value, line)
		}
		seen[v.Value] = v.Line
		s.Nodes = append(s.Nodes, v.Value)
	}
	return nil
}

// parseNodeRules reads the mapping form: every node must be alive, and may bound its busy share.
func (s *Spec) parseNodeRules(n *yaml.Node) error {
	nodes, err := mapping(n, "nodes")
	if err != nil {
		return err
	}
	for _, p := range nodes {
		name := p[0].Value
		if !validName(name) {
			return errAt(p[0], "node %q is not a fully qualified name like /controller", name)
		}
		s.Nodes = append(s.Nodes, name)
		if p[1].Kind == yaml.ScalarNode && (p[1].Tag == "!!null" || p[1].Value == "") {
			continue // "/a:" alone: it must be alive
		}
		pairs, err := mapping(p[1], "node rule of "+name)
		if err != nil {
			return err
		}
		for _, kv := range pairs {
			k, v := kv[0], kv[1]
			if k.Value != "max_busy_pct" {
				return errAt(k, "node %s: unknown key %q (expected max_busy_pct)", name, k.Value)
			}
			pct, err := number(k, v)
			if err != nil {
				return err
			}
			if pct == 0 {
				return errAt(v, "max_busy_pct must be greater than 0")
			}
			s.NodeRules = append(s.NodeRules, NodeRule{Node: name, MaxBusyPct: pct, Line: v.Line})
		}
	}
	return nil
}

func (s *Spec) parseCallbacks(n *yaml.Node) error {
	rules, err := mapping(n, "callbacks")
	if err != nil {
		return err
	}
	for _, p := range rules {
		name := p[0].Value
		if !validName(name) {
			return errAt(p[0], "callbacks: %q is not a fully qualified topic or node name like /scan", name)
		}
		r := CallbackRule{Name: name, Line: p[1].Line}
		pairs, err := mapping(p[1], "callback rule of "+name)
		if err != nil {
			return err
		}
		for _, kv := range pairs {
			k, v := kv[0], kv[1]
			if k.Value != "max_ms" {
				return errAt(k, "callbacks %s: unknown key %q (expected max_ms)", name, k.Value)
			}
			if r.MaxMs, err = number(k, v); err != nil {
				return err
			}
			if r.MaxMs == 0 {
				return errAt(v, "max_ms must be greater than 0")
			}
		}
		if r.MaxMs == 0 {
			return errAt(p[1], "callbacks %s: a rule needs max_ms", name)
		}
		s.Callbacks = append(s.Callbacks, r)
	}
	return nil
}

// actionTopics are the parts of an action that are topics, not services.
var actionTopics = []string{"/_action/feedback", "/_action/status"}

// serviceName checks a service or action rule's name.
func serviceName(k *yaml.Node, what string) error {
	if !validName(k.Value) {
		return errAt(k, "%s: %q is not a fully qualified %s name like /add_two_ints", what, k.Value, strings.TrimSuffix(what, "s"))
	}
	for _, suffix := range actionTopics {
		if strings.HasSuffix(k.Value, suffix) {
			return errAt(k, "%s: %s is an action's topic, not a service: give it a rule under topics", what, k.Value)
		}
	}
	return nil
}

func (s *Spec) parseServices(n *yaml.Node) error {
	rules, err := mapping(n, "services")
	if err != nil {
		return err
	}
	for _, p := range rules {
		name := p[0].Value
		if err := serviceName(p[0], "services"); err != nil {
			return err
		}
		r := ServiceRule{Name: name, MaxResponseMs: math.Inf(1), MaxOutstanding: math.Inf(1), Line: p[1].Line}
		pairs, err := mapping(p[1], "service rule of "+name)
		if err != nil {
			return err
		}
		for _, kv := range pairs {
			k, v := kv[0], kv[1]
			switch k.Value {
			case "side":
				if v.Kind != yaml.ScalarNode || v.Value != "server" && v.Value != "client" {
					return errAt(v, "services %s: side must be server or client, not %q", name, v.Value)
				}
				r.Client = v.Value == "client"
			case "min_hz":
				if r.MinHz, err = number(k, v); err == nil && r.MinHz == 0 {
					err = errAt(v, "min_hz must be greater than 0")
				}
			case "max_response_ms":
				if r.MaxResponseMs, err = number(k, v); err == nil && r.MaxResponseMs == 0 {
					err = errAt(v, "max_response_ms must be greater than 0")
				}
			case "max_outstanding":
				var f float64
				if f, err = number(k, v); err == nil && f != math.Trunc(f) {
					err = errAt(v, "max_outstanding must be a whole number of calls")
				}
				r.MaxOutstanding = f
			default:
				err = errAt(k, "services %s: unknown key %q (expected min_hz, max_response_ms, max_outstanding, side)", name, k.Value)
			}
			if err != nil {
				return err
			}
		}
		if r.MinHz == 0 && math.IsInf(r.MaxResponseMs, 1) && math.IsInf(r.MaxOutstanding, 1) {
			return errAt(p[1], "services %s: a rule needs min_hz, max_response_ms or max_outstanding", name)
		}
		for _, o := range s.Services {
			if o.Name == r.Name && o.Client == r.Client {
				return errAt(p[0], "services %s: a second rule for its %s side (first on line %d)", name, r.Side(), o.Line)
			}
		}
		s.Services = append(s.Services, r)
	}
	return nil
}

func (s *Spec) parseActions(n *yaml.Node) error {
	rules, err := mapping(n, "actions")
	if err != nil {
		return err
	}
	for _, p := range rules {
		name := p[0].Value
		if err := serviceName(p[0], "actions"); err != nil {
			return err
		}
		if strings.Contains(name, "/_action/") {
			return errAt(p[0], "actions: %s is a part of an action: name the action itself (without /_action/...)", name)
		}
		r := ActionRule{Name: name, MaxAcceptMs: math.Inf(1), MaxResultMs: math.Inf(1), Line: p[1].Line}
		pairs, err := mapping(p[1], "action rule of "+name)
		if err != nil {
			return err
		}
		for _, kv := range pairs {
			k, v := kv[0], kv[1]
			var bound *float64
			switch k.Value {
			case "max_accept_ms":
				bound = &r.MaxAcceptMs
			case "max_result_ms":
				bound = &r.MaxResultMs
			default:
				return errAt(k, "actions %s: unknown key %q (expected max_accept_ms, max_result_ms)", name, k.Value)
			}
			if *bound, err = number(k, v); err == nil && *bound == 0 {
				err = errAt(v, "%s must be greater than 0", k.Value)
			}
			if err != nil {
				return err
			}
		}
		if math.IsInf(r.MaxAcceptMs, 1) && math.IsInf(r.MaxResultMs, 1) {
			return errAt(p[1], "actions %s: a rule needs max_accept_ms or max_result_ms", name)
		}
		s.Actions = append(s.Actions, r)
	}
	return nil
}

// namesNotTopics refuses a service or action rule that names a topic the spec's own topic rules name.
func (s *Spec) namesNotTopics() error {
	topics := map[string]int{}
	for _, t := range s.Topics {
		topics[t.Topic] = t.Line
	}
	for _, r := range s.Services {
		if line, ok := topics[r.Name]; ok {
			return fmt.Errorf("line %d: services: %s is a topic (its rule is on line %d), not a service", r.Line, r.Name, line)
		}
	}
	for _, r := range s.Actions {
		if line, ok := topics[r.Name]; ok {
			return fmt.Errorf("line %d: actions: %s is a topic (its rule is on line %d), not an action", r.Line, r.Name, line)
		}
	}
	return nil
}

func (s *Spec) parseTimers(n *yaml.Node) error {
	nodes, err := mapping(n, "timers")
	if err != nil {
		return err
	}
	for _, t := range nodes {
		if !validName(t[0].Value) {
			return errAt(t[0], "timer node %q is not a fully qualified name", t[0].Value)
		}
		r := TimerRule{Node: t[0].Value, Ordinal: -1, MaxLateMs: math.Inf(1), MaxOverruns: math.Inf(1), Line: t[1].Line}
		pairs, err := mapping(t[1], "timer rule of "+r.Node)
		if err != nil {
			return err
		}
		for _, p := range pairs {
			k, v := p[0], p[1]
			switch k.Value {
			case "min_hz":
				if r.MinHz, err = number(k, v); err == nil && r.MinHz == 0 {
					err = errAt(v, "min_hz must be greater than 0")
				}
			case "timer":
				var f float64
				if f, err = number(k, v); err == nil && (f != math.Trunc(f) || f > 1000) {
					err = errAt(v, "timer must be a small whole number (0 is the node's first timer)")
				}
				r.Ordinal = int(f)
			case "max_late_ms":
				if r.MaxLateMs, err = number(k, v); err == nil && r.MaxLateMs == 0 {
					err = errAt(v, "max_late_ms must be greater than 0")
				}
			case "max_overruns":
				var f float64
				if f, err = number(k, v); err == nil && f != math.Trunc(f) {
					err = errAt(v, "max_overruns must be a whole number of callbacks per window")
				}
				r.MaxOverruns = f
			default:
				err = errAt(k, "timer %s: unknown key %q (expected min_hz, max_late_ms, max_overruns, timer)", r.Node, k.Value)
			}
			if err != nil {
				return err
			}
		}
		if r.MinHz == 0 && !r.HasTiming() {
			return errAt(t[1], "timer %s: a rule needs min_hz, max_late_ms or max_overruns", r.Node)
		}
		s.Timers = append(s.Timers, r)
	}
	return nil
}
