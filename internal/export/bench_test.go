package export

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"ros2_pulse/internal/segment"
)

// BenchmarkScrape100x50: one scrape of 100 processes x 50 endpoints through
// the /metrics handler (the bar: <= 50 ms; `pulse bench export`
// reports it with the CPU share).
func BenchmarkScrape100x50(b *testing.B) {
	dir := b.TempDir()
	for p := 0; p < 100; p++ {
		spec := segment.SyntheticSpec{Pid: 1000 + p, StartMono: 1, Exe: "/opt/ros/lib/node"}
		for n := 0; n < 5; n++ {
			spec.Nodes = append(spec.Nodes, fmt.Sprintf("/p%d/node_%d", p, n))
		}
		for e := 0; e < 50; e++ {
			kind := segment.Kind(segment.KindPublisher)
			if e%2 == 1 {
				kind = segment.KindSubscription
			}
			spec.Endpoints = append(spec.Endpoints, segment.SyntheticEndpoint{Kind: kind, Name: fmt.Sprintf("/topic_%d", e/2), Node: e / 10, Counts: [4]uint64{uint64(e), 0, 0, 0}})
		}
		if err := segment.WriteSynthetic(filepath.Join(dir, fmt.Sprintf("%d.0.pulse", spec.Pid)), spec); err != nil {
			b.Fatal(err)
		}
	}
	c, err := New(Options{Dir: dir, Retain: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/metrics", nil))
	}
}
