package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"
	"golang.org/x/sys/unix"

	"ros2_pulse/internal/segment"
)

// The demo robot and the stress farm in chromium: every edge of 20 Hz or
// more carries pulse graph's rate within 5 %, and the page's screenshot (a
// PNG of the drawn graph) is written to docs/web/ when PULSE_SCREENSHOTS
// names a directory (make screenshots).
func TestWebScreenshots(t *testing.T) {
	out := os.Getenv("PULSE_SCREENSHOTS")
	for _, graph := range []string{"demo", "stress"} {
		t.Run(graph, func(t *testing.T) {
			dir := t.TempDir()
			g, segs := startGraph(t, dir, graph, "45")
			defer func() { g.Process.Signal(os.Interrupt); g.Wait() }()
			addr := startWeb(t, segs, "--period", "4s") // 4 s windows: a 20 Hz edge counts 80 messages, one either way is 1.3 %
			p := chromium(t)
			ctx := p.ctx
			if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(1600, 1000)); err != nil {
				t.Fatal(err)
			}
			if _, err := chromedp.Run(ctx, chromedp.Navigate("http://"+addr+"/")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, p, "two frames with traffic", `window.__pulse.frames >= 2 && [...document.querySelectorAll("g.edge")].some(e => Number(e.dataset.hz) > 0)`, 30*time.Second)
			// Its rates are pulse graph's (the proof on the demo and the stress farm).
			n := pageMatchesGraph(t, p, segs, 4*time.Second)
			if n < 5 {
				t.Errorf("only %d edges of 20 Hz or more compared", n)
			}
			t.Logf("%s: %d edges of 20 Hz or more carry pulse graph's rates", graph, n)
			// The first view is drawn at a legible scale, panned; the picture for the docs is the whole graph.
			if _, err := eval[bool](p, `(document.getElementById("fit").click(), true)`); err != nil {
				t.Fatal(err)
			}
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(png, []byte("\x89PNG")) || len(png) < 20000 {
				t.Fatalf("the screenshot is not a drawn page: %d bytes", len(png))
			}
			if out != "" {
				if err := os.WriteFile(filepath.Join(out, graph+".png"), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// largeGraph writes nprocs synthetic processes of 5 nodes each, 250 topics
// with one publisher and three subscriptions each (300 nodes, 1,000 edges at
// 60 processes), holds each segment's lock so readers see them alive, and
// advances every counter at its rate until ctx ends.
func largeGraph(tb testing.TB, ctx context.Context, dir string, nprocs int) {
	tb.Helper()
	type proc struct {
		f    *os.File
		spec segment.SyntheticSpec
	}
	procs := make([]*proc, nprocs)
	topics := nprocs * 250 / 60
	for p := range procs {
		spec := segment.SyntheticSpec{Pid: 200000 + p, StartMono: 1, Exe: "/opt/ros/lib/big_node"}
		for n := 0; n < 5; n++ {
			spec.Nodes = append(spec.Nodes, fmt.Sprintf("/big/p%d/n%d", p, n))
		}
		procs[p] = &proc{spec: spec}
	}
	for tp := 0; tp < topics; tp++ { // the publisher in one process, three subscribers in the next three
		for k := 0; k < 4; k++ {
			p := procs[(tp+k)%nprocs]
			kind := segment.Kind(segment.KindSubscription)
			if k == 0 {
				kind = segment.KindPublisher
			}
			p.spec.Endpoints = append(p.spec.Endpoints, segment.SyntheticEndpoint{Kind: kind, Name: fmt.Sprintf("/big/t%d", tp), Node: (tp + k) % 5, Aux: uint64(10 + tp%40)})
		}
	}
	for i, p := range procs {
		path := filepath.Join(dir, fmt.Sprintf("%d.0.pulse", p.spec.Pid))
		if err := segment.WriteSynthetic(path, p.spec); err != nil {
			tb.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			tb.Fatal(err)
		}
		if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK}); err != nil {
			tb.Fatal(err)
		}
		procs[i].f = f
	}
	tb.Cleanup(func() {
		for _, p := range procs {
			p.f.Close()
		}
	})
	start := time.Now()
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			secs := time.Since(start).Seconds()
			for _, p := range procs {
				for e := range p.spec.Endpoints {
					ep := &p.spec.Endpoints[e]
					ep.Counts[segment.SlotInter] = uint64(secs * float64(ep.Aux)) // Aux: the rate, in Hz
				}
				p.f.WriteAt(segment.Encode(p.spec), 0) // in place: the reader's mapping sees it
			}
		}
	}()
}

// cpuSeconds is a process's user and system CPU time.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return math.NaN()
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100 // clock ticks: 100 a second on Linux
}

