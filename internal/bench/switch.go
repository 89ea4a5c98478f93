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
	Name   string   // the command, and the CSV's and plot's names
	Env    string   // the variable: 0 off, 1 on
	Legs   []string // the hotpath legs it changes
	Title  string   // the plot's title
	Shares []Share  // rows derived from two legs: what the switch adds to one event of a sequence
}

// Share is a row of what the switch adds to Whole beyond what it adds to
// Part, pair by pair: one event's share of a leg that is Part plus it.
type Share struct{ Name, Whole, Part string }

// Links: the hot-path legs whose cost latency links change (issue 47): a
// relayed message (take, callback start, a publish inside it, end), the
// same callback without the publish, a publish outside callbacks, an
// intra-process publish outside callbacks with its ring buffer enqueue
// (which links on stamps: rule 5), a timer callback that publishes in a
// node whose subscription took a message (a sampled link: rule 3), and the
// same timer callback without its publish: a publish's own share is the
// relay's less the take's callback, the timer's publish less its callback.
var Links = Switch{"links", "ROS_PULSE_LINKS", []string{"probe_relay", "probe_take_cb", "probe", "probe_intra", "probe_timer_pub", "probe_timer_cb"},
	"What latency links add (ROS_PULSE_LINKS=1, paired, mean ± SEM)",
	[]Share{{"relay_publish", "probe_relay", "probe_take_cb"}, {"timer_publish", "probe_timer_pub", "probe_timer_cb"}}}

// Bytes: a publish on a publisher of no known type, of a fixed-size type
// (its size learnt at init: nothing per message) and of a variable-size
// one (one message in ROS_PULSE_BYTES_EVERY walked), issue 48.
var Bytes = Switch{"bytes", "ROS_PULSE_BYTES", []string{"probe", "probe_fixed", "probe_sized"},
	"What bytes add to a publish (ROS_PULSE_BYTES=1, paired, mean ± SEM)", nil}

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
	// Pinned: the one worker thread stays on one CPU in both arms, so
	// neither pays a migration's cold caches (design note 0036).
	o := HotpathOptions{Binary: bin, Msgs: msgs, Reps: 2, Pin: true}
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
		for _, sh := range sw.Shares {
			rows = append(rows, shareRow(sh, e, pairs, off, on))
		}
	}
	return rows, nil
}

// shareRow is what the switch adds to sh.Whole less what it adds to
// sh.Part, each pair's added costs differenced (the four runs of a pair
// share its drift); its off and on are the differences of the means.
func shareRow(sh Share, endpoints, pairs int, off, on map[string][]float64) SwitchRow {
	added := func(leg string, i int) float64 { return on[leg][i] - off[leg][i] }
	whole, part := make([]float64, pairs), make([]float64, pairs)
	for i := range pairs {
		whole[i], part[i] = added(sh.Whole, i), added(sh.Part, i)
	}
	r := SwitchRow{Leg: sh.Name, Endpoints: endpoints, Pairs: pairs}
	wOff, _ := MeanSEM(off[sh.Whole])
	pOff, _ := MeanSEM(off[sh.Part])
	wOn, _ := MeanSEM(on[sh.Whole])
	pOn, _ := MeanSEM(on[sh.Part])
	r.OffNs, r.OnNs = wOff-pOff, wOn-pOn
	r.AddedNs, r.AddedSEM = Paired(part, whole)
	return r
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
