package integration

import (
	"math"
	"testing"
	"time"

	"ros2_pulse/internal/window"
)

// Latency at rmw_take, for rclpy and rclcpp subscriptions alike: each
// topic's median falls in the histogram bucket of the injected delay, its
// mean (from the exact sum) within a millisecond, and no percentile below it.
// Off by default: no latency data, no realtime clock read.
func TestLatencyMatchesInjectedDelay(t *testing.T) {
	skipUnderEmulation(t, "a message age")
	g := sim(t, "testdata/latency.graph", "jazzy", 4*time.Second, "ROS_TOPIC_STATS_LATENCY=1")
	rec := newRecorder(t, g.dir, time.Second, window.Options{})
	ws := record(t, g, rec, time.Second)
	g.wait()
	checked := 0
	for i, w := range ws[:len(ws)-1] {
		for topic, delay := range map[string]float64{"/cam": 25, "/imu": 40} {
			tp := w.Topic(topic)
			if tp == nil || !tp.Latency.HasData || tp.Latency.N == 0 {
				t.Fatalf("window %d: no latency for %s: %+v", i, topic, tp)
			}
			l := tp.Latency
			// A bucket spans 1/16 of its lower bound; the socket hop adds well
			// under a millisecond. The tail also measures real wake-up delays of
			// the subscriber (a loaded machine showed +4 ms): the median must
			// sit in the injected delay's bucket, the tail only never below it.
			for name, v := range map[string]float64{"p50": l.P50Ms, "p99": l.P99Ms, "max": l.MaxMs} {
				slack := 1.0
				if name != "p50" {
					slack = 10
				}
				if v < delay || v > delay*(1+1.0/16)+slack {
					t.Errorf("window %d %s latency %s = %.3f ms, injected %g ms", i, topic, name, v, delay)
				}
			}
			if math.Abs(l.MeanMs-delay) > 1 {
				t.Errorf("window %d %s mean latency %.3f ms, injected %g ms", i, topic, l.MeanMs, delay)
			}
			checked++
		}
	}
	for topic := range map[string]bool{"/cam": true, "/imu": true} {
		l := ws[1].Topic(topic).Latency
		t.Logf("%s: n=%d mean %.3f ms, p50 %.3f, p99 %.3f, max %.3f", topic, l.N, l.MeanMs, l.P50Ms, l.P99Ms, l.MaxMs)
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