// BenchmarkWebLargeGraph: 300 nodes and 1,000 edges whose counters move, a
// 1 s window, one page open in chromium for PULSE_WEB_BENCH_S seconds
// (default 120), everything drawn flat (#flat&leaves&infra: the most a page
// draws). Reports the browser's time to draw a frame (mean and p99,
// measured in the page), pulse web's CPU share of one core, the stream's
// bytes per window and the page's JavaScript heap at the start and the end
// (docs/PERFORMANCE.md §10).
// Run: go test ./cmd/pulse -run '^$' -bench WebLargeGraph -benchtime 1x
func BenchmarkWebLargeGraph(b *testing.B) {
	webBench(b, func(ctx context.Context, dir string, secs int) string { largeGraph(b, ctx, dir, 60); return dir },
		"/#flat&leaves&infra", `document.querySelectorAll("g.edge").length >= 1000`)
}

// BenchmarkWebRobot: sim/graphs/robot.graph (157 nodes, ~600 topics) under
// the probe, the page's first view (namespaces closed), as BenchmarkWebLargeGraph
// measures it (issue 46: draw ≤ 50 ms a window, server ≤ 0.5 % of a core).
// Run: go test ./cmd/pulse -run '^$' -bench WebRobot -benchtime 1x
func BenchmarkWebRobot(b *testing.B) {
	webBench(b, func(ctx context.Context, dir string, secs int) string {
		g, segs := startGraph(b, dir, "robot", strconv.Itoa(secs+60))
		go func() { <-ctx.Done(); g.Process.Signal(os.Interrupt); g.Wait() }()
		return segs
	}, "/", `window.__pulse.shape && window.__pulse.shape.nodes.length >= 157`)
}

