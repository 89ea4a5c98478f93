package realros

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
)

// Durations are what a node measured of itself: count, sum and max, in ns.
type Durations struct {
	N     uint64 `json:"n"`
	SumNs uint64 `json:"sum_ns"`
	MaxNs uint64 `json:"max_ns"`
}

// MeanMs is the mean in ms, 0 for none.
func (d Durations) MeanMs() float64 {
	if d.N == 0 {
		return 0
	}
	return float64(d.SumNs) / float64(d.N) / 1e6
}

// Endpoint is one publisher, subscription, timer, service, client or action
// endpoint of a test node, as the node counted it.
type Endpoint struct {
	Kind      string    `json:"kind"` // publisher, subscription, timer, service, client, action_server, action_client
	Node      string    `json:"node"` // fully qualified
	Name      string    `json:"name"` // topic, service or action; "" for a timer
	PeriodNs  int64     `json:"period_ns"`
	Count     uint64    `json:"count"`    // published, received, fired, requests handled or sent, goals
	Bytes     uint64    `json:"bytes"`    // publisher: serialized (CDR) bytes sent, encapsulation included
	Answered  uint64    `json:"answered"` // client: responses; action client: results; action server: goals succeeded
	Failed    int64     `json:"failed"`   // service: answers rcl_send_response refused; -1 where the node cannot know (rclpy)
	FirstNs   int64     `json:"first_ns"` // publisher, subscription: CLOCK_MONOTONIC of the first message
	LastNs    int64     `json:"last_ns"`  // and of the last
	Callback  Durations `json:"callback"`
	Late      Durations `json:"late"`
	RoundTrip Durations `json:"round_trip"`
	StampsNs  []int64   `json:"stamps_ns"` // with --stamps (rclcpp): each message's CLOCK_MONOTONIC time
	// A --relay's publisher, per message relayed: its age at the publish
	// since its input's publisher sent it, and since its chain began (realtime ns).
	AgesNs     []int64 `json:"ages_ns"`
	PathAgesNs []int64 `json:"path_ages_ns"`
	// A --sample's publisher, per publish: the age of its input's latest
	// message and of the first since its previous publish (realtime ns).
	SampledBestNs  []int64 `json:"sampled_best_ns"`
	SampledWorstNs []int64 `json:"sampled_worst_ns"`
}

// Between counts the messages stamped in [from, to] (CLOCK_MONOTONIC ns).
func (e *Endpoint) Between(from, to int64) uint64 {
	var n uint64
	for _, t := range e.StampsNs {
		if t >= from && t <= to {
			n++
		}
	}
	return n
}

// Truth is one test process's document (ros/pulse_testnodes: truth.hpp and pulse_node.py).
type Truth struct {
	Pid       int        `json:"pid"`
	Lang      string     `json:"lang"`  // rclcpp or rclpy
	CPU       float64    `json:"cpu_s"` // the process's user + system CPU when it wrote the document
	Endpoints []Endpoint `json:"endpoints"`
}

// ReadTruth reads a node's document.
func ReadTruth(path string) (*Truth, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := ParseTruth(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParseTruth parses a node's document; anything else is an error.
func ParseTruth(b []byte) (*Truth, error) {
	var t Truth
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, err
	}
	if t.Pid <= 0 || (t.Lang != "rclcpp" && t.Lang != "rclpy") {
		return nil, fmt.Errorf("not a test node's truth (pid %d, lang %q)", t.Pid, t.Lang)
	}
	if t.CPU < 0 || math.IsNaN(t.CPU) {
		return nil, fmt.Errorf("a test node's truth with CPU %v s", t.CPU)
	}
	for _, e := range t.Endpoints {
		if e.Kind == "" || e.Node == "" || e.Failed < -1 || e.LastNs < e.FirstNs || len(e.AgesNs) != len(e.PathAgesNs) ||
			len(e.SampledBestNs) != len(e.SampledWorstNs) {
			return nil, fmt.Errorf("a malformed endpoint: %+v", e)
		}
	}
	return &t, nil
}

// Hz is the rate the endpoint really had between its first and last
// message, 0 with fewer than two.
func (e *Endpoint) Hz() float64 {
	if e.Count < 2 || e.LastNs <= e.FirstNs {
		return 0
	}
	return float64(e.Count-1) / (float64(e.LastNs-e.FirstNs) / 1e9)
}
