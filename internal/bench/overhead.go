package bench

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OverheadOptions configure RunOverhead.
type OverheadOptions struct {
	Simgraph string              // build/bin/simgraph
	SimLib   string              // directory of the stand-in libtracetools
	Arms     map[string][]string // arm name -> extra environment (LD_PRELOAD, ROS_TOPIC_STATS_JITTER)
	Order    []string            // arm names; "none" must be one of them
	Graph    string              // "stress" (the farm) or "flat" (flat out)
	// MsgCost: µs of CPU each stand-in publish and delivery spends (simgraph
	// --msgcost), so the stand-in costs a message what a real middleware does
	MsgCost  float64
	Trials   int
	Duration time.Duration
	Log      io.Writer
}

// OverheadTrial is one run of one arm.
type OverheadTrial struct {
	Trial  int
	Arm    string
	CPU    float64 // seconds of CPU, all graph processes
	Events float64 // publishes + deliveries the graph made
}

// OverheadRow compares one arm with "none", paired trial by trial.
type OverheadRow struct {
	Arm                    string
	CPU, CPUSEM            float64 // mean CPU seconds of the arm
	Diff, DiffSEM          float64 // seconds vs none
	Pct, PctSEM            float64 // percent of none
	NsPerEvent, NsPerEvSEM float64 // added CPU per message event vs none
	Events                 float64
}

var (
	cpuRe    = regexp.MustCompile(`RESULT cpu_s=([0-9.]+)`)
	eventsRe = regexp.MustCompile(`RESULT events=(\d+)`)
)

// OverheadArms are pulse bench overhead's arms in their default order.
var OverheadArms = []string{"none", "null", "probe_untimed", "probe", "probe_gap", "probe_untimed_gap"}

// SelectArms keeps the named arms, in OverheadArms' order. "none" must be
// among them: every other arm is paired with it. Two arms alternate their
// order every trial, so each pair runs back to back.
func SelectArms(names []string) ([]string, error) {
	want := map[string]bool{}
	for _, n := range names {
		if !slices.Contains(OverheadArms, n) {
			return nil, fmt.Errorf("unknown arm %q: the arms are %s", n, strings.Join(OverheadArms, ", "))
		}
		want[n] = true
	}
	if !want["none"] {
		return nil, fmt.Errorf("the arms must include none: every other arm is compared with it")
	}
	if len(want) < 2 {
		return nil, fmt.Errorf("none alone compares nothing: name another arm too")
	}
	var out []string
	for _, a := range OverheadArms {
		if want[a] {
			out = append(out, a)
		}
	}
	return out, nil
}

// RunOverhead runs Trials trials of simgraph; each runs every arm once, in an
// order rotated every trial, so drift and warm-up cancel in the paired
// differences.
func RunOverhead(o OverheadOptions) ([]OverheadTrial, []OverheadRow, error) {
	seg, err := shmTemp("pulse-bench-overhead-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(seg)
	run := func(trial int, arm string) (OverheadTrial, error) {
		cmd := exec.Command(o.Simgraph, "--graph", o.Graph, "--duration", strconv.FormatFloat(o.Duration.Seconds(), 'f', 3, 64), "--rusage",
			"--msgcost", strconv.FormatFloat(o.MsgCost, 'f', -1, 64))
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+o.SimLib, "ROS_PULSE_DIR="+seg, "ROS_TOPIC_STATS_QUIET=1")
		cmd.Env = append(cmd.Env, o.Arms[arm]...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return OverheadTrial{}, fmt.Errorf("%s arm %s: %v: %s", o.Graph, arm, err, lastLines(stderr.String(), 5))
		}
		t := OverheadTrial{Trial: trial, Arm: arm}
		m := cpuRe.FindStringSubmatch(stderr.String())
		if m == nil {
			return t, fmt.Errorf("%s arm %s: simgraph reported no CPU", o.Graph, arm)
		}
		t.CPU, _ = strconv.ParseFloat(m[1], 64)
		for _, e := range eventsRe.FindAllStringSubmatch(stderr.String(), -1) {
			n, _ := strconv.ParseFloat(e[1], 64)
			t.Events += n
		}
		removeSegments(seg)
		return t, nil
	}
	trials, err := runPaired(o.Order, o.Trials, o.Graph, o.Log, run)
	if err != nil {
		return trials, nil, err
	}
	return trials, Compare(trials, o.Order), nil
}

