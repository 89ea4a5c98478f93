package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"ros2_pulse/internal/export"
)

// CardinalityOptions: the graphs whose series a robot costs a central
// Prometheus, run under the probe with and without gap tracking.
type CardinalityOptions struct {
	Simgraph, SimLib, Probe string
	Graphs                  []string
	Settle                  time.Duration // how long a graph runs before it is scraped
	Interval                time.Duration // the agent's scrape interval
	Log                     io.Writer
}

// CardinalityRow is one robot's exporter, scraped once.
type CardinalityRow struct {
	Graph                          string
	Jitter, PerTopic, NoHistograms bool
	Series                         int // sample lines of one scrape of pulse export
	Bytes                          int // its body, uncompressed text
}

// ScrapeSeries is what Prometheus adds per target and scrape (up,
// scrape_duration_seconds, scrape_samples_scraped,
// scrape_samples_post_metric_relabeling, scrape_series_added).
const ScrapeSeries = 5

// RunCardinality runs each graph under the probe (gap tracking off, then
// on) and scrapes pulse export's handler over its segments, per endpoint and
// per topic.
func RunCardinality(o CardinalityOptions) ([]CardinalityRow, error) {
	var rows []CardinalityRow
	for _, g := range o.Graphs {
		for _, jitter := range []bool{false, true} {
			seg, err := os.MkdirTemp("/dev/shm", "pulse-bench-cardinality-")
			if err != nil {
				return rows, err
			}
			cmd := exec.Command(o.Simgraph, "--graph", g, "--duration", fmt.Sprint((o.Settle + 10*time.Second).Seconds()))
			cmd.Env = append(os.Environ(), "LD_PRELOAD="+o.Probe, "LD_LIBRARY_PATH="+o.SimLib, "ROS_PULSE_DIR="+seg,
				"ROS_TOPIC_STATS_QUIET=1", "ROS_TOPIC_STATS_JITTER="+map[bool]string{false: "0", true: "1"}[jitter])
			if err := cmd.Start(); err != nil {
				os.RemoveAll(seg)
				return rows, err
			}
			time.Sleep(o.Settle)
			layouts := []export.Options{{}, {PerTopic: true}}
			if jitter {
				layouts = append(layouts, export.Options{NoHistograms: true})
			}
			for _, layout := range layouts {
				r, err := scrapeOnce(seg, layout)
				if err != nil {
					cmd.Process.Kill()
					cmd.Wait()
					os.RemoveAll(seg)
					return rows, err
				}
				r.Graph, r.Jitter = g, jitter
				rows = append(rows, r)
				fmt.Fprintf(o.Log, "cardinality: %s jitter=%v per-topic=%v histograms=%v: %d series, %d bytes\n", g, jitter, r.PerTopic, !r.NoHistograms, r.Series, r.Bytes)
			}
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
			os.RemoveAll(seg)
		}
	}
	return rows, nil
}

// scrapeOnce serves one scrape of pulse export over dir, laid out as
// layout says, through the real handler (the second: the first one only
// opens the windows).
func scrapeOnce(dir string, layout export.Options) (CardinalityRow, error) {
	layout.Dir, layout.Retain = dir, -1
	h, c, err := exportHandler(layout)
	if err != nil {
		return CardinalityRow{}, err
	}
	defer c.Close()
	scrapeBody(h)
	time.Sleep(time.Second)
	body := scrapeBody(h)
	return CardinalityRow{PerTopic: layout.PerTopic, NoHistograms: layout.NoHistograms, Bytes: len(body), Series: seriesIn(body)}, nil
}

// WriteCardinalityCSV writes one row per graph, gap tracking and layout.
func WriteCardinalityCSV(w io.Writer, rows []CardinalityRow) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"graph", "jitter", "per_topic", "histograms", "series", "bytes"})
	for _, r := range rows {
		cw.Write([]string{r.Graph, strconv.FormatBool(r.Jitter), strconv.FormatBool(r.PerTopic), strconv.FormatBool(!r.NoHistograms),
			strconv.Itoa(r.Series), strconv.Itoa(r.Bytes)})
	}
	cw.Flush()
	return cw.Error()
}

// CardinalityTable is the markdown table of docs/PERFORMANCE.md: per robot,
// then for 100 and 1,000 robots, the central server's active series and
// samples per second (each scrape's series plus Prometheus's own five per
// target, every interval), and the disk a day takes by Prometheus's sizing
// rule (about 2 bytes per sample, docs: storage).
func CardinalityTable(rows []CardinalityRow, interval time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| graph | gap tracking | layout | series per robot | bytes per scrape | samples/s per robot | 100 robots: series, samples/s, disk/day | 1,000 robots: series, samples/s, disk/day |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		series := r.Series + ScrapeSeries
		perSec := float64(series) / interval.Seconds()
		layout := map[bool]string{false: "per endpoint", true: "`--per-topic`"}[r.PerTopic]
		if r.NoHistograms {
			layout = "`--histograms=false`"
		}
		proj := func(n int) string {
			s := float64(n) * perSec
			return fmt.Sprintf("%d, %.0f, %.1f GiB", n*series, s, s*86400*2/(1<<30))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %.1f | %s | %s |\n", r.Graph, map[bool]string{false: "off", true: "on"}[r.Jitter],
			layout, series, r.Bytes, perSec, proj(100), proj(1000))
	}
	return b.String()
}
