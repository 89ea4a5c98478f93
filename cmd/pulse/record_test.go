package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ros2_pulse/internal/logfmt"
)

// A recording into a .zst file is compressed, lean (topics every window),
// with a whole window over every --detail period: the two agree on what the
// graph sent, pulse check judges topics in the lean windows and timers in
// the detail windows, and the file ends whole once pulse record stops.
func TestCompressedLeanRecord(t *testing.T) {
	dir := t.TempDir()
	graph := filepath.Join(dir, "g.graph")
	os.WriteFile(graph, []byte("process p\n  node /talker\n    pub /chatter 40\n    timer 20\n  node /listener\n    sub /chatter\n"), 0o600)
	sim, segs := startGraph(t, dir, graph, "8")
	defer sim.Wait()
	logPath := filepath.Join(dir, "r.log.zst")
	rec := pulseCmd(t, "record", "--period", "0.25s", "--detail", "1s", "--duration", "5s", "--out", logPath)
	rec.Env = append(rec.Env, "ROS_PULSE_DIR="+segs)
	var stderr bytes.Buffer
	rec.Stderr = &stderr
	if err := rec.Run(); err != nil {
		t.Fatalf("record: %v\n%s", err, stderr.String())
	}
	raw, _ := os.ReadFile(logPath)
	if !bytes.HasPrefix(raw, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		t.Fatalf("%s is not compressed: %q", logPath, raw[:min(len(raw), 40)])
	}
	res, err := logfmt.Read(bytes.NewReader(raw))
	if err != nil || res.Malformed != 0 {
		t.Fatalf("%v %s", err, res)
	}
	lean, detail := logfmt.SplitDetail(res.Windows)
	if len(lean) < 16 || len(detail) < 4 {
		t.Fatalf("%d lean and %d detail windows", len(lean), len(detail))
	}
	var leanSent, detailSent float64
	for _, w := range lean {
		if !w.Lean || len(w.Timers)+len(w.Callbacks) != 0 {
			t.Fatalf("a lean window carries detail: %+v", w)
		}
		if c := w.Topic("/chatter"); c != nil {
			n := c.PubInter * w.Seconds
			if math.Abs(n-math.Round(n)) > 1e-6 {
				t.Errorf("a lean rate is not whole messages: %v Hz over %v s", c.PubInter, w.Seconds)
			}
			leanSent += n
		}
	}
	for _, w := range detail {
		if len(w.Timers) == 0 || len(w.Callbacks) == 0 {
			t.Errorf("a detail window without timers or callbacks: %+v", w)
		}
		if c := w.Topic("/chatter"); c != nil {
			detailSent += c.PubInter * w.Seconds
		}
	}
	// The same messages, counted twice, over the same span (the lean ones
	// within half a message a window; the detail ones to the written digits).
	if leanSent < 100 || math.Abs(leanSent-detailSent) > 0.5*float64(len(lean))+1 {
		t.Errorf("lean windows count %.1f messages, detail windows %.1f", leanSent, detailSent)
	}
	// Offline: the topic rule is judged every lean window, the timer rule in detail windows.
	spec := filepath.Join(dir, "spec.yaml")
	os.WriteFile(spec, []byte("topics:\n  /chatter: {min_hz: 1000}\ntimers:\n  /talker: {min_hz: 1000}\n"), 0o600)
	check := pulseCmd(t, "check", "--spec", spec, "--skip-last", logPath)
	var out bytes.Buffer
	check.Stdout, check.Stderr = &out, &out
	check.Run()
	topicWarns, timerWarns := strings.Count(out.String(), "WARN TOPIC /chatter"), strings.Count(out.String(), "timer_rate")
	if check.ProcessState.ExitCode() != 1 || topicWarns < len(lean)-4 || topicWarns > len(lean)+len(detail) || timerWarns == 0 || timerWarns > 2*len(detail) {
		t.Errorf("check: exit %d, %d topic and %d timer verdicts for %d lean and %d detail windows:\n%s",
			check.ProcessState.ExitCode(), topicWarns, timerWarns, len(lean), len(detail), out.String())
	}
}
