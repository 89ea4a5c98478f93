package integration

import (
	"testing"
	"time"

	"ros2_pulse/internal/window"
)

func TestLinksChainProbe(t *testing.T) {
	g := sim(t, "chain", "jazzy", 5*time.Second, "ROS_PULSE_LINKS=1")
	rec := newRecorder(t, g.dir, time.Second, window.Options{})
	ws := record(t, g, rec, time.Second)
	g.wait()
	for _, w := range ws {
		for _, l := range w.Links {
			t.Logf("link %s %s -> %s n=%d unaged=%d age p50 %.2f mean %.2f own mean %.2f", l.Node, l.From, l.To, l.N, l.Unaged, l.Age.P50Ms, l.Age.MeanMs, l.Own.MeanMs)
		}
		for _, p := range w.Paths {
			t.Logf("path %s measured=%v missing=%q n=%d best %+v", p.Name, p.Measured, p.Missing, p.N, p.Best)
		}
	}
}
