package window

import (
	"math"
	"strings"

	"ros2_pulse/internal/segment"
)

// Call is one service server's or client's calls over the window (ABI 1.6),
// from the rcl functions both client libraries call: a server's requests
// taken and answered with the handling time from take to response, a
// client's requests sent and answered with the round trip. Counts are the
// window's; Open and its ages are as of the window's end.
type Call struct {
	Pid       int
	Node      string
	Name      string // the service name
	Client    bool   // a client; else a server
	Alive     bool   // its process is alive (an exited one's calls show in the window it exited in)
	Started   uint64 // server: requests taken; client: requests sent
	Answered  uint64 // answered in the window (matched to their call)
	Hz        float64
	Time      Durations // the answered calls' handling time (server) or round trip (client)
	Hist      []Bucket  // the same durations by bucket (TimeBucketBounds), to judge a bound after the fact
	Open      []float64 // ages in ms of the calls open at the window's end, oldest first (at most segment.CallRing)
	Evicted   uint64    // calls given up on: still open when CallRing newer calls had been made
	Unmatched uint64    // answers to no open call (a call evicted before, or another client's)
	// SendFailed: a server's responses rcl_send_response refused in the
	// window (ABI 1.8; RCL_RET_TIMEOUT: its client went away before the
	// answer). Those calls are closed: not answered, not open, not timed.
	SendFailed uint64
	// FailKnown: a server whose probe counts refused responses (ABI 1.8);
	// false for a client, and for a server of an older probe (not measured).
	FailKnown bool
	// HasServer: a client whose service a live process here serves. A
	// client of a service no process on this machine serves never hears back.
	HasServer bool
}

// Bucket is one duration bucket's count in a window.
type Bucket struct {
	B int    `json:"b"`
	N uint64 `json:"n"`
}

// Side names the side of a call: "server" or "client".
func (c *Call) Side() string {
	if c.Client {
		return "client"
	}
	return "server"
}

// Late counts the answered calls of the window that took longer than
// boundMs: those in buckets wholly above it (a bucket spans 1/8 of its lower
// bound, so an answer within that of the bound is never called late).
func (c *Call) Late(boundMs float64) uint64 {
	var n uint64
	for _, b := range c.Hist {
		if lo, _ := TimeBucketBounds(b.B); lo/1e6 >= boundMs {
			n += b.N
		}
	}
	return n
}

// Overdue counts the calls open at the window's end for longer than boundMs.
func (c *Call) Overdue(boundMs float64) int {
	n := 0
	for _, age := range c.Open {
		if age > boundMs {
			n++
		}
	}
	return n
}

// Timeouts counts the calls that passed boundMs without an answer during
// this window: answered late in it, or still open past the bound at its end,
// less those already open past the bound at the previous window's end
// (prevOverdue: they were counted then), plus calls given up on (evicted).
func (c *Call) Timeouts(boundMs float64, prevOverdue int) uint64 {
	n := int64(c.Late(boundMs)) + int64(c.Overdue(boundMs)) - int64(prevOverdue) + int64(c.Evicted)
	return uint64(max(n, 0))
}

// ShownAs is the name the views show a call under: its action's, with the
// part (send_goal, cancel_goal, get_result), for an action's service, else
// its service's own with part "".
func (c *Call) ShownAs() (name, part string, isAction bool) {
	if name, part, ok := ActionOf(c.Name); ok {
		return name, part, true
	}
	return c.Name, "", false
}

// Idle reports a parameter service nothing has called: every node serves
// seven, and the views leave them out until they are used.
func (c *Call) Idle() bool {
	return IsParameterService(c.Name) && c.Started+c.Answered+c.SendFailed == 0 && len(c.Open) == 0
}

// OldestMs is the age of the oldest open call, 0 when none is open.
func (c *Call) OldestMs() float64 {
	if len(c.Open) == 0 {
		return 0
	}
	return c.Open[0]
}

// parameterServices are the six every node serves (rclcpp and rclpy alike),
// and the type description service every Jazzy+ node serves.
var parameterServices = []string{"/get_parameters", "/get_parameter_types", "/set_parameters", "/set_parameters_atomically",
	"/describe_parameters", "/list_parameters", "/get_type_description"}

// IsParameterService reports one of the services every node serves.
func IsParameterService(name string) bool {
	for _, suffix := range parameterServices {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// Action parts: an action is three services and two topics under <name>/_action/.
const actionInfix = "/_action/"

// ActionOf splits a service or topic name of an action into the action's
// name and its part ("send_goal", "cancel_goal", "get_result", "feedback",
// "status"); ok false for anything else.
func ActionOf(name string) (action, part string, ok bool) {
	i := strings.LastIndex(name, actionInfix)
	if i <= 0 {
		return "", "", false
	}
	part = name[i+len(actionInfix):]
	switch part {
	case "send_goal", "cancel_goal", "get_result", "feedback", "status":
		return name[:i], part, true
	}
	return "", "", false
}

// IsServiceEvent reports a service introspection topic (Iron+:
// <service>/_service_event, published only when introspection is on).
func IsServiceEvent(topic string) bool { return strings.HasSuffix(topic, "/_service_event") }

// callOf diffs one service's or client's calls record from base (nil: from
// its creation) to e, at t2 (CLOCK_MONOTONIC ns).
func callOf(s *segment.Snapshot, e, base *segment.Endpoint, exposure float64, t2 uint64) Call {
	c := Call{Pid: s.Pid, Name: e.Name, Client: e.Kind == segment.KindClient, Alive: s.Alive}
	if e.Node >= 0 {
		c.Node = s.Nodes[e.Node].Name
	}
	cur := e.Calls
	var prev *segment.Calls
	if base != nil {
		prev = base.Calls
	}
	c.FailKnown = !c.Client && cur.HasSendFailed
	if prev == nil {
		c.Started, c.Answered, c.Evicted, c.Unmatched = cur.Started, cur.Answered, cur.Evicted, cur.Unmatched
		c.SendFailed = cur.SendFailed
	} else {
		c.Started, c.Answered = sub(cur.Started, prev.Started), sub(cur.Answered, prev.Answered)
		c.Evicted, c.Unmatched = sub(cur.Evicted, prev.Evicted), sub(cur.Unmatched, prev.Unmatched)
		c.SendFailed = sub(cur.SendFailed, prev.SendFailed)
	}
	// A call record never answered (most: a node's idle parameter services)
	// has an empty histogram; segment.readCalls did not even read it.
	if cur.Answered > 0 || cur.SumNs > 0 {
		var acc durAcc
		if prev == nil {
			acc.add(0, nil, cur.SumNs, &cur.Buckets)
		} else {
			acc.add(prev.SumNs, &prev.Buckets, cur.SumNs, &cur.Buckets)
		}
		c.Time = acc.stats()
		c.Hist = sparse(&acc.delta)
	}
	if exposure > 0 {
		c.Hz = float64(c.Started) / exposure
	}
	for _, start := range cur.Open {
		if !s.Alive {
			break // a dead process's calls are not waiting for anything
		}
		c.Open = append(c.Open, math.Round(float64(t2-min(t2, start))/1e4)/100) // ms, to 10 µs
	}
	return c
}

// linkServers marks each client whose service a live process serves.
func linkServers(calls []Call) {
	served := map[string]bool{}
	for _, c := range calls {
		if !c.Client && c.Alive {
			served[c.Name] = true
		}
	}
	for i := range calls {
		calls[i].HasServer = calls[i].Client && served[calls[i].Name]
	}
}
