package top

import (
	"context"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"ros2_pulse/internal/cpu"
	"ros2_pulse/internal/health"
	"ros2_pulse/internal/logfmt"
	"ros2_pulse/internal/recorder"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// Hook returns a recorder OnWindow hook that turns each window into a
// frame: the spec verdicts the recorder passed (as in record and check),
// recv_lag, the publishers and subscriptions that meet nobody, and the CPU
// of every live probed process; then sends it.
func Hook(send func(tea.Msg)) (func(*window.Window, []health.Warning, bool), error) {
	sampler, err := cpu.New("", false)
	if err != nil {
		return nil, err
	}
	lag := health.NewLagDetector()
	return func(w *window.Window, warns []health.Warning, final bool) {
		now := time.Unix(0, w.TsNs)
		f := Frame{W: w, At: now, Live: true, CPU: map[int]cpu.Sample{}}
		f.Warns = lag.ViewWarnings(w, warns, final, now)
		for _, s := range sampler.Sample(cpu.Targets(w.Procs, false, "")) {
			f.CPU[s.Pid] = s
		}
		if final {
			sampler.Close() // the last window: nothing samples again
		}
		send(FrameMsg(f))
	}, nil
}

// Live samples the segment directory every opt.Period and sends a frame per
// window until ctx ends; send gets an EndMsg if reading fails.
func Live(ctx context.Context, dir string, opt recorder.Options, send func(tea.Msg)) error {
	hook, err := Hook(send)
	if err != nil {
		return err
	}
	opt.Out = nil
	opt.Empty = "" // the screen says it (Model.Empty): stderr is under the dashboard
	opt.OnWindow = hook
	rec, err := recorder.New(dir, opt)
	if err != nil {
		send(EndMsg{Err: err})
		return err
	}
	defer rec.Close()
	if err := rec.Run(ctx); err != nil {
		send(EndMsg{Err: err})
		return err
	}
	return nil
}

// LoadLog reads a recorded log (text or jsonl) and judges it like `pulse
// check` would (s may be nil): one frame per window, in order.
func LoadLog(path string, s *spec.Spec) ([]Frame, *logfmt.ReadResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	res, err := logfmt.Read(f)
	if err != nil {
		return nil, res, err
	}
	var frames []Frame
	windows := logfmt.Replayed(res.Windows) // a lean record's windows with their minute's detail
	if s != nil {
		for _, m := range health.JudgeRuns(s, [][]*window.Window{windows}, false) {
			frames = append(frames, Frame{W: m.W, Warns: m.Warns, At: time.Unix(0, m.W.TsNs)})
		}
	} else {
		for _, w := range windows {
			frames = append(frames, Frame{W: w, At: time.Unix(0, w.TsNs)})
		}
	}
	for i := range frames {
		frames[i].Warns = append(frames[i].Warns, health.FullSegments(frames[i].W)...)
		frames[i].Warns = append(frames[i].Warns, health.SendFailures(frames[i].W)...)
	}
	// A recording ends with the windows after its processes exited, which
	// carry no topic: the replay ends on the last window that shows the run.
	for len(frames) > 1 && len(frames[len(frames)-1].W.Topics) == 0 {
		frames = frames[:len(frames)-1]
	}
	return frames, res, nil
}

// Replay sends frames one per period, then an EndMsg.
func Replay(ctx context.Context, frames []Frame, period time.Duration, send func(tea.Msg)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for i, f := range frames {
		send(FrameMsg(f))
		if i == len(frames)-1 {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	send(EndMsg{Err: nil})
}
