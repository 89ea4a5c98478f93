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

// Each rclcpp timer reads its node and configured period, and fires in every
// window exactly as often as the graph ran it (judged to the firing).
func TestTimerRates(t *testing.T) {
	g := sim(t, "testdata/selfloop.graph", "jazzy", 3*time.Second)
	ws, _ := judgeRun(t, g, time.Second, []string{""}, 0)
	for i, w := range ws[:len(ws)-1] {
		// /self_loop: its plain 100 Hz timer first, then the timer that publishes /loop at 50 Hz.
		for ord, hz := range []float64{100, 50} {
			if tm := timer(w, "/self_loop", ord); tm == nil || tm.PeriodMs != 1000/hz || tm.Hz == 0 {
				t.Errorf("window %d: /self_loop timer %d = %+v, want a %.0f ms period, firing", i, ord, tm, 1000/hz)
			}
		}
		if tm := timer(w, "/pinger", 0); tm == nil || tm.PeriodMs != 50 || tm.Hz == 0 {
			t.Errorf("window %d: /pinger client timer %+v", i, tm)
		}
	}
}

// A wedged control loop whose subscription still drains: the topic keeps
// its rate, the TIMER line drops to zero for the length of the wedge (every
// window judged against what the graph did, to the message).
func TestWedgedTimerShows(t *testing.T) {
	g := sim(t, "testdata/wedged_timer.graph", "jazzy", 3*time.Second)
	ws, _ := judgeRun(t, g, 500*time.Millisecond, []string{"/imu", ""}, 0)
	wedged, healthy := 0, 0
	for _, w := range ws[1 : len(ws)-1] {
		imu, tm := w.Topic("/imu"), timer(w, "/controller", 0)
		if imu == nil || tm == nil {
			t.Fatalf("missing /imu or the /controller timer: %+v %+v", imu, tm)
		}
		if imu.RecvInter == 0 {
			t.Errorf("/imu should keep flowing: %.2f Hz", imu.RecvInter)
		}
		switch {
		case tm.Hz == 0:
			wedged++
		case tm.Hz > 0:
			healthy++
		}
	}
	if wedged < 1 || healthy < 2 {
		t.Errorf("want windows with the timer at 0 Hz and firing: %d wedged, %d healthy", wedged, healthy)
	}
}
