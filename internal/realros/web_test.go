package realros

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestWebShowsTheRealGraph: pulse web over a real talker and listener, in
// Debian's headless chromium: the page draws the talker's edge into
// /chatter and /chatter's edge into the listener, at the rate the nodes
// really had.
func TestWebShowsTheRealGraph(t *testing.T) {
	l := setup(t)
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (make test installs Debian's chromium)")
	}
	r := l.newRun(t)
	listener := r.node("listener", "cpp", "", "--sub", "/chatter", "--duration", "14")
	talker := r.node("talker", "cpp", "", "--pub", "/chatter,25,16", "--duration", "13")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	web := r.pulseCmd("web", "--listen", addr, "--dir", r.dir)
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = web.Process.Kill(); _ = web.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/api/info"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pulse web did not listen on %s", addr)
		}
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("headless", "new"), chromedp.Flag("disable-background-networking", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()
	if _, err := chromedp.Run(ctx, chromedp.Navigate("http://"+addr+"/")); err != nil {
		t.Fatal(err)
	}
	// Both edges drawn with a rate, read once the page has had windows in
	// which both nodes were running throughout (the first windows hold the
	// listener's wait for the talker: a true but lower rate).
	time.Sleep(6 * time.Second)
	const edges = `(() => { const hz = s => { const e = document.querySelector(s); return e ? Number(e.dataset.hz) : 0; };
	  return [hz('g.edge[data-to="t:/chatter"]'), hz('g.edge[data-from="t:/chatter"]')]; })()`
	var hz []float64
	for deadline := time.Now().Add(9 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if hz, err = chromedp.Run(ctx, chromedp.Evaluate[[]float64](edges)); err != nil {
			t.Fatal(err)
		}
		if len(hz) == 2 && hz[0] > 0 && hz[1] > 0 || time.Now().After(deadline) {
			break
		}
	}
	r.waitAll(30 * time.Second)
	pub, sub := r.truth(talker).Endpoints[0].Hz(), r.truth(listener).Endpoints[0].Hz()
	table(t, "pulse web in chromium", fmt.Sprintf("%v Hz", hz), fmt.Sprintf("%.2f, %.2f Hz", pub, sub))
	if len(hz) != 2 || math.Abs(hz[0]-pub) > 0.05*pub || math.Abs(hz[1]-sub) > 0.05*sub {
		t.Errorf("the page draws %v Hz into and out of /chatter; the talker published at %.2f Hz, the listener received at %.2f Hz",
			hz, pub, sub)
	}
	t.Logf("page: %v Hz; nodes: %.2f, %.2f Hz", hz, pub, sub)
}
