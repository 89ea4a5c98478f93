package export

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// Labels of the service families: the service, the node and process of the
// server or client, and its side.
var callLabels = []string{"service", "node", "pid", "side"}

// servedHere is every service a live process here serves.
func servedHere(scan *segment.Scan) map[string]bool {
	served := map[string]bool{}
	for _, s := range scan.Snapshots {
		for i := range s.Endpoints {
			if e := &s.Endpoints[i]; s.Alive && e.Kind == segment.KindService && !e.Retired() {
				served[e.Name] = true
			}
		}
	}
	return served
}

// calls adds one service server's or client's calls to this scrape (ABI 1.6,
// any client library): requests taken or sent, answered, abandoned, a
// server's responses it could not send (ABI 1.8), the
// answered calls' time (server: take to response; client: round trip), the
// calls open now and the oldest's age, and a client's missing server. A
// parameter service that has handled nothing yet (every node has seven)
// adds nothing.
func (c *Collector) calls(e *segment.Endpoint, key, node, pid string, mono uint64, alive bool, created time.Time,
	preexisting bool, served map[string]bool) {
	k := e.Calls
	if k == nil || e.Retired() || window.IsParameterService(e.Name) && k.Started == 0 {
		return
	}
	side := "server"
	if e.Kind == segment.KindClient {
		side = "client"
	}
	labels := []string{e.Name, node, pid, side}
	c.merge(c.d.serviceRequests, prometheus.CounterValue, float64(k.Started), nil, created, labels...)
	c.merge(c.d.serviceResponses, prometheus.CounterValue, float64(k.Answered), nil, created, labels...)
	c.merge(c.d.serviceAbandoned, prometheus.CounterValue, float64(k.Evicted), nil, created, labels...)
	if k.HasSendFailed && e.Kind == segment.KindService { // absent: a client, or a probe before ABI 1.8 (not measured)
		c.merge(c.d.serviceSendFailed, prometheus.CounterValue, float64(k.SendFailed), nil, created, labels...)
	}
	if !c.opt.NoHistograms {
		id := key + "#" + strconv.Itoa(e.Index) + "." + strconv.FormatUint(uint64(e.Generation), 10) + ".calls"
		vals, _ := c.histValues(id, k.Buckets[:], k.SumNs, preexisting)
		c.mergeTiming(c.d.serviceResponse, vals, created, labels...)
	}
	if !alive {
		return // an exited process waits for nothing
	}
	oldest := 0.0
	if len(k.Open) > 0 {
		oldest = float64(mono-min(mono, k.Open[0])) / 1e9
	}
	c.merge(c.d.serviceOutstanding, prometheus.GaugeValue, float64(len(k.Open)), nil, time.Time{}, labels...)
	c.merge(c.d.serviceOldest, prometheus.GaugeValue, oldest, nil, time.Time{}, labels...)
	if e.Kind == segment.KindClient {
		missing := 1.0
		if served[e.Name] {
			missing = 0
		}
		c.merge(c.d.serverMissing, prometheus.GaugeValue, missing, nil, time.Time{}, e.Name, node, pid)
	}
}
