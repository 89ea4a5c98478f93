package bench

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"sort"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plottedHotpathLegs are the legs of one message's path that PlotHotpath
// draws: the designs compared and the probe's per-message legs. The rest
// (a callback_start without its end, the service calls, the pairs' parts)
// are in the tables; 25 lines made the plot unreadable.
var plottedHotpathLegs = []string{"floor", "plain", "old", "tls1", "tls256", "none", "probe", "probe_take_cpp",
	"probe_gap", "probe_take_lat", "none_pair", "probe_cb_pair", "probe_cb_pair_untimed", "probe_cb_gap"}

// PlotHotpath draws CPU ns per message against the access pattern, one line
// per leg, for one thread count (log scale: the legs span two decades), with
// the legend beside the plot so that it hides no line.
func PlotHotpath(rows []HotpathRow, threads int, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Hot path, %d thread(s): CPU ns per message", threads)
	p.X.Label.Text = "endpoints each thread cycles over"
	p.Y.Label.Text = "ns per message (log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	xs := map[int]bool{}
	for _, r := range rows {
		xs[r.Endpoints] = true
	}
	if len(xs) > 1 { // a log axis needs a range: one endpoint count stays linear
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	var lines []any
	for _, leg := range plottedHotpathLegs {
		var pts plotter.XYs
		for _, r := range rows {
			if r.Leg == leg && r.Threads == threads && r.NsPerMsg > 0 {
				pts = append(pts, plotter.XY{X: float64(r.Endpoints), Y: r.NsPerMsg})
			}
		}
		if len(pts) == 0 {
			continue
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		lines = append(lines, leg, pts)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	legend := p.Legend
	legend.Top, legend.Left = true, true
	p.Legend = plot.NewLegend() // drawn beside the plot instead of over it
	const plotWidth, legendWidth = 7 * vg.Inch, 2 * vg.Inch
	img := vgimg.New(plotWidth+legendWidth, 4.5*vg.Inch)
	dc := draw.New(img)
	p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
	legend.Draw(draw.Crop(dc, plotWidth, 0, 0, -vg.Inch/4))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// PlotOverhead draws each arm's added CPU per message event with ±SEM bars.
func PlotOverhead(rows []OverheadRow, graph, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("All-in overhead on the %s graph (paired, mean ± SEM)", graph)
	p.Y.Label.Text = "added CPU ns per message event vs no probe"
	var vals plotter.Values
	var errs plotter.YErrors
	var names []string
	for _, r := range rows {
		if r.Arm == "none" || math.IsNaN(r.NsPerEvent) {
			continue
		}
		vals = append(vals, r.NsPerEvent)
		errs = append(errs, struct{ Low, High float64 }{r.NsPerEvSEM, r.NsPerEvSEM})
		names = append(names, r.Arm)
	}
	return saveBars(p, vals, errs, names, path)
}

// saveBars adds bars with ±error whiskers to p, names them and saves it.
func saveBars(p *plot.Plot, vals plotter.Values, errs plotter.YErrors, names []string, path string) error {
	if len(vals) == 0 {
		return nil
	}
	bars, err := plotter.NewBarChart(vals, vg.Points(40))
	if err != nil {
		return err
	}
	bars.Color = color.RGBA{R: 70, G: 110, B: 170, A: 255}
	p.Add(bars)
	pts := make(plotter.XYs, len(vals))
	for i, v := range vals {
		pts[i] = plotter.XY{X: float64(i), Y: v}
	}
	eb, err := plotter.NewYErrorBars(struct {
		plotter.XYer
		plotter.YErrorer
	}{pts, errs})
	if err != nil {
		return err
	}
	p.Add(eb, plotter.NewGrid())
	p.NominalX(names...)
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}

// PlotReader draws CPU per sample against the total endpoints, log-log, one
// line per endpoints-per-process.
func PlotReader(rows []ReaderRow, path string) error {
	p := plot.New()
	p.Title.Text = "pulse record: CPU per 1 s sample"
	p.X.Label.Text = "total endpoints in the directory (log)"
	p.Y.Label.Text = "ms of CPU per sample (log)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	byE := map[int]plotter.XYs{}
	for _, r := range rows {
		if r.CPUms > 0 {
			byE[r.Endpoints] = append(byE[r.Endpoints], plotter.XY{X: float64(r.Procs * r.Endpoints), Y: r.CPUms})
		}
	}
	var lines []any
	for _, e := range keys(boolKeys(byE)) {
		pts := byE[e]
		sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		lines = append(lines, strconv.Itoa(e)+" endpoints/process", pts)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

func boolKeys[V any](m map[int]V) map[int]bool {
	out := map[int]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// PlotViewers draws each viewer's CPU share with ±SEM bars.
func PlotViewers(rows []ViewerRow, graph, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Viewers watching the %s graph (mean ± SEM)", graph)
	p.Y.Label.Text = "CPU % of one core"
	var vals plotter.Values
	var errs plotter.YErrors
	var names []string
	for _, r := range rows {
		vals = append(vals, r.CorePct)
		errs = append(errs, struct{ Low, High float64 }{r.CorePctSE, r.CorePctSE})
		names = append(names, "pulse "+r.Arm)
	}
	return saveBars(p, vals, errs, names, path)
}

// PlotExport draws a scrape's wall time and CPU against the processes in
// the directory (one line per endpoints-per-process).
func PlotExport(rows []ExportRow, path string) error {
	p := plot.New()
	p.Title.Text = "pulse export: one scrape"
	p.X.Label.Text = "probed processes"
	p.Y.Label.Text = "ms per scrape"
	byE := map[int][2]plotter.XYs{}
	for _, r := range rows {
		v := byE[r.Endpoints]
		v[0] = append(v[0], plotter.XY{X: float64(r.Procs), Y: r.WallMs})
		v[1] = append(v[1], plotter.XY{X: float64(r.Procs), Y: r.CPUms})
		byE[r.Endpoints] = v
	}
	var lines []any
	for _, e := range keys(boolKeys(byE)) {
		lines = append(lines, fmt.Sprintf("wall, %d endpoints/process", e), byE[e][0], fmt.Sprintf("CPU, %d endpoints/process", e), byE[e][1])
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

// PlotSoak draws each recorder's anonymous and total resident memory over
// the soak, the warm-up marked by where the fit starts.
func PlotSoak(samples []SoakSample, periods []time.Duration, graph string, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("pulse record watching the %s graph: resident memory", graph)
	p.X.Label.Text = "minutes"
	p.Y.Label.Text = "MiB"
	var lines []any
	for _, per := range periods {
		var anon, rss plotter.XYs
		for _, s := range samples {
			if s.Period == per {
				anon = append(anon, plotter.XY{X: s.At.Minutes(), Y: mib(s.Anon)})
				rss = append(rss, plotter.XY{X: s.At.Minutes(), Y: mib(s.RSS)})
			}
		}
		lines = append(lines, "RssAnon, period "+per.String(), anon, "VmRSS, period "+per.String(), rss)
	}
	if err := plotutil.AddLines(p, lines...); err != nil {
		return err
	}
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = false, true
	return p.Save(8*vg.Inch, 4.5*vg.Inch, path)
}

// PlotBars draws named means with ±SEM whiskers: a figure measured by hand
// (a live robot's reading, paired runs), drawn as the benchmarks draw theirs.
func PlotBars(title, ylabel string, names []string, means, sems []float64, path string) error {
	if len(names) != len(means) || len(means) != len(sems) {
		return fmt.Errorf("%d names, %d means, %d SEMs", len(names), len(means), len(sems))
	}
	p := plot.New()
	p.Title.Text, p.Y.Label.Text = title, ylabel
	errs := make(plotter.YErrors, len(sems))
	for i, s := range sems {
		errs[i].Low, errs[i].High = s, s
	}
	return saveBars(p, plotter.Values(means), errs, names, path)
}
