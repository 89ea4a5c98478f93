package main

import (
	"fmt"
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/spf13/cobra"

	"ros2_pulse/internal/export"
	"ros2_pulse/internal/health"
	"ros2_pulse/internal/window"
)

func exportCmd() *cobra.Command {
	var f recordFlags
	var listen, webConfig string
	var perTopic, histograms bool
	c := &cobra.Command{
		Use:   "export [--listen 127.0.0.1:9464] [--web.config.file F] [--per-topic] [--histograms=false] [--spec F]",
		Short: "Serve the machine's counters, liveness, gaps, CPU and spec verdicts to Prometheus",
		Long: `export serves /metrics for Prometheus: message counters per endpoint (topic, node, pid, side,
transport), node and process up-gauges, the gap histogram (classic and native buckets), seconds
since the last message, CPU seconds and RSS per process, timer fires, the spec verdict per rule
with --spec (judged every --period), and build info. Counters are the probe's own cumulative
counts, so Prometheus's rate() does the rest and a restart of export loses nothing.

--per-topic aggregates per topic instead of per endpoint (fewer series where topics have many
subscribers). --histograms=false leaves out the gap and latency histograms, five in six of a
robot's series once gap tracking is on; their spec verdicts and the last message's age stay.
--web.config.file takes the exporter-toolkit web configuration: TLS and basic auth.
It listens on loopback unless told otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.defaultPeriod(cmd, "5s")
			opt, err := f.options()
			if err != nil {
				return err
			}
			coll, err := export.New(export.Options{Dir: f.env.Dir, PerTopic: perTopic, NoHistograms: !histograms, Retain: f.retain, Version: version,
				Warn: os.Stderr, Empty: f.env.NothingThere()})
			if err != nil {
				return err
			}
			defer coll.Close()
			reg := prometheus.NewRegistry()
			reg.MustRegister(coll, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
			mux := http.NewServeMux()
			mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError}))
			landing, err := web.NewLandingPage(web.LandingConfig{Name: "pulse export", Description: "ROS 2 topic rates and node liveness",
				Version: version, Links: []web.LandingLinks{{Address: "/metrics", Text: "Metrics"}}})
			if err != nil {
				return err
			}
			mux.Handle("/", landing)

			ctx, cancel := signalContext()
			defer cancel()
			if opt.Spec != nil {
				// Verdicts come from the same recorder and evaluator as record and check.
				opt.Out, opt.Retain, opt.Empty = nil, -1, "" // the collector cleans up and says what it finds
				windows := 0
				s := opt.Spec
				opt.OnWindow = func(w *window.Window, warns []health.Warning, final bool) {
					if windows++; windows >= 2 && !final {
						coll.SetVerdicts(s, warns)
						coll.SetPaths(w.Paths)
					}
				}
				rec, err := recordInBackground(ctx, f.env.Dir, opt)
				if err != nil {
					return err
				}
				defer rec.Close()
			}
			return serveUntilDone(ctx, mux, listen, webConfig, "export",
				fmt.Sprintf("pulse export: serving http://%s/metrics (segments in %s)", listen, f.env.Dir))
		},
	}
	addServeFlags(c, &f, &listen, &webConfig, "127.0.0.1:9464", "/metrics")
	c.Flags().BoolVar(&perTopic, "per-topic", false, "one series per topic, side and transport instead of per endpoint")
	c.Flags().BoolVar(&histograms, "histograms", true, "serve the gap and latency histograms (false: a fleet's leaner series; verdicts and ages stay)")
	return c
}
