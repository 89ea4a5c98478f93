package bench

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ROSInstrOptions configure RunROSInstructions: real ROS 2 nodes under
// callgrind, once per arm, and the instructions each probe hook spends.
type ROSInstrOptions struct {
	Node     string              // <ws>/lib/pulse_testnodes/pulse_node
	Valgrind string              // valgrind
	RMW      string              // RMW_IMPLEMENTATION
	Arms     map[string][]string // arm name -> extra environment (LD_PRELOAD, ROS_PULSE_TIMING)
	Order    []string
	Duration time.Duration
	Domain   int
	// FarmScale > 0 also runs the stress farm at that fraction of its rates
	// under callgrind with its cache simulation: the probe's share of the
	// whole farm's instructions and misses
	FarmScale float64
	// Keep, when set, is where every run's callgrind profiles stay (a
	// directory per scenario and arm, the farm's as farm-<arm>), for
	// callgrind_annotate; otherwise they are removed with the run.
	Keep string
	Log  io.Writer
}

// InstrRow is one hook of one process in one arm: its calls and the
// instructions it spent a call above the function it forwards to.
type InstrRow struct {
	Scenario, Arm, Process, Hook string
	Calls                        uint64
	PerCall                      float64
}

// InstrEvent is one event's figure per arm (instructions of the probe's
// hooks per event), e.g. a publish or a service call.
type InstrEvent struct {
	Event string
	Arm   map[string]float64
}

// The scenarios: a talker and a listener, a server and a client (each
// process its own; --name first).
var instrScenarios = []struct {
	name  string
	procs [][]string
}{
	{"pubsub", [][]string{{"listener", "--sub", "/cg/chatter"}, {"talker", "--pub", "/cg/chatter,200"}}},
	{"service", [][]string{{"server", "--server", "/cg/add"}, {"client", "--client", "/cg/add,100"}}},
}

// instrHooks are the probe's per-message hooks (both libraries export them;
// the null shim forwards only).
var instrHooks = []string{"ros_trace_rcl_publish", "ros_trace_rclcpp_intra_publish", "ros_trace_rmw_take",
	"ros_trace_callback_start", "ros_trace_callback_end", "rcl_timer_call", "rcl_timer_call_with_info", "rcl_wait",
	"rcl_send_request", "rcl_send_response"}

// errUnmatchedRun: the listener took under half of what the talker
// published (under callgrind Fast DDS's discovery can outlast most of a run),
// so per-call figures would be a few first calls' cost. Such a run is run again.
var errUnmatchedRun = errors.New("the listener took under half of the talker's messages")

const instrTries = 3

// RunROSInstructions runs each scenario once per arm under callgrind and
// reads every process's profile.
func RunROSInstructions(o ROSInstrOptions) ([]InstrRow, []InstrEvent, error) {
	work := o.Keep
	if work == "" {
		tmp, err := os.MkdirTemp("", "pulse-bench-rosinstr-")
		if err != nil {
			return nil, nil, err
		}
		defer os.RemoveAll(tmp)
		work = tmp
	}
	var rows []InstrRow
	events := map[string]map[string]float64{}
	for _, sc := range instrScenarios {
		for _, arm := range o.Order {
			dir := filepath.Join(work, sc.name+"-"+arm)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return rows, nil, err
			}
			got, ev, err := instrRun(o, sc.name, sc.procs, arm, dir)
			for try := 2; errors.Is(err, errUnmatchedRun) && try <= instrTries; try++ {
				fmt.Fprintf(o.Log, "%v: run again (%d of %d)\n", err, try, instrTries)
				got, ev, err = instrRun(o, sc.name, sc.procs, arm, dir)
			}
			if err != nil {
				return rows, nil, err
			}
			rows = append(rows, got...)
			for k, v := range ev {
				if events[k] == nil {
					events[k] = map[string]float64{}
				}
				events[k][arm] = v
			}
			fmt.Fprintf(o.Log, "instructions %s %s: %d hooks\n", sc.name, arm, len(got))
		}
	}
	if o.FarmScale > 0 {
		procs := farmProcesses(ROSFarmOptions{Threads: 1, RateScale: o.FarmScale})
		for _, arm := range o.Order {
			ev, err := instrFarm(o, procs, arm, work)
			if err != nil {
				return rows, nil, err
			}
			for k, v := range ev {
				if events[k] == nil {
					events[k] = map[string]float64{}
				}
				events[k][arm] = v
			}
			fmt.Fprintf(o.Log, "instructions farm %s: %.0f instructions a message event\n", arm, ev[farmInstr])
		}
	}
	var out []InstrEvent
	for _, k := range []string{"publish", "take", "callback (start + end)", "timer call", "wait", "service call (both ends)",
		"all hooks a message (talker + listener)", farmInstr, farmProbeShare, farmL1, farmLL, farmProbeMissShare} {
		if events[k] != nil {
			out = append(out, InstrEvent{k, events[k]})
		}
	}
	return rows, out, nil
}

