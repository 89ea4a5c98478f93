package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"
)

// page is a page open in a real browser: Debian's chromium through the
// DevTools protocol (chromedp) or Debian's Firefox ESR through WebDriver
// BiDi, the W3C protocol Firefox speaks natively. make test installs both;
// a test judges the page in them or fails, never skips.
type page interface {
	navigate(url string) error
	// evalJSON evaluates a JavaScript expression in the page and returns its value as JSON.
	evalJSON(expr string) ([]byte, error)
}

// eval runs a JavaScript expression in the page and returns its value.
func eval[T any](p page, expr string) (T, error) {
	var v T
	b, err := p.evalJSON(expr)
	if err != nil {
		return v, err
	}
	return v, json.Unmarshal(b, &v)
}

// browsers opens a page in each browser, for a test to run in both.
func browsers(t *testing.T, run func(t *testing.T, p page)) {
	for _, b := range []struct {
		name string
		open func(testing.TB) page
	}{{"chromium", func(t testing.TB) page { return chromium(t) }}, {"firefox", func(t testing.TB) page { return firefox(t) }}} {
		t.Run(b.name, func(t *testing.T) { run(t, b.open(t)) })
	}
}

// chromiumPage is a chromium tab driven by chromedp.
type chromiumPage struct{ ctx context.Context }

func (c *chromiumPage) navigate(url string) error {
	_, err := chromedp.Run(c.ctx, chromedp.Navigate(url))
	return err
}

func (c *chromiumPage) evalJSON(expr string) ([]byte, error) {
	s, err := chromedp.Run(c.ctx, chromedp.Evaluate[string]("JSON.stringify(("+expr+"))"))
	return []byte(s), err
}

// chromium starts Debian's chromium, headless.
func chromium(t testing.TB) *chromiumPage {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (make test installs Debian's chromium): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("headless", "new"))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, browserTimeout())
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return &chromiumPage{ctx}
}

// browserTimeout bounds a browser's life: a long benchmark keeps its page.
func browserTimeout() time.Duration {
	timeout := 90 * time.Second
	if v, err := strconv.Atoi(os.Getenv("PULSE_WEB_BENCH_S")); err == nil && v > 0 {
		timeout += time.Duration(v) * time.Second
	}
	return timeout
}

// firefoxPage is Firefox's first tab over a WebDriver BiDi session.
type firefoxPage struct {
	ctx     context.Context
	conn    *websocket.Conn
	mu      sync.Mutex // one command at a time
	id      int
	context string // the tab's browsing context
}

// command sends one BiDi command and returns its result (events are skipped).
func (f *firefoxPage) command(method string, params any, result any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.id++
	msg, err := json.Marshal(map[string]any{"id": f.id, "method": method, "params": params})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(f.ctx, 30*time.Second)
	defer cancel()
	if err := f.conn.Write(ctx, websocket.MessageText, msg); err != nil {
		return err
	}
	for {
		_, data, err := f.conn.Read(ctx)
		if err != nil {
			return err
		}
		var reply struct {
			ID      *int            `json:"id"`
			Type    string          `json:"type"`
			Error   string          `json:"error"`
			Message string          `json:"message"`
			Result  json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(data, &reply); err != nil {
			return err
		}
		if reply.ID == nil || *reply.ID != f.id {
			continue // an event, or a late reply
		}
		if reply.Type == "error" {
			return fmt.Errorf("%s: %s: %s", method, reply.Error, reply.Message)
		}
		if result == nil {
			return nil
		}
		return json.Unmarshal(reply.Result, result)
	}
}

func (f *firefoxPage) navigate(url string) error {
	return f.command("browsingContext.navigate", map[string]any{"context": f.context, "url": url, "wait": "complete"}, nil)
}

func (f *firefoxPage) evalJSON(expr string) ([]byte, error) {
	var r struct {
		Type   string `json:"type"`
		Result struct {
			Type  string `json:"type"`
			Value string `json:"value"`
		} `json:"result"`
		Exception struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	err := f.command("script.evaluate", map[string]any{"expression": "JSON.stringify((" + expr + "))", "target": map[string]string{"context": f.context},
		"awaitPromise": false}, &r)
	switch {
	case err != nil:
		return nil, err
	case r.Type != "success":
		return nil, fmt.Errorf("%s: %s", expr, r.Exception.Text)
	case r.Result.Type != "string":
		return nil, fmt.Errorf("%s: no value (%s)", expr, r.Result.Type)
	}
	return []byte(r.Result.Value), nil
}

// firefox starts Debian's Firefox ESR, headless, with a fresh profile, and
// opens a WebDriver BiDi session on its first tab.
func firefox(t testing.TB) *firefoxPage {
	t.Helper()
	path, err := exec.LookPath("firefox-esr")
	if err != nil {
		t.Fatalf("firefox-esr is not installed (make test installs Debian's firefox-esr): %v", err)
	}
	profile := t.TempDir()
	// No first-run pages, no updates or telemetry: a quiet browser for a test.
	prefs := `user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("app.update.disabledForTesting", true);
user_pref("remote.active-protocols", 1);
`
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(prefs), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout())
	cmd := exec.CommandContext(ctx, path, "--headless", "--no-remote", "--profile", profile, "--remote-debugging-port", "0", "about:blank")
	cmd.Env = append(os.Environ(), "MOZ_CRASHREPORTER_DISABLE=1", "HOME="+profile)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	// Firefox says where it listens: "WebDriver BiDi listening on ws://127.0.0.1:PORT".
	found := make(chan string, 1)
	var mu sync.Mutex
	var said strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			said.WriteString(line + "\n")
			mu.Unlock()
			if _, url, ok := strings.Cut(line, "WebDriver BiDi listening on "); ok {
				found <- strings.TrimSpace(url)
			}
		}
	}()
	var url string
	select {
	case url = <-found:
	case <-time.After(60 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("firefox-esr did not open WebDriver BiDi within 60 s:\n%s", said.String())
	}
	conn, _, err := websocket.Dial(ctx, url+"/session", nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadLimit(64 << 20)
	t.Cleanup(func() { conn.CloseNow() })
	f := &firefoxPage{ctx: ctx, conn: conn}
	if err := f.command("session.new", map[string]any{"capabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	var tree struct {
		Contexts []struct {
			Context string `json:"context"`
		} `json:"contexts"`
	}
	if err := f.command("browsingContext.getTree", map[string]any{}, &tree); err != nil || len(tree.Contexts) == 0 {
		t.Fatalf("firefox's tabs: %+v %v", tree, err)
	}
	f.context = tree.Contexts[0].Context
	return f
}
