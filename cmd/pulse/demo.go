package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/locate"
	"ros2_pulse/internal/logfmt"
	"ros2_pulse/internal/recorder"
	"ros2_pulse/internal/runner"
	"ros2_pulse/internal/top"
	pweb "ros2_pulse/internal/web"
	"ros2_pulse/internal/window"
)

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func demoCmd() *cobra.Command {
	var f recordFlags
	var graph, distro, simgraph string
	var duration time.Duration
	var jitter, links, noTop, webView bool
	var webListen string
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run the built-in simulated robot under the probe and show its windows live",
		Long: `demo starts simgraph, the stand-in ROS 2 graph, with the stand-in libtracetools of --distro,
preloads the probe, and shows it: on a terminal in pulse top (q quits and stops the graph),
otherwise (or with --no-top) by printing every window and ending with the per-topic summary.
Like pulse run, it puts the graph's segments in a run directory inside the machine-wide segment
directory, so pulse top, export, check --live, graph and doctor in another terminal see it.
Without a terminal it stops after --duration (default 15s); on a terminal it runs until
q or Ctrl-C unless --duration is given. --web also serves the graph as a page (pulse web)
and prints its address.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.defaultPeriod(cmd, "1s") // a demo wants to be watched
			opt, err := f.options()
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("duration") && !isTerminal(os.Stdout) {
				duration = 15 * time.Second
			}
			lib, err := locate.ProbeLib()
			if err != nil {
				return err
			}
			sim, err := locate.Simgraph(simgraph)
			if err != nil {
				return err
			}
			tt, err := locate.SimTracetoolsDir(sim, distro)
			if err != nil {
				return err
			}
			var page func(*window.Window, []health.Warning, bool)
			if webView {
				stop, hook, err := serveDemoPage(webListen)
				if err != nil {
					fmt.Fprintf(os.Stderr, "pulse demo: no page (%v); the demo goes on\n", err)
				} else {
					defer stop()
					page = hook
				}
			}
			if isTerminal(os.Stdout) && isTerminal(os.Stdin) && !noTop {
				return demoTop(cmd.Context(), graph, sim, lib, duration, demoEnv(tt, graph, jitter, links), opt, f.env.Dir, f.retain, page)
			}
			// --record's file is the recorder's (with its run header); the screen gets each window too.
			opt.OnWindow = func(w *window.Window, warns []health.Warning, final bool) {
				lo := opt.Log
				lo.Warns = warns
				os.Stdout.Write(logfmt.Render(opt.Format, w, lo))
				if page != nil {
					page(w, warns, final)
				}
			}
			args := []string{sim, "--graph", graph, "--duration", strconv.FormatFloat(duration.Seconds(), 'f', 3, 64)}
			fmt.Fprintf(os.Stderr, "pulse demo: graph %s, %s tracetools stand-in, window %v\n", graph, distro, opt.Period)
			ro := runner.Options{Lib: lib, Dir: f.env.Dir, Retain: f.retain, Recorder: opt, Env: demoEnv(tt, graph, jitter, links),
				Summary: os.Stderr, Stdout: os.Stderr, Stderr: os.Stderr}
			code, err := runner.Run(cmd.Context(), args, ro)
			if err != nil {
				return err
			}
			if code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
	addRecordFlags(c, &f, "record", "also write the windows to this file")
	c.Flags().StringVar(&graph, "graph", "demo", "demo, stress, robot (Autoware-shaped: 157 nodes, ~600 topics), chain (a sensor-to-actuator pipeline of relaying nodes), or a graph file (syntax: sim/graphs/demo.graph)")
	c.Flags().StringVar(&distro, "distro", "jazzy", "stand-in libtracetools: humble, jazzy or kilted")
	c.Flags().DurationVar(&duration, "duration", 0, "stop after this long (default 15s without a terminal)")
	c.Flags().BoolVar(&jitter, "jitter", false, "gap tracking in the simulated processes: JITTER and PERIOD lines")
	c.Flags().BoolVar(&links, "links", false, "latency links in the simulated processes: LINK and PATH lines, end-to-end paths (on for --graph chain)")
	c.Flags().BoolVar(&noTop, "no-top", false, "print the windows even on a terminal")
	c.Flags().StringVar(&simgraph, "simgraph", "", "the simulator to run (default: simgraph beside pulse; an installed pulse takes a build tree's, build/bin/simgraph)")
	c.Flags().BoolVar(&webView, "web", false, "also serve the graph as a page (pulse web) and print its address")
	c.Flags().StringVar(&webListen, "listen", "127.0.0.1:9465", "with --web: the page's address (loopback by default)")
	return c
}

// serveDemoPage serves pulse web's page for the demo on listen (plain HTTP,
// loopback by default) and returns the hook that feeds it each window.
func serveDemoPage(listen string) (stop func(), hook func(*window.Window, []health.Warning, bool), err error) {
	srv, err := pweb.NewServer(version, nil)
	if err != nil {
		return nil, nil, err
	}
	if hook, err = webHook(srv); err != nil {
		return nil, nil, err
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, nil, err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(l) }()
	fmt.Fprintf(os.Stderr, "pulse demo: the graph as a page: http://%s/\n", l.Addr())
	return func() { hs.Close() }, hook, nil
}

// demoEnv is the simulated processes' environment: the stand-in
// tracetools of tt, and what the flags switch on (links always for the
// chain graph, the pipeline they are for).
func demoEnv(tt, graph string, jitter, links bool) []string {
	env := []string{"LD_LIBRARY_PATH=" + tt}
	if jitter {
		env = append(env, "ROS_TOPIC_STATS_JITTER=1")
	}
	if links || graph == "chain" {
		env = append(env, "ROS_PULSE_LINKS=1")
	}
	return env
}

// demoTop runs the graph under the probe with pulse top as its view; the
// graph stops when the view quits, and the view says so when the graph ends.
func demoTop(ctx context.Context, graph, sim, lib string, duration time.Duration, env []string, opt recorder.Options,
	dir string, retain time.Duration, page func(*window.Window, []health.Warning, bool)) error {
	p := tea.NewProgram(top.New("demo "+graph, false), tea.WithAltScreen(), tea.WithFPS(10)) // as pulse top
	hook, err := top.Hook(p.Send)
	if err != nil {
		return err
	}
	opt.OnWindow = hook // opt.Out stays: --record's file
	if page != nil {
		opt.OnWindow = func(w *window.Window, warns []health.Warning, final bool) {
			hook(w, warns, final)
			page(w, warns, final)
		}
	}
	var summary bytes.Buffer // printed once the screen is gone
	ro := runner.Options{Lib: lib, Dir: dir, Retain: retain, Recorder: opt, Env: env,
		Summary: &summary, Stdout: io.Discard, Stderr: io.Discard, NoStdin: true}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		args := []string{sim, "--graph", graph, "--duration", strconv.FormatFloat(duration.Seconds(), 'f', 3, 64)}
		code, err := runner.Run(ctx, args, ro)
		if err == nil && code != 0 {
			err = fmt.Errorf("the graph exited with status %d", code)
		}
		p.Send(top.EndMsg{Err: err})
		done <- err
	}()
	if _, err := p.Run(); err != nil {
		return err
	}
	cancel()
	err = <-done
	os.Stderr.Write(summary.Bytes())
	return err
}