// preloadObject is the object whose hooks an arm's LD_PRELOAD puts first, or
// libtracetools.so and librcl.so (the real functions) without one.
func preloadObject(env []string) string {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "LD_PRELOAD="); ok {
			return filepath.Base(v)
		}
	}
	return ""
}

func instrRun(o ROSInstrOptions, scenario string, procs [][]string, arm, work string) ([]InstrRow, map[string]float64, error) {
	what := fmt.Sprintf("instructions %s arm %s", scenario, arm)
	env, err := rosEnv(o.RMW, o.Domain, work, o.Arms[arm])
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Duration+120*time.Second)
	defer cancel()
	// the second process starts 2 s after the first, which outlives its last message
	run, err := startNodes(ctx, o.Node, work, env, procs, o.Duration, 3*time.Second, 2*time.Second, callgrind(o.Valgrind, work))
	if err != nil {
		cancel()
		run.wait("")
		return nil, nil, err
	}
	if err := run.wait(what); err != nil {
		return nil, nil, err
	}
	obj := preloadObject(o.Arms[arm])
	var rows []InstrRow
	perProc := map[string]map[string]InstrRow{}
	var probeSelf uint64
	var msgs, taken, requests uint64
	for i, name := range run.names {
		t, err := run.truth(i)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", what, err)
		}
		for _, e := range t.Endpoints {
			switch e.Kind {
			case "publisher":
				msgs += e.Count
			case "subscription":
				taken += e.Count
			case "client":
				requests += e.Count
			}
		}
		prof, err := run.profile(i)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", what, err)
		}
		if obj != "" {
			probeSelf += prof.Self[obj]
		}
		perProc[name] = map[string]InstrRow{}
		for _, h := range instrHooks {
			hobj := obj
			if hobj == "" { // no probe: the real function's own cost (the tracepoint) stands in
				hobj = "libtracetools.so"
				if !strings.HasPrefix(h, "ros_trace_") {
					continue
				}
			}
			per, calls := prof.Own(hobj, h)
			if calls == 0 {
				continue
			}
			r := InstrRow{scenario, arm, name, h, calls, per}
			rows = append(rows, r)
			perProc[name][h] = r
		}
	}
	if msgs == 0 && requests == 0 {
		return nil, nil, fmt.Errorf("instructions %s arm %s: nothing was published or sent under callgrind", scenario, arm)
	}
	if scenario == "pubsub" && 2*taken < msgs {
		return nil, nil, fmt.Errorf("%s: %w (%d of %d)", what, errUnmatchedRun, taken, msgs)
	}
	ev := map[string]float64{}
	switch scenario {
	case "pubsub":
		ev["publish"] = perProc["talker"]["ros_trace_rcl_publish"].PerCall
		ev["take"] = perProc["listener"]["ros_trace_rmw_take"].PerCall
		ev["callback (start + end)"] = perProc["listener"]["ros_trace_callback_start"].PerCall + perProc["listener"]["ros_trace_callback_end"].PerCall
		ev["timer call"] = perProc["talker"]["rcl_timer_call"].PerCall + perProc["talker"]["rcl_timer_call_with_info"].PerCall
		ev["wait"] = perProc["listener"]["rcl_wait"].PerCall
		if obj != "" {
			ev["all hooks a message (talker + listener)"] = float64(probeSelf) / float64(msgs)
		}
	case "service":
		var sum float64
		for _, rs := range perProc {
			for _, r := range rs {
				sum += r.PerCall * float64(r.Calls)
			}
		}
		if requests > 0 {
			ev["service call (both ends)"] = sum / float64(requests)
		}
	}
	return rows, ev, nil
}