// webBench runs a graph (start returns its segment directory) with pulse web
// and pulse record beside it, opens the page at path in chromium until ready
// holds, and measures it for PULSE_WEB_BENCH_S seconds.
func webBench(b *testing.B, start func(ctx context.Context, dir string, secs int) string, path, ready string) {
	secs := 120
	if v, err := strconv.Atoi(os.Getenv("PULSE_WEB_BENCH_S")); err == nil && v > 0 {
		secs = v
	}
	period := "1s" // PULSE_WEB_BENCH_PERIOD: the windows of pulse web and record (pulse web's default is 5s)
	if v := os.Getenv("PULSE_WEB_BENCH_PERIOD"); v != "" {
		period = v
	}
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		dir := start(ctx, b.TempDir(), secs)
		addr := freePort(b)
		args := []string{"web", "--listen", addr, "--period", period}
		if prof := os.Getenv("PULSE_WEB_CPUPROFILE"); prof != "" {
			args = append(args, "--cpuprofile", prof)
		}
		web := pulseCmd(b, args...)
		web.Env = append(web.Env, "ROS_PULSE_DIR="+dir)
		if err := web.Start(); err != nil {
			b.Fatal(err)
		}
		// The reader alone, side by side: pulse record of the same directory, its log thrown away.
		rec := pulseCmd(b, "record", "--period", period, "--out", os.DevNull)
		rec.Env = append(rec.Env, "ROS_PULSE_DIR="+dir)
		if err := rec.Start(); err != nil {
			b.Fatal(err)
		}
		p := chromium(b)
		page := p.ctx
		if err := p.navigate("http://" + addr + path); err != nil {
			b.Fatal(err)
		}
		waitFor(b, p, "the graph", `window.__pulse.frames >= 2 && `+ready, 60*time.Second)
		var streamBytes, streamWindows atomic.Int64
		go countStream(ctx, "http://"+addr+"/events", &streamBytes, &streamWindows)
		heap := func() float64 { // what the page keeps: measured after a collection
			if _, err := chromedp.Call(page, heapprofiler.CollectGarbage, cdp.Empty{}); err != nil {
				return math.NaN()
			}
			if _, err := chromedp.Call(page, performance.Enable, performance.EnableParams{}); err != nil {
				return math.NaN()
			}
			m, err := chromedp.Call(page, performance.GetMetrics, cdp.Empty{})
			if err != nil {
				return math.NaN()
			}
			for _, x := range m.Metrics {
				if x.Name == "JSHeapUsedSize" {
					return x.Value / (1 << 20)
				}
			}
			return math.NaN()
		}
		heap0 := heap()
		type heapAt struct{ s, mib float64 }
		heaps := []heapAt{{0, heap0}}
		nextHeap := 30 * time.Second
		cpu0, rec0, t0 := cpuSeconds(web.Process.Pid), cpuSeconds(rec.Process.Pid), time.Now()
		var renders []float64
		var seen atomic.Int64
		last := -1
		for time.Since(t0) < time.Duration(secs)*time.Second {
			time.Sleep(200 * time.Millisecond)
			if at := time.Since(t0); at >= nextHeap {
				heaps = append(heaps, heapAt{at.Seconds(), heap()})
				nextHeap += 30 * time.Second
			}
			r, err := eval[[]float64](p, `[window.__pulse.frames, window.__pulse.lastRenderMs]`)
			if err != nil || len(r) != 2 {
				continue
			}
			if int(r[0]) != last {
				last = int(r[0])
				renders = append(renders, r[1])
				seen.Add(1)
			}
		}
		elapsed := time.Since(t0).Seconds()
		cpuPct := (cpuSeconds(web.Process.Pid) - cpu0) / elapsed * 100
		recPct := (cpuSeconds(rec.Process.Pid) - rec0) / elapsed * 100
		heap1 := heap()
		web.Process.Signal(os.Interrupt)
		rec.Process.Signal(os.Interrupt)
		web.Wait()
		rec.Wait()
		cancel()
		heaps = append(heaps, heapAt{elapsed, heap1})
		// The heap's trend: a least-squares line through every sample, per 10 minutes.
		var n, sx, sy, sxx, sxy float64
		for _, h := range heaps {
			n, sx, sy, sxx, sxy = n+1, sx+h.s, sy+h.mib, sxx+h.s*h.s, sxy+h.s*h.mib
		}
		slope := (n*sxy - sx*sy) / (n*sxx - sx*sx) * 600
		sort.Float64s(renders)
		mean := 0.0
		for _, r := range renders {
			mean += r
		}
		mean /= float64(max(len(renders), 1))
		p99 := renders[min(len(renders)-1, int(math.Ceil(0.99*float64(len(renders))))-1)]
		b.ReportMetric(mean, "ms/frame")
		b.ReportMetric(p99, "p99-ms/frame")
		b.ReportMetric(cpuPct, "%cpu")
		b.ReportMetric(recPct, "%cpu-record")
		b.ReportMetric(heap0, "MiB-heap-start")
		b.ReportMetric(heap1, "MiB-heap-end")
		b.ReportMetric(slope, "MiB-heap-per-10min")
		perWindow := float64(streamBytes.Load()) / float64(max(streamWindows.Load(), 1))
		b.ReportMetric(perWindow, "B/window")
		b.Logf("%d frames over %d s: draw mean %.1f ms, p99 %.1f ms, max %.1f ms; pulse web %.2f %% of a core (pulse record of the same graph %.2f %%); stream %.0f bytes a window; JS heap %.1f -> %.1f MiB, %d samples, trend %+.3f MiB per 10 min",
			len(renders), secs, mean, p99, renders[len(renders)-1], cpuPct, recPct, perWindow, heap0, heap1, len(heaps), slope)
	}
}

// countStream reads a page's event stream as a second page would, counting
// its bytes and its windows (value messages), until ctx ends.
func countStream(ctx context.Context, url string, bytes, windows *atomic.Int64) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	shape := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		bytes.Add(int64(len(line)))
		switch {
		case strings.HasPrefix(line, "event: shape"):
			shape = true
		case strings.HasPrefix(line, "data: ") && !shape:
			windows.Add(1)
		case line == "\n":
			shape = false
		}
	}
}
