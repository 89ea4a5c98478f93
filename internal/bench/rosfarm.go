package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"ros2_pulse/internal/cpu"
)

// ROSFarmOptions configure RunROSFarm: seed 000's stress farm as real nodes
// (ros/pulse_testnodes' pulse_node), in the ROS environment pulse runs in.
type ROSFarmOptions struct {
	Node     string              // <ws>/lib/pulse_testnodes/pulse_node
	RMW      string              // RMW_IMPLEMENTATION
	Arms     map[string][]string // arm name -> extra environment (LD_PRELOAD, ROS_PULSE_TIMING)
	Order    []string            // arm names; "none" among them
	Trials   int
	Duration time.Duration // how long the publishers publish
	Threads  int           // MultiThreadedExecutor threads per process
	Domain   int           // the farm's own ROS_DOMAIN_ID
	Pin      bool          // each process on one CPU (taskset), the i-th on CPU i mod the CPUs there are
	// Warmup > 0: a trial's CPU is the processes' over the steady window
	// from Warmup after the publishers start to 0.5 s before they stop
	// (/proc/<pid>/stat), leaving out discovery and teardown, whose CPU
	// swings from run to run; its events are the run's scaled to the window.
	// 0: the whole run's (getrusage, in the truth documents).
	Warmup time.Duration
	// Concurrent: each trial runs "none" and each other arm at the same time,
	// two farms in two domains (each its own), so what the machine does to
	// one it does to the other; the arms swap domains every trial. Pin is
	// ignored: both farms share every CPU.
	Concurrent bool
	// RateScale multiplies every rate (0: 1); callgrind's farm runs at a tenth or less
	RateScale float64
	Log       io.Writer
}

// The farm's shape (seed 000, bench/stress_nodes.cpp upstream): 30 light
// topics at 100 Hz and 8 of ~100 KB at 50 Hz from one process to another, 15
// intra-process pairs at 100 Hz in a third; ~4,900 messages a second, every
// node on a MultiThreadedExecutor with one Reentrant callback group.
const (
	farmLight, farmHeavy, farmIntra = 30, 8, 15
	farmHeavyBytes                  = 100000
)

// farmProcesses returns each process's pulse_node arguments (its name
// first), the publishers' last: the subscribers are up a second before.
func farmProcesses(o ROSFarmOptions) [][]string {
	common := []string{"--multi", strconv.Itoa(o.Threads), "--reentrant"}
	scale := o.RateScale
	if scale <= 0 {
		scale = 1
	}
	hz := func(r float64) string { return strconv.FormatFloat(r*scale, 'g', -1, 64) }
	pub := append([]string{"pubfarm"}, common...)
	sub := append([]string{"subfarm"}, common...)
	intra := append([]string{"intrafarm", "--intra"}, common...)
	for i := 0; i < farmLight; i++ {
		pub = append(pub, "--pub", fmt.Sprintf("/farm/light_%d,%s", i, hz(100)))
		sub = append(sub, "--sub", fmt.Sprintf("/farm/light_%d", i))
	}
	for i := 0; i < farmHeavy; i++ {
		pub = append(pub, "--pub", fmt.Sprintf("/farm/heavy_%d,%s,%d", i, hz(50), farmHeavyBytes))
		sub = append(sub, "--sub", fmt.Sprintf("/farm/heavy_%d", i))
	}
	for i := 0; i < farmIntra; i++ {
		intra = append(intra, "--pub", fmt.Sprintf("/farm/intra_%d,%s", i, hz(100)), "--sub", fmt.Sprintf("/farm/intra_%d", i))
	}
	return [][]string{sub, intra, pub}
}