// runPaired runs every arm once a trial, in an order rotated every trial
// (Rotations), and logs each run.
func runPaired(order []string, n int, what string, log io.Writer, run func(trial int, arm string) (OverheadTrial, error)) ([]OverheadTrial, error) {
	var trials []OverheadTrial
	for i := 0; i < n; i++ {
		for _, arm := range Rotations(order, i) {
			t, err := run(i, arm)
			if err != nil {
				return trials, err
			}
			trials = append(trials, t)
			fmt.Fprintf(log, "overhead %s trial %d %-5s cpu %.4fs events %.0f\n", what, i, arm, t.CPU, t.Events)
		}
	}
	return trials, nil
}

// Compare pairs every arm with "none" trial by trial.
func Compare(trials []OverheadTrial, arms []string) []OverheadRow {
	by := map[string]map[int]OverheadTrial{}
	for _, t := range trials {
		if by[t.Arm] == nil {
			by[t.Arm] = map[int]OverheadTrial{}
		}
		by[t.Arm][t.Trial] = t
	}
	var rows []OverheadRow
	for _, arm := range arms {
		var cpu, diff, pct, nsev, events []float64
		for i, t := range by[arm] {
			base, ok := by["none"][i]
			if !ok {
				continue
			}
			cpu = append(cpu, t.CPU)
			diff = append(diff, t.CPU-base.CPU)
			pct = append(pct, 100*(t.CPU-base.CPU)/base.CPU)
			events = append(events, t.Events)
			if t.Events > 0 && base.Events > 0 {
				nsev = append(nsev, 1e9*(t.CPU/t.Events-base.CPU/base.Events))
			}
		}
		r := OverheadRow{Arm: arm}
		r.CPU, r.CPUSEM = MeanSEM(cpu)
		r.Diff, r.DiffSEM = MeanSEM(diff)
		r.Pct, r.PctSEM = MeanSEM(pct)
		r.NsPerEvent, r.NsPerEvSEM = MeanSEM(nsev)
		r.Events, _ = MeanSEM(events)
		rows = append(rows, r)
	}
	return rows
}

// WriteOverheadCSV writes the raw trials.
func WriteOverheadCSV(w io.Writer, trials []OverheadTrial) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"trial", "arm", "cpu_s", "events"})
	for _, t := range trials {
		cw.Write([]string{strconv.Itoa(t.Trial), t.Arm, strconv.FormatFloat(t.CPU, 'f', 6, 64), strconv.FormatFloat(t.Events, 'f', 0, 64)})
	}
	cw.Flush()
	return cw.Error()
}

// OverheadTable renders rows as Markdown.
func OverheadTable(graph string, n int, rows []OverheadRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s graph, N=%d paired trials, arm order rotated every trial\n\n", graph, n)
	b.WriteString("| arm | CPU s | vs none (s) | vs none (%) | added ns per message event | events per run |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		if r.Arm == "none" {
			fmt.Fprintf(&b, "| none | %s | — | — | — | %.0f |\n", pm(r.CPU, r.CPUSEM, 3), r.Events)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.0f |\n", r.Arm, pm(r.CPU, r.CPUSEM, 3), pm(r.Diff, r.DiffSEM, 4),
			pm(r.Pct, r.PctSEM, 2), pm(r.NsPerEvent, r.NsPerEvSEM, 1), r.Events)
	}
	return b.String()
}
