package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"ros2_pulse/internal/cpu"
	"ros2_pulse/internal/health"
	"ros2_pulse/internal/logfmt"
	"ros2_pulse/internal/spec"
	pweb "ros2_pulse/internal/web"
	"ros2_pulse/internal/window"
)

func webCmd() *cobra.Command {
	var f recordFlags
	var listen, webConfig, logPath, cpuProfile string
	c := &cobra.Command{
		Use:   "web [--listen 127.0.0.1:9465] [--web.config.file F] [--period 1s] [--spec F] [--log FILE]",
		Short: "The live computation graph in a browser: rates on every edge, topics, warnings",
		Long: `web serves a page with this machine's computation graph laid out left to right:
nodes, topics and services, each edge labelled with its live rate, drawn wider with
more traffic and coloured by its state (the words of pulse top); each node with its
liveness, CPU and memory; a subscription's loss and a topic's latency where measured.
Click a node, topic or service for its endpoints with their process, rate, loss, QoS,
callback time, a timer's lateness, a service's handling, a topic's gaps and a sparkline
of its rate; a topic table and the warnings with their ages sit beside the graph.
The page updates once per window over one server-sent event stream (the graph's shape
when it changes, then each window's values); an entity keeps its place once drawn.
--log replays a recording with a time slider.

It listens on loopback unless told otherwise; --web.config.file takes the
exporter-toolkit web configuration (TLS, basic auth). The site is read-only and
every asset is in the binary.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.defaultPeriod(cmd, "1s")
			opt, err := f.options()
			if err != nil {
				return err
			}
			if cpuProfile != "" { // for measuring the page server's own cost
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			if os.Getenv("GOGC") == "" {
				// A collection every 4 s rather than every 2 s on a large graph:
				// about a quarter of the server's CPU for ~3 MB more (design note 0021).
				debug.SetGCPercent(200)
			}
			ctx, cancel := signalContext()
			defer cancel()
			var srv *pweb.Server
			if logPath != "" {
				frames, err := webFrames(logPath, opt.Spec)
				if err != nil {
					return err
				}
				if srv, err = pweb.NewServer(version, frames); err != nil {
					return err
				}
			} else {
				if srv, err = pweb.NewServer(version, nil); err != nil {
					return err
				}
				hook, err := webHook(srv)
				if err != nil {
					return err
				}
				opt.Out, opt.OnWindow = nil, hook
				rec, err := recordInBackground(ctx, f.env.Dir, opt)
				if err != nil {
					return err
				}
				defer rec.Close()
			}
			return serveUntilDone(ctx, srv.Handler(), listen, webConfig, "web",
				fmt.Sprintf("pulse web: open http://%s/ (segments in %s)", listen, f.env.Dir))
		},
	}
	addServeFlags(c, &f, &listen, &webConfig, "127.0.0.1:9465", "the page")
	c.Flags().StringVar(&logPath, "log", "", "replay a recorded log (text or jsonl) with a time slider")
	c.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile of the page server")
	_ = c.Flags().MarkHidden("cpuprofile")
	return c
}

// webHook turns each window into a frame (the verdicts the recorder passed,
// lagging and unmatched subscriptions, full segments, each process's CPU)
// and publishes it.
func webHook(srv *pweb.Server) (func(*window.Window, []health.Warning, bool), error) {
	sampler, err := cpu.New("", false)
	if err != nil {
		return nil, err
	}
	lag := health.NewLagDetector()
	b := pweb.NewBuilder()
	return func(w *window.Window, warns []health.Warning, final bool) {
		now := time.Unix(0, w.TsNs)
		all := lag.ViewWarnings(w, warns, final, now)
		samples := map[int]cpu.Sample{}
		for _, s := range sampler.Sample(cpu.Targets(w.Procs, false, "")) {
			samples[s.Pid] = s
		}
		if final {
			sampler.Close() // the last window: nothing samples again
		}
		_ = srv.Publish(b.Build(w, all, samples))
	}, nil
}

// webFrames reads a recording and judges it as pulse check would (s may be nil).
func webFrames(path string, s *spec.Spec) ([]pweb.Frame, error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read log: %w", err)
	}
	defer in.Close()
	res, err := logfmt.Read(in)
	if err != nil {
		return nil, fmt.Errorf("cannot read log: %w", err)
	}
	if len(res.Windows) == 0 {
		return nil, fmt.Errorf("no probe windows in %s (%s)", path, res)
	}
	b := pweb.NewBuilder()
	var frames []pweb.Frame
	windows := logfmt.Replayed(res.Windows) // a lean record's windows with their minute's detail
	if s != nil {
		for _, m := range health.JudgeRuns(s, [][]*window.Window{windows}, false) {
			frames = append(frames, b.Build(m.W, append(append(m.Warns, health.FullSegments(m.W)...), health.SendFailures(m.W)...), nil))
		}
	} else {
		for _, w := range windows {
			frames = append(frames, b.Build(w, append(health.FullSegments(w), health.SendFailures(w)...), nil))
		}
	}
	return frames, nil
}
