package bench

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// LinksLegs are the hot-path legs whose cost latency links change (issue
// 47): a relayed message (take, callback start, a publish inside it, end),
// the same callback without the publish, a publish outside callbacks, and
// an intra-process publish outside callbacks with its ring buffer enqueue
// (which links on stamps: rule 5), and a timer callback that publishes in
// a node whose subscription took a message (a sampled link: rule 3).
var LinksLegs = []string{"probe_relay", "probe_take_cb", "probe", "probe_intra", "probe_timer_pub"}

// LinksRow is one leg at one shape, links off against on.
type LinksRow struct {
	Leg               string
	Endpoints, Pairs  int
	OffNs, OnNs       float64 // CPU ns per message, mean over the pairs
	AddedNs, AddedSEM float64 // on minus off, paired
}

// RunLinks measures what ROS_PULSE_LINKS=1 adds, paired: each pair runs the
// hotpath legs in two processes, links off and on (the switch is
// process-wide), in alternating order, so drift cancels; the added cost is
// the mean ± SEM of the pairs' differences.
func RunLinks(bin string, endpoints []int, pairs int, msgs int64, log io.Writer) ([]LinksRow, error) {
	dir, err := os.MkdirTemp("", "pulse-bench-links-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	o := HotpathOptions{Binary: bin, Msgs: msgs, Reps: 2}
	var rows []LinksRow
	for _, e := range endpoints {
		off, on := map[string][]float64{}, map[string][]float64{}
		for i := 0; i < pairs; i++ {
			fmt.Fprintf(log, "links: %d endpoint(s), pair %d of %d\n", e, i+1, pairs)
			for _, arm := range Rotations([]string{"off", "on"}, i) {
				env := "ROS_PULSE_LINKS=0"
				if arm == "on" {
					env = "ROS_PULSE_LINKS=1"
				}
				samples, err := runHotpathShape(o, dir, 1, e, env, strings.Join(LinksLegs, ","))
				if err != nil {
					return nil, err
				}
				for _, leg := range LinksLegs {
					m, _ := MeanSEM(samples[leg])
					if arm == "on" {
						on[leg] = append(on[leg], m)
					} else {
						off[leg] = append(off[leg], m)
					}
				}
			}
		}
		for _, leg := range LinksLegs {
			r := LinksRow{Leg: leg, Endpoints: e, Pairs: pairs}
			r.OffNs, _ = MeanSEM(off[leg])
			r.OnNs, _ = MeanSEM(on[leg])
			r.AddedNs, r.AddedSEM = Paired(off[leg], on[leg])
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// WriteLinksCSV writes the rows.
func WriteLinksCSV(w io.Writer, rows []LinksRow) error {
	if _, err := fmt.Fprintln(w, "leg,endpoints,pairs,off_ns,on_ns,added_ns,added_sem"); err != nil {
		return err
	}
	for _, r := range rows {
		if _, err := fmt.Fprintf(w, "%s,%d,%d,%s,%s,%s,%s\n", r.Leg, r.Endpoints, r.Pairs, f3(r.OffNs), f3(r.OnNs), f3(r.AddedNs), f3(r.AddedSEM)); err != nil {
			return err
		}
	}
	return nil
}

// LinksTable is the rows as a markdown table.
func LinksTable(rows []LinksRow) string {
	var b strings.Builder
	b.WriteString("| leg | endpoints | links off (ns) | links on (ns) | added (ns, paired) |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %s |\n", r.Leg, r.Endpoints, r.OffNs, r.OnNs, pm(r.AddedNs, r.AddedSEM, 1))
	}
	return b.String()
}

// PlotLinks draws what links add to each leg at each shape.
func PlotLinks(rows []LinksRow, path string) error {
	p := plot.New()
	p.Title.Text = "What latency links add (ROS_PULSE_LINKS=1, paired, mean ± SEM)"
	p.Y.Label.Text = "added CPU ns per message"
	var vals plotter.Values
	var errs plotter.YErrors
	var names []string
	for _, r := range rows {
		vals = append(vals, r.AddedNs)
		errs = append(errs, struct{ Low, High float64 }{r.AddedSEM, r.AddedSEM})
		names = append(names, r.Leg+"/"+strconv.Itoa(r.Endpoints))
	}
	return saveBars(p, vals, errs, names, path)
}
