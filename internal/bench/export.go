package bench

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"ros2_pulse/internal/cpu"
	"ros2_pulse/internal/export"
)

// ExportRow is the cost of one scrape of pulse export over one directory.
type ExportRow struct {
	Procs, Endpoints int
	WallMs, WallSEM  float64 // a whole scrape, HTTP handler and text encoding included
	CPUms, CPUSEM    float64
	CorePct          float64 // at Interval
	Bytes            int     // response size
	Series           int
}

// RunExport scrapes synthetic directories through the real /metrics handler.
// Synthetic processes are not alive, so each scrape also reads
// /proc/self/stat once per process: the CPU and RSS read a live one costs.
func RunExport(procs, endpoints []int, scrapes int, interval time.Duration, log io.Writer) ([]ExportRow, error) {
	var rows []ExportRow
	reader, err := cpu.NewReader("")
	if err != nil {
		return nil, err
	}
	for _, p := range procs {
		for _, e := range endpoints {
			dir, err := os.MkdirTemp("/dev/shm", "pulse-bench-export-")
			if err != nil {
				return rows, err
			}
			if err := MakeDirectory(dir, p, e); err != nil {
				os.RemoveAll(dir)
				return rows, err
			}
			h, c, err := exportHandler(export.Options{Dir: dir, Retain: -1})
			if err != nil {
				return rows, err
			}
			var wall, cpuMs []float64
			r := ExportRow{Procs: p, Endpoints: e}
			for i := 0; i <= scrapes; i++ {
				c0, t0 := cpuNow(), time.Now()
				body := scrapeBody(h)
				for k := 0; k < p; k++ {
					_, _ = reader.Read(os.Getpid(), 0)
				}
				if i == 0 {
					r.Bytes, r.Series = len(body), seriesIn(body)
					continue // the first scrape maps every file
				}
				wall = append(wall, float64(time.Since(t0))/1e6)
				cpuMs = append(cpuMs, float64(cpuNow()-c0)/1e6)
			}
			c.Close()
			os.RemoveAll(dir)
			r.WallMs, r.WallSEM = MeanSEM(wall)
			r.CPUms, r.CPUSEM = MeanSEM(cpuMs)
			r.CorePct = r.CPUms / float64(interval.Milliseconds()) * 100
			rows = append(rows, r)
			fmt.Fprintf(log, "export: %d processes x %d endpoints: %.2f ms a scrape, %.2f ms CPU, %d series, %d bytes\n",
				p, e, r.WallMs, r.CPUms, r.Series, r.Bytes)
		}
	}
	return rows, nil
}

// exportHandler is pulse export's real /metrics handler over opt, and its
// collector (to Close).
func exportHandler(opt export.Options) (http.Handler, *export.Collector, error) {
	c, err := export.New(opt)
	if err != nil {
		return nil, nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), c, nil
}

// scrapeBody serves one scrape through h and returns its body.
func scrapeBody(h http.Handler) []byte {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.Bytes()
}

// seriesIn counts the samples of a text-format scrape: its lines that are
// neither empty nor comments (# HELP, # TYPE).
func seriesIn(body []byte) int {
	n := 0
	for _, line := range bytes.Split(body, []byte("\n")) {
		if len(line) > 0 && line[0] != '#' {
			n++
		}
	}
	return n
}

// WriteExportCSV writes rows as CSV.
func WriteExportCSV(w io.Writer, rows []ExportRow) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"procs", "endpoints", "wall_ms", "wall_sem", "cpu_ms", "cpu_sem", "core_pct", "series", "bytes"})
	for _, r := range rows {
		cw.Write([]string{strconv.Itoa(r.Procs), strconv.Itoa(r.Endpoints), f3(r.WallMs), f3(r.WallSEM), f3(r.CPUms), f3(r.CPUSEM),
			strconv.FormatFloat(r.CorePct, 'f', 4, 64), strconv.Itoa(r.Series), strconv.Itoa(r.Bytes)})
	}
	cw.Flush()
	return cw.Error()
}

// ExportTable renders rows as Markdown.
func ExportTable(interval time.Duration, rows []ExportRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\npulse export: one scrape through the /metrics handler, CPU share at a %v interval\n\n", interval)
	b.WriteString("| processes | endpoints each | series | scrape wall | scrape CPU | share of a core |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %d | %d | %d | %s ms | %s ms | %.3f %% |\n", r.Procs, r.Endpoints, r.Series, pm(r.WallMs, r.WallSEM, 2), pm(r.CPUms, r.CPUSEM, 2), r.CorePct)
	}
	return b.String()
}
