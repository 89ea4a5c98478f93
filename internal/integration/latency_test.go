package integration

import (
	"math"
	"testing"
	"time"

	"ros2_pulse/internal/window"
)

// Latency at rmw_take, for rclpy and rclcpp subscriptions alike, judged
// against what the graph did: each message's age when it was taken (the
// graph's own clock, truth.h TT_E2E_*) plus the delay injected into its
// source timestamp. Over the run, as many messages are timed as the graph
// delivered, their mean is the graph's within half a millisecond and the
// longest is in the bucket of the graph's oldest; in every window the median
// falls in the injected delay's bucket (the socket hop adds well under a
// millisecond) and no percentile is below the delay. A stalled subscriber
// makes real late messages, which the graph's own ages count too (a loaded
// CI machine once took one 17 ms late). Off by default: no latency data, no
// realtime clock read.
func TestLatencyMatchesInjectedDelay(t *testing.T) {
	skipUnderEmulation(t, "a message age")
	g := sim(t, "testdata/latency.graph", "jazzy", 4*time.Second, "ROS_TOPIC_STATS_LATENCY=1")
	rec := newRecorder(t, g.dir, time.Second, window.Options{})
	ws := record(t, g, rec, time.Second)
	g.wait()
	truth := g.truth()
	delays := map[string]float64{"/cam": 25, "/imu": 40}
	type total struct{ n, sumMs, maxMs float64 }
	probe := map[string]*total{"/cam": {}, "/imu": {}}
	checked := 0
	for i, w := range ws {
		for topic, delay := range delays {
			tp := w.Topic(topic)
			if tp == nil || !tp.Latency.HasData || tp.Latency.N == 0 {
				if i == len(ws)-1 {
					continue // the final window may end before another message
				}
				t.Fatalf("window %d: no latency for %s: %+v", i, topic, tp)
			}
			l := tp.Latency
			p := probe[topic]
			p.n += float64(l.N)
			p.sumMs += l.MeanMs * float64(l.N)
			p.maxMs = max(p.maxMs, l.MaxMs)
			if i == len(ws)-1 {
				continue // a few messages: its percentiles say little
			}
			if l.P50Ms < delay || l.P50Ms > delay*(1+1.0/16)+1 {
				t.Errorf("window %d %s latency p50 = %.3f ms, injected %g ms", i, topic, l.P50Ms, delay)
			}
			if l.P99Ms < delay || l.MaxMs < delay {
				t.Errorf("window %d %s latency p99 %.3f, max %.3f ms: below the injected %g ms", i, topic, l.P99Ms, l.MaxMs, delay)
			}
			checked++
		}
	}
	for _, k := range truth.Keys() {
		delay, ok := delays[k.Topic]
		if !ok || k.Kind != "sub" {
			continue
		}
		tm, p := truth.Timing[k], probe[k.Topic]
		if tm.E2EN == 0 || p.n != float64(tm.E2EN) {
			t.Errorf("%s: %v messages timed, the graph took %d", k, p.n, tm.E2EN)
			continue
		}
		want := float64(tm.E2ENs)/float64(tm.E2EN)/1e6 + delay
		wantMax := float64(tm.E2EMaxNs)/1e6 + delay
		t.Logf("%s: mean %.3f ms, max %.3f; the graph's age plus the delay: mean %.3f, max %.3f", k, p.sumMs/p.n, p.maxMs, want, wantMax)
		if math.Abs(p.sumMs/p.n-want) > 0.5 {
			t.Errorf("%s: mean latency %.3f ms, the graph's %.3f", k, p.sumMs/p.n, want)
		}
		if p.maxMs > wantMax*(1+1.0/16)+0.1 {
			t.Errorf("%s: max latency %.3f ms, beyond the bucket of the graph's %.3f", k, p.maxMs, wantMax)
		}
	}
	if checked < 4 {
		t.Fatalf("only %d windows checked", checked)
	}

	g = sim(t, "testdata/latency.graph", "jazzy", 2*time.Second)
	rec = newRecorder(t, g.dir, time.Second, window.Options{})
	ws = record(t, g, rec, time.Second)
	g.wait()
	if tp := ws[0].Topic("/cam"); tp == nil || tp.Latency.HasData {
		t.Errorf("latency tracking is opt-in, yet: %+v", tp)
	}
}