// WriteInstrCSV writes every hook's row.
func WriteInstrCSV(w io.Writer, rows []InstrRow) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"scenario", "arm", "process", "hook", "calls", "instructions_per_call"})
	for _, r := range rows {
		cw.Write([]string{r.Scenario, r.Arm, r.Process, r.Hook, strconv.FormatUint(r.Calls, 10), strconv.FormatFloat(r.PerCall, 'f', 1, 64)})
	}
	cw.Flush()
	return cw.Error()
}

// InstrTable renders the events as Markdown: one column per arm, and the
// probe's own above the null shim.
func InstrTable(tag string, order []string, events []InstrEvent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nreal ROS %s under callgrind: the hooks' instructions per event, above the functions they forward to\n\n", tag)
	b.WriteString("| event |")
	for _, a := range order {
		b.WriteString(" " + a + " |")
	}
	b.WriteString(" probe − null |\n|---|")
	b.WriteString(strings.Repeat("---|", len(order)+1) + "\n")
	for _, e := range events {
		fmt.Fprintf(&b, "| %s |", e.Event)
		for _, a := range order {
			if v, ok := e.Arm[a]; ok {
				fmt.Fprintf(&b, " %.1f |", v)
			} else {
				b.WriteString(" — |")
			}
		}
		p, okp := e.Arm["probe"]
		n, okn := e.Arm["null"]
		if okp && okn {
			fmt.Fprintf(&b, " %.1f |\n", p-n)
		} else {
			b.WriteString(" — |\n")
		}
	}
	return b.String()
}

// The farm's figures under callgrind (per message event: a publish or a delivery).
const (
	farmInstr          = "farm: instructions a message event (all code)"
	farmProbeShare     = "farm: the probe's share of its instructions (%)"
	farmL1             = "farm: L1 misses a message event (all code)"
	farmLL             = "farm: last-level misses a message event (all code)"
	farmProbeMissShare = "farm: the probe's share of its L1 misses (%)"
)

// instrFarm runs the farm's processes under callgrind with the cache
// simulation, at o.FarmScale of its rates, and sums their profiles.
func instrFarm(o ROSInstrOptions, procs [][]string, arm, work string) (map[string]float64, error) {
	what := "instructions farm arm " + arm
	dir := filepath.Join(work, "farm-"+arm)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	env, err := rosEnv(o.RMW, o.Domain, dir, o.Arms[arm])
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Duration+180*time.Second)
	defer cancel()
	// the publishers start once the subscribers are up (and matched) at valgrind's pace
	run, err := startNodes(ctx, o.Node, dir, env, procs, o.Duration, 6*time.Second, 4*time.Second,
		callgrind(o.Valgrind, dir, "--cache-sim=yes"))
	if err != nil {
		cancel()
		run.wait("")
		return nil, err
	}
	if err := run.wait(what); err != nil {
		return nil, err
	}
	obj := preloadObject(o.Arms[arm])
	var events, ir, probeIr, l1, probeL1, ll float64
	for i := range run.names {
		t, err := run.truth(i)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", what, err)
		}
		for _, e := range t.Endpoints {
			if e.Kind == "publisher" || e.Kind == "subscription" {
				events += float64(e.Count)
			}
		}
		prof, err := run.profile(i)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", what, err)
		}
		get := func(ev, obj string) float64 { n, _ := prof.Event(ev, obj); return float64(n) }
		ir += get("Ir", "")
		l1 += get("I1mr", "") + get("D1mr", "") + get("D1mw", "")
		ll += get("ILmr", "") + get("DLmr", "") + get("DLmw", "")
		if obj != "" {
			probeIr += get("Ir", obj)
			probeL1 += get("I1mr", obj) + get("D1mr", obj) + get("D1mw", obj)
		}
	}
	if events == 0 {
		return nil, fmt.Errorf("instructions farm arm %s: the farm moved no message under callgrind", arm)
	}
	ev := map[string]float64{farmInstr: ir / events, farmL1: l1 / events, farmLL: ll / events}
	if obj != "" {
		ev[farmProbeShare] = 100 * probeIr / ir
		ev[farmProbeMissShare] = 100 * probeL1 / l1
	}
	return ev, nil
}
