// Package recorder turns the segment directory into a stream of windows:
// it scans every period (to absolute deadlines), computes the window from
// measured time, writes it in one write, and removes dead segments once
// their final counts are in a written window. Because the probe's counters
// are monotonic, a window that cannot be written is not lost: the next
// window simply spans both periods.
package recorder

import (
	"context"
	"fmt"
	"io"
	"ros2_pulse/internal/diagnose"
	"ros2_pulse/internal/paths"
	"time"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/logfmt"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// Options configure a recorder.
type Options struct {
	Period time.Duration
	Format logfmt.Format
	Log    logfmt.Options
	Window window.Options
	// FromStart: the first window counts every process from its start, as
	// if the baseline were taken before any existed (a recorder started
	// beside processes already running, that wants their whole run).
	FromStart bool
	// Retain is how long an exited process stays in the windows after a
	// reader first saw it exited; then the reader leaves its segment out and
	// removes it (and ended runs' directories with it). Negative: never.
	Retain time.Duration
	// Out receives each rendered window; nil records nothing (OnWindow only).
	Out io.Writer
	// OnWindow sees every window after it was written (live display, summary),
	// with the spec's verdicts when one is loaded.
	OnWindow func(w *window.Window, warns []health.Warning, final bool)
	// Spec, when set, judges every window: WARN and ALERT lines, jsonl warns.
	Spec *spec.Spec
	// Warn receives problems (bad segments, write failures), each once.
	Warn io.Writer
	// Empty is said on Warn when a scan finds no probed process (which
	// directory was read, and why that one).
	Empty string
	// EmptyGrace is how many empty scans pass before Empty is said, until
	// the first process is seen (pulse run: its command starts after the
	// baseline scan).
	EmptyGrace int
	// Run, when set, is written to Out before the first window: the run
	// header that tells this run from others in the same file.
	Run *logfmt.RunInfo
	// Detail, when positive, makes the written windows lean (logfmt.Lean:
	// topics, nodes, processes, diagnoses) and adds a whole window over
	// each Detail period (endpoints, timers, callbacks, threads, calls):
	// what makes a day of 1 s windows of a robot fit in a few hundred MB.
	// OnWindow still sees every window whole.
	Detail time.Duration
	// ReuseWindows computes each window in the previous one's memory
	// (window.Scratch): set it only when neither OnWindow nor Step's caller
	// keeps a window past the next Step (pulse record).
	ReuseWindows bool
}

// Recorder records one directory.
type Recorder struct {
	opt       Options
	eval      *health.Evaluator
	reader    *segment.Reader
	prev      *segment.Scan
	scratch   window.Scratch // Compute's memory, kept across windows
	start     uint64
	reported  map[string]string
	writeErr  string
	empty     segment.EmptyNotice
	starved   *health.LagDetector // machine warnings that need no spec
	diagnosis diagnose.Memo       // why endpoints meet nobody, recomputed when the graph changes
	headed    bool                // the run header is written

	// With Options.Detail: the scan the next detail window starts from,
	// when it was taken, and that window's own memory.
	detailPrev    *segment.Scan
	detailAt      time.Time
	detailScratch window.Scratch
	leanTopics    []window.Topic
}

// New starts a recorder on dir and takes its baseline scan.
func New(dir string, opt Options) (*Recorder, error) {
	if opt.Period <= 0 {
		return nil, fmt.Errorf("period must be positive")
	}
	if opt.Warn == nil {
		opt.Warn = io.Discard
	}
	r := &Recorder{opt: opt, reader: segment.NewReader(dir), reported: map[string]string{},
		empty: segment.EmptyNotice{Msg: opt.Empty, Grace: opt.EmptyGrace}, starved: health.NewLagDetector()}
	r.reader.Retain(opt.Retain, true)
	r.scratch.ReuseWindows = opt.ReuseWindows
	if opt.Spec != nil {
		r.eval = health.New(opt.Spec)
	}
	r.start = segment.NowMono()
	scan, err := r.reader.Scan()
	if err != nil {
		return nil, err
	}
	r.report(scan)
	r.prev = scan
	if opt.FromStart {
		r.prev = nil
	}
	if opt.Detail > 0 && opt.Out != nil {
		r.detailPrev, r.detailAt = scan, time.Now()
		r.detailScratch.ReuseWindows = true // rendered at once, kept by nobody
		if opt.Run != nil {
			opt.Run.DetailS = opt.Detail.Seconds()
		}
	}
	return r, nil
}

// Close ends a compressed file's frame and releases the mappings.
func (r *Recorder) Close() {
	if f, ok := r.opt.Out.(*RotatingFile); ok {
		if err := f.Close(); err != nil {
			fmt.Fprintf(r.opt.Warn, "pulse: cannot end %s: %v (its windows up to the last stay readable)\n", f.Path, err)
		}
	}
	r.reader.Close()
}

func (r *Recorder) report(scan *segment.Scan) {
	r.empty.Observe(scan, r.opt.Warn)
	current := map[string]bool{}
	for _, p := range scan.Problems {
		current[p.Path] = true
		if r.reported[p.Path] != p.Err.Error() {
			r.reported[p.Path] = p.Err.Error()
			fmt.Fprintf(r.opt.Warn, "pulse: skipping segment %v\n", p)
		}
	}
	for path := range r.reported {
		if !current[path] {
			delete(r.reported, path)
		}
	}
}

// Step closes the current window: scan, compute, write, clean up.
func (r *Recorder) Step(final bool) (*window.Window, error) {
	scan, err := r.reader.Scan()
	if err != nil {
		return nil, err
	}
	r.report(scan)
	w := r.scratch.Compute(r.prev, scan, r.start, time.Now().UnixNano(), r.opt.Window)
	w.Unmatched = r.diagnosis.Unmatched(scan)
	r.fillPaths(w)
	// The final window is written however short: a log's last window is
	// always the run's final one, which offline checks skip (--skip-last)
	// exactly as live ones do not judge it.
	var warns []health.Warning
	now := time.Now()
	if r.eval != nil {
		warns = r.eval.Judge(w, final, now)
	}
	// A subscription that hears nothing while its topic is published here
	// is said with or without a spec (it is not a spec verdict).
	for _, m := range r.starved.Observe(w, final, now) {
		if m.Kind == health.RecvStarved {
			warns = append(warns, m)
		}
	}
	// So is a server whose responses could not be sent (its clients left first).
	warns = append(warns, health.SendFailures(w)...)
	detailDue := r.detailPrev != nil && (final || now.Sub(r.detailAt) >= r.opt.Detail-r.opt.Period/2)
	if r.opt.Out != nil {
		lo := r.opt.Log
		lo.Warns = warns
		var b []byte
		if r.detailPrev != nil {
			var lean *window.Window
			lean, r.leanTopics = logfmt.Lean(w, r.leanTopics)
			b = logfmt.Render(r.opt.Format, lean, lo)
			if detailDue { // in the same write: the pair is written or neither is
				b = append(b, r.detailWindow(scan, w.Unmatched)...)
			}
		} else {
			b = logfmt.Render(r.opt.Format, w, lo)
		}
		if r.opt.Run != nil && !r.headed { // one write with the first window: never a header without it
			b = append(logfmt.RenderRun(r.opt.Format, *r.opt.Run), b...)
		}
		if _, err := r.opt.Out.Write(b); err != nil {
			if msg := err.Error(); msg != r.writeErr {
				r.writeErr = msg
				fmt.Fprintf(r.opt.Warn, "pulse: cannot write window (%v); counts are kept and the next window will cover this one\n", err)
			}
			r.reader.Recycle(scan) // no one holds it yet: detailPrev moves only after a write
			return w, nil          // keep prev: nothing counted is lost
		}
		r.headed = true
		if r.writeErr != "" {
			fmt.Fprintf(r.opt.Warn, "pulse: writing windows again\n")
			r.writeErr = ""
		}
	}
	if detailDue && r.opt.Out != nil {
		if r.detailPrev != r.prev {
			r.reader.Recycle(r.detailPrev)
		}
		r.detailPrev, r.detailAt = scan, now
	}
	if r.prev != r.detailPrev {
		r.reader.Recycle(r.prev) // the window holds no part of a scan
	}
	r.prev = scan
	if r.opt.OnWindow != nil {
		r.opt.OnWindow(w, warns, final)
	}
	return w, nil
}

// fillPaths finds the window's end-to-end paths, the spec's named ones first.
func (r *Recorder) fillPaths(w *window.Window) {
	var rules []spec.PathRule
	if r.opt.Spec != nil {
		rules = r.opt.Spec.Paths
	}
	paths.Fill(w, rules)
}

// detailWindow renders the whole window from the last detail window's scan
// to scan.
func (r *Recorder) detailWindow(scan *segment.Scan, unmatched []window.Unmatched) []byte {
	d := r.detailScratch.Compute(r.detailPrev, scan, r.start, time.Now().UnixNano(), r.opt.Window)
	d.Unmatched, d.Detail = unmatched, true
	r.fillPaths(d)
	return logfmt.Render(r.opt.Format, d, r.opt.Log)
}

// Run records until ctx is done, then writes a final window.
func (r *Recorder) Run(ctx context.Context) error {
	next := time.Now()
	for {
		next = next.Add(r.opt.Period)
		if d := time.Until(next); d < 0 {
			next = time.Now() // fell behind (machine suspended): restart the cadence
		}
		timer := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			timer.Stop()
			_, err := r.Step(true)
			return err
		case <-timer.C:
			if _, err := r.Step(false); err != nil {
				return err
			}
		}
	}
}