// RunROSFarm runs the farm Trials times per arm, paired and order-rotated
// (runPaired). A trial's CPU is the three processes' own (getrusage, in
// their truth documents) and its events their publishes and deliveries; a
// run in which any subscription received nothing is an error, not a sample.
func RunROSFarm(o ROSFarmOptions) ([]OverheadTrial, []OverheadRow, error) {
	work, err := shmTemp("pulse-bench-rosfarm-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(work)
	if o.Concurrent {
		trials, err := runConcurrent(o, work)
		if err != nil {
			return trials, nil, err
		}
		return trials, Compare(trials, o.Order), nil
	}
	run := func(trial int, arm string) (OverheadTrial, error) {
		t := OverheadTrial{Trial: trial, Arm: arm}
		cpu, events, err := runFarmOnce(o, arm, work, o.Domain)
		t.CPU, t.Events = cpu, events
		return t, err
	}
	trials, err := runPaired(o.Order, o.Trials, "ros-farm", o.Log, run)
	if err != nil {
		return trials, nil, err
	}
	return trials, Compare(trials, o.Order), nil
}

// runConcurrent runs, per trial and per arm other than "none", that arm's
// farm and a farm without the probe at once; each pair is its own trial
// number, so Compare pairs them.
func runConcurrent(o ROSFarmOptions, work string) ([]OverheadTrial, error) {
	o.Pin = false
	var trials []OverheadTrial
	pair := 0
	for i := 0; i < o.Trials; i++ {
		for _, arm := range o.Order {
			if arm == "none" {
				continue
			}
			arms := [2]string{"none", arm}
			if pair%2 == 1 {
				arms = [2]string{arm, "none"}
			}
			var got [2]OverheadTrial
			var errs [2]error
			var wg sync.WaitGroup
			for k, a := range arms {
				wg.Add(1)
				go func() {
					defer wg.Done()
					dir := filepath.Join(work, strconv.Itoa(k))
					if errs[k] = os.MkdirAll(dir, 0o755); errs[k] != nil {
						return
					}
					cpu, events, err := runFarmOnce(o, a, dir, o.Domain+k)
					got[k], errs[k] = OverheadTrial{Trial: pair, Arm: a, CPU: cpu, Events: events}, err
				}()
			}
			wg.Wait()
			for k := range got {
				if errs[k] != nil {
					return trials, errs[k]
				}
				trials = append(trials, got[k])
				fmt.Fprintf(o.Log, "overhead ros-farm trial %d %-5s cpu %.4fs events %.0f (beside %s, domain %d)\n",
					pair, got[k].Arm, got[k].CPU, got[k].Events, got[1-k].Arm, o.Domain+k)
			}
			pair++
		}
	}
	return trials, nil
}

func runFarmOnce(o ROSFarmOptions, arm, work string, domain int) (cpu, events float64, err error) {
	steady := o.Duration - o.Warmup - 500*time.Millisecond // the window, when measured
	if o.Warmup > 0 && steady <= 0 {
		return 0, 0, fmt.Errorf("ros-farm: --warmup %v leaves no window in --duration %v", o.Warmup, o.Duration)
	}
	env, err := rosEnv(o.RMW, domain, work, o.Arms[arm])
	if err != nil {
		return 0, 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Duration+60*time.Second)
	defer cancel()
	var pin func(int, string, []string) []string
	if o.Pin { // fewer migrations and cache refills: a quieter arm (issue 45)
		pin = func(i int, _ string, argv []string) []string {
			return append([]string{"taskset", "-c", strconv.Itoa(i % runtime.NumCPU())}, argv...)
		}
	}
	run, err := startNodes(ctx, o.Node, work, env, farmProcesses(o), o.Duration, 2*time.Second, time.Second, pin)
	if err != nil {
		cancel()
		run.wait("")
		return 0, 0, fmt.Errorf("ros-farm arm %s: %v", arm, err)
	}
	var window float64 // CPU over the steady window, when measured
	if o.Warmup > 0 {
		time.Sleep(o.Warmup)
		before, err := farmCPU(run.cmds)
		if err != nil {
			return 0, 0, err
		}
		time.Sleep(steady)
		after, err := farmCPU(run.cmds)
		if err != nil {
			return 0, 0, err
		}
		window = after - before
	}
	if err := run.wait("ros-farm arm " + arm); err != nil {
		return 0, 0, err
	}
	var perProc strings.Builder // each process's whole-run CPU, for the log
	for i, name := range run.names {
		t, err := run.truth(i)
		if err != nil {
			return 0, 0, fmt.Errorf("ros-farm arm %s: %s: %v", arm, name, err)
		}
		cpu += t.CPU
		fmt.Fprintf(&perProc, "  %s %.3fs", name, t.CPU)
		for _, e := range t.Endpoints {
			if e.Kind == "subscription" && e.Count == 0 {
				return 0, 0, fmt.Errorf("ros-farm arm %s: %s on %s received nothing: the farm did not flow", arm, e.Node, e.Name)
			}
			if e.Kind == "publisher" || e.Kind == "subscription" {
				events += float64(e.Count)
			}
		}
	}
	if !o.Concurrent { // two farms' lines would interleave
		fmt.Fprintln(o.Log, perProc.String())
	}
	if o.Warmup > 0 {
		return window, events * steady.Seconds() / o.Duration.Seconds(), nil
	}
	return cpu, events, nil
}

// farmCPU is the farm's processes' CPU seconds so far.
func farmCPU(cmds []*exec.Cmd) (float64, error) {
	r, err := cpu.NewReader("")
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, c := range cmds {
		got, err := r.Read(c.Process.Pid, 0)
		if err != nil {
			return 0, fmt.Errorf("ros-farm: the CPU of pid %d: %v", c.Process.Pid, err)
		}
		sum += got.CPUSeconds
	}
	return sum, nil
}
