package realros

import (
	"context"
	"fmt"
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
	listener := r.node("listener", "cpp", "", "--stamps", "--sub", "/chatter", "--duration", "14")
	talker := r.node("talker", "cpp", "", "--stamps", "--pub", "/chatter,25,16", "--duration", "13")

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
	// Both edges drawn with a rate, and the window they were drawn for, read
	// once the page has had windows in which both nodes ran throughout.
	time.Sleep(6 * time.Second)
	const edges = `(() => { const hz = s => { const e = document.querySelector(s); return e ? Number(e.dataset.hz) : 0; };
	  const f = window.__pulse.frame || {};
	  return [hz('g.edge[data-to="t:/chatter"]'), hz('g.edge[data-from="t:/chatter"]'), f.ts_ns || 0, f.window_s || 0]; })()`
	var got []float64
	for deadline := time.Now().Add(9 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if got, err = chromedp.Run(ctx, chromedp.Evaluate[[]float64](edges)); err != nil {
			t.Fatal(err)
		}
		if len(got) == 4 && got[0] > 0 && got[1] > 0 || time.Now().After(deadline) {
			break
		}
	}
	offset := realMinusMono(t)
	r.waitAll(30 * time.Second)
	if len(got) != 4 || got[2] == 0 || got[3] == 0 {
		t.Fatalf("the page drew %v", got)
	}
	to := int64(got[2]) - offset
	from := to - int64(got[3]*1e9)
	pub, sub := &r.truth(talker).Endpoints[0], &r.truth(listener).Endpoints[0]
	okPub, pubLo, pubHi := windowAgrees(pub, got[0], from, to, 3e6)
	okSub, subLo, subHi := windowAgrees(sub, got[1], from, to, 3e6)
	table(t, "pulse web in chromium", fmt.Sprintf("%.3f, %.3f Hz over %.3f s", got[0], got[1], got[3]),
		fmt.Sprintf("%d-%d published, %d-%d received in that window", pubLo, pubHi, subLo, subHi))
	if !okPub || !okSub {
		t.Errorf("the page draws %.3f Hz into and %.3f out of /chatter over its %.3f s window; in that window the talker "+
			"published %d-%d, the listener received %d-%d", got[0], got[1], got[3], pubLo, pubHi, subLo, subHi)
	}
}
