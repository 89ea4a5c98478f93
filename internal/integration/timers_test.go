package integration

import (
	"testing"
	"time"

	"ros2_pulse/internal/window"
)

func timer(w *window.Window, node string, ordinal int) *window.Timer {
	for i := range w.Timers {
		if w.Timers[i].Node == node && w.Timers[i].Ordinal == ordinal {
			return &w.Timers[i]
		}
	}
	return nil
}

// Each rclcpp timer reads its node, configured period and firing rate.
func TestTimerRates(t *testing.T) {
	g := sim(t, "testdata/selfloop.graph", "jazzy", 3*time.Second)
	rec := newRecorder(t, g.dir, time.Second, window.Options{})
	ws := record(t, g, rec, time.Second)
	g.wait()
	for i, w := range ws[:len(ws)-1] {
		// /self_loop: its plain 100 Hz timer first, then the timer that publishes /loop at 50 Hz.
		// A timer woken late catches up on its absolute schedule, so one window
		// can hold an extra firing that the next one lacks: two messages of slack.
		for ord, hz := range []float64{100, 50} {
			tm := timer(w, "/self_loop", ord)
			if tm == nil || tm.PeriodMs != 1000/hz || !within(tm.Hz, hz, tm.Exposure, 2) {
				t.Errorf("window %d: /self_loop timer %d = %+v, want %.0f Hz", i, ord, tm, hz)
			}
		}
		if tm := timer(w, "/pinger", 0); tm == nil || !within(tm.Hz, 20, tm.Exposure, 1) {
			t.Errorf("window %d: /pinger client timer %+v", i, tm)
		}
	}
}

// A wedged control loop whose subscription still drains: the topic looks
// healthy, the TIMER line drops to zero for the length of the wedge.
func TestWedgedTimerShows(t *testing.T) {
	g := sim(t, "testdata/wedged_timer.graph", "jazzy", 3*time.Second)
	const period = 500 * time.Millisecond
	rec := newRecorder(t, g.dir, period, window.Options{})
	ws := record(t, g, rec, period)
	g.wait()
	wedged, healthy := 0, 0
	for _, w := range ws[1 : len(ws)-1] {
		imu, tm := w.Topic("/imu"), timer(w, "/controller", 0)
		if imu == nil || tm == nil {
			t.Fatalf("missing /imu or the /controller timer: %+v %+v", imu, tm)
		}
		if !within(imu.RecvInter, 100, imu.Exposure, 1) {
			t.Errorf("/imu should keep flowing at 100 Hz: %.2f", imu.RecvInter)
		}
		switch {
		case tm.Hz == 0:
			wedged++
		case within(tm.Hz, 100, tm.Exposure, 1):
			healthy++
		}
	}
	if wedged < 1 || healthy < 2 {
		t.Errorf("want windows with the timer at 0 Hz and at 100 Hz: %d wedged, %d healthy", wedged, healthy)
	}
}
