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

// Switch is a process-wide probe switch whose cost the hotpath legs
// measure, off against on, paired (pulse bench links, pulse bench bytes).
type Switch struct {
	Name  string   // the command, and the CSV's and plot's names
	Env   string   // the variable: 0 off, 1 on
	Legs  []string // the hotpath legs it changes
	Title string   // the plot's title
}

// Links: the hot-path legs whose cost latency links change (issue 47): a
// relayed message (take, callback start, a publish inside it, end), the
// same callback without the publish, a publish outside callbacks, an
// intra-process publish outside callbacks with its ring buffer enqueue
// (which links on stamps: rule 5), and a timer callback that publishes in a
// node whose subscription took a message (a sampled link: rule 3).
var Links = Switch{"links", "ROS_PULSE_LINKS", []string{"probe_relay", "probe_take_cb", "probe", "probe_intra", "probe_timer_pub"},
	"What latency links add (ROS_PULSE_LINKS=1, paired, mean ± SEM)"}

// Bytes: a publish on a publisher of no known type, of a fixed-size type
// (its size learnt at init: nothing per message) and of a variable-size
// one (one message in ROS_PULSE_BYTES_EVERY walked), issue 48.
var Bytes = Switch{"bytes", "ROS_PULSE_BYTES", []string{"probe", "probe_fixed", "probe_sized"},
	"What bytes add to a publish (ROS_PULSE_BYTES=1, paired, mean ± SEM)"}

// SwitchRow is one leg at one shape, the switch off against on.
type SwitchRow struct {
	Leg               string
	Endpoints, Pairs  int
	OffNs, OnNs       float64 // CPU ns per message, mean over the pairs
	AddedNs, AddedSEM float64 // on minus off, paired
}

// RunSwitch measures what turning sw on adds, paired: each pair runs the
// hotpath legs in two processes, off and on (the switch is process-wide),
// in alternating order, so drift cancels; the added cost is the mean ± SEM
// of the pairs' differences. env is given to both (the stand-in's library
// path, for the bytes legs' type supports).
func RunSwitch(sw Switch, bin string, endpoints []int, pairs int, msgs int64, log io.Writer, env ...string) ([]SwitchRow, error) {
	dir, err := os.MkdirTemp("", "pulse-bench-"+sw.Name+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	o := HotpathOptions{Binary: bin, Msgs: msgs, Reps: 2}
	var rows []SwitchRow
	for _, e := range endpoints {
		off, on := map[string][]float64{}, map[string][]float64{}
		for i := 0; i < pairs; i++ {
			fmt.Fprintf(log, "%s: %d endpoint(s), pair %d of %d\n", sw.Name, e, i+1, pairs)
			for _, arm := range Rotations([]string{"off", "on"}, i) {
				value := "0"
				if arm == "on" {
					value = "1"
				}
				samples, err := runHotpathShape(o, dir, 1, e, strings.Join(sw.Legs, ","), append(env, sw.Env+"="+value)...)
				if err != nil {
					return nil, err
				}
				for _, leg := range sw.Legs {
					m, _ := MeanSEM(samples[leg])
					if arm == "on" {
						on[leg] = append(on[leg], m)
					} else {
						off[leg] = append(off[leg], m)
					}
				}
			}
		}
		for _, leg := range sw.Legs {
			r := SwitchRow{Leg: leg, Endpoints: e, Pairs: pairs}
			r.OffNs, _ = MeanSEM(off[leg])
			r.OnNs, _ = MeanSEM(on[leg])
			r.AddedNs, r.AddedSEM = Paired(off[leg], on[leg])
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// WriteSwitchCSV writes the rows.
func WriteSwitchCSV(w io.Writer, rows []SwitchRow) error {
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

// SwitchTable is the rows as a markdown table.
func SwitchTable(sw Switch, rows []SwitchRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| leg | endpoints | %s off (ns) | %s on (ns) | added (ns, paired) |\n|---|---|---|---|---|\n", sw.Name, sw.Name)
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %s |\n", r.Leg, r.Endpoints, r.OffNs, r.OnNs, pm(r.AddedNs, r.AddedSEM, 1))
	}
	return b.String()
}

// PlotSwitch draws what the switch adds to each leg at each shape.
func PlotSwitch(sw Switch, rows []SwitchRow, path string) error {
	p := plot.New()
	p.Title.Text = sw.Title
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
