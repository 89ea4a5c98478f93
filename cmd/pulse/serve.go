package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime/pprof"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"github.com/spf13/cobra"

	"ros2_pulse/internal/recorder"
)

// addServeFlags gives a served view (pulse export, pulse web) the recorder's
// flags, with --out and --format hidden (it writes no log), and where and
// how to serve: --listen, addr by default, and --web.config.file.
func addServeFlags(c *cobra.Command, f *recordFlags, listen, webConfig *string, addr, what string) {
	addRecordFlags(c, f, "out", "unused by "+c.Name())
	_ = c.Flags().MarkHidden("out")
	_ = c.Flags().MarkHidden("format")
	c.Flags().StringVar(listen, "listen", addr, "address to serve "+what+" on (loopback by default)")
	c.Flags().StringVar(webConfig, "web.config.file", "", "exporter-toolkit web configuration (TLS, basic auth)")
}

// recordInBackground runs a recorder over dir until ctx ends, for a served
// view whose OnWindow hook feeds it; the caller closes it.
func recordInBackground(ctx context.Context, dir string, opt recorder.Options) (*recorder.Recorder, error) {
	rec, err := recorder.New(dir, opt)
	if err != nil {
		return nil, err
	}
	go func() { _ = rec.Run(ctx) }()
	return rec, nil
}

// serveUntilDone serves handler on listen with exporter-toolkit's web
// configuration (TLS, basic auth; "" for plain HTTP) until ctx ends, then
// shuts down gracefully; ready is printed once the server is started.
// pulse export and pulse web serve this way.
func serveUntilDone(ctx context.Context, handler http.Handler, listen, webConfig, name, ready string) error {
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	systemd := false
	flags := &web.FlagConfig{WebListenAddresses: &[]string{listen}, WebSystemdSocket: &systemd, WebConfigFile: &webConfig}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	done := make(chan error, 1)
	go func() { done <- web.ListenAndServe(hs, flags, logger) }()
	fmt.Fprintln(os.Stderr, ready)
	select {
	case err := <-done:
		return fmt.Errorf("%s: %w", name, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// startCPUProfile writes a Go CPU profile to path until stop is called
// (the hidden --cpuprofile of top and web: measuring a view's own cost).
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
