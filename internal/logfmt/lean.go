package logfmt

import (
	"math"

	"ros2_pulse/internal/window"
)

// Lean is w as a lean window of a record with a detail period: its topics'
// rates, gaps, latency and losses, its nodes, processes, diagnoses and
// end-to-end paths, but no endpoints, timers, callbacks, busy shares,
// threads, calls or links (the
// detail window written every detail period carries those). Its rates are
// rounded to whole messages over the window (within half a message of the
// measured rate), because the digits below that are the scans' jitter:
// they are what a compressor cannot squeeze out of a day of 1 s windows.
// buf is reused for the topics (pass the previous call's); w is untouched.
func Lean(w *window.Window, buf []window.Topic) (*window.Window, []window.Topic) {
	out := &window.Window{
		Run: w.Run, TsNs: w.TsNs, Seconds: w.Seconds, Nodes: w.Nodes, Procs: w.Procs,
		Unmatched: w.Unmatched, Paths: w.Paths, Lean: true,
	}
	// Over the window's length as its header writes it (to the ms): then
	// rate × window_s is a whole number, and the same count in windows of
	// the same written length is the same text.
	secs := math.Round(w.Seconds*1000) / 1000
	buf = append(buf[:0], w.Topics...)
	for i := range buf {
		t := &buf[i]
		t.Pubs, t.Subs = nil, nil
		t.PubInter = toMessage(t.PubInter, secs)
		t.PubIntra = toMessage(t.PubIntra, secs)
		t.PubAny = toMessage(t.PubAny, secs)
		t.RecvInter = toMessage(t.RecvInter, secs)
		t.RecvIntra = toMessage(t.RecvIntra, secs)
	}
	out.Topics = buf
	return out, buf
}

// toMessage rounds a rate to whole messages over a window of secs.
func toMessage(hz, secs float64) float64 {
	if secs <= 0 || hz == 0 {
		return hz
	}
	n := math.Round(hz * secs)
	if n == 0 {
		return hz // something counted: never round a live rate to silence
	}
	return n / secs
}
