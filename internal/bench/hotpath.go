package bench

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// HotpathLegs in report order; see bench/hotpath/hotpath.c.
var HotpathLegs = []string{"floor", "plain", "old", "tls1", "tls256", "none", "probe", "probe_cb", "probe_take", "probe_take_cpp", "probe_gap", "probe_cb_gap", "probe_take_lat", "probe_take_cpp_lat",
	"none_pair", "null_pair", "probe_cb_pair", "probe_cb_pair_untimed", "probe_untimed",
	"none_srv", "probe_srv", "srv_added", "none_cli", "probe_cli", "cli_added",
	"probe_relay", "probe_take_cb", // a relayed message and its callback alone: what pulse bench links compares with links on
	"probe_intra",     // an intra-process publish outside callbacks with its ring buffer enqueue
	"probe_timer_pub", // a timer callback that publishes, its node's subscription having taken a message
	"probe_timer_cb"}  // the same timer callback without its publish

// addedLegs are paired differences, repetition by repetition: what the
// probe's wrappers add to one service call (two rcl functions) on each side.
var addedLegs = []struct{ name, base, probe string }{{"srv_added", "none_srv", "probe_srv"}, {"cli_added", "none_cli", "probe_cli"}}

// HotpathOptions configure RunHotpath.
type HotpathOptions struct {
	Binary    string // build/bin/hotpath
	Threads   []int
	Endpoints []int
	Msgs      int64 // per thread per repetition
	Reps      int
	Valgrind  string // path of valgrind; "" skips instruction counts
	Pin       bool   // bind each worker thread to its own CPU (hotpath --pin 1)
	Log       io.Writer
}

// HotpathRow is one leg at one shape.
type HotpathRow struct {
	Leg                string
	Threads, Endpoints int
	NsPerMsg, SEM      float64 // CPU ns per message
	RatioToFloor       float64
	InstrPerMsg        float64 // single-threaded, callgrind; NaN when not measured
}

func hotpathEnv(dir string, extra ...string) []string {
	return append(append(os.Environ(), "ROS_PULSE_DIR="+dir, "ROS_TOPIC_STATS_QUIET=1", "ROS_PULSE_MAX_ENDPOINTS=20000"), extra...)
}

// trackedLegs are probe legs run again in a process with a tracking switch
// on (the switches are process-wide), under their report names.
var trackedLegs = []struct{ base, name, env string }{
	{"probe", "probe_gap", "ROS_TOPIC_STATS_JITTER=1"},
	{"probe_cb", "probe_cb_gap", "ROS_TOPIC_STATS_JITTER=1"},
	{"probe_take", "probe_take_lat", "ROS_TOPIC_STATS_LATENCY=1"},
	{"probe_take_cpp", "probe_take_cpp_lat", "ROS_TOPIC_STATS_LATENCY=1"},
	// timing is on by default: these are the same legs with it off
	{"probe_cb_pair", "probe_cb_pair_untimed", "ROS_PULSE_TIMING=0"},
	{"probe", "probe_untimed", "ROS_PULSE_TIMING=0"},
}

// RunHotpath runs every shape in its own process (fresh probe state) and,
// with valgrind, counts instructions per message for each leg.
func RunHotpath(o HotpathOptions) ([]HotpathRow, error) {
	dir, err := os.MkdirTemp("", "pulse-bench-hotpath-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var rows []HotpathRow
	for _, t := range o.Threads {
		for _, e := range o.Endpoints {
			fmt.Fprintf(o.Log, "hotpath: %d thread(s), %d endpoint(s) per thread\n", t, e)
			samples, err := runHotpathShape(o, dir, t, e, "")
			if err != nil {
				return nil, err
			}
			// The probe legs again, one process per tracking switch.
			byEnv := map[string][]string{}
			for _, tl := range trackedLegs {
				byEnv[tl.env] = append(byEnv[tl.env], tl.base)
			}
			for env, legs := range byEnv {
				tracked, err := runHotpathShape(o, dir, t, e, strings.Join(legs, ","), env)
				if err != nil {
					return nil, err
				}
				for _, tl := range trackedLegs {
					if tl.env == env {
						samples[tl.name] = tracked[tl.base]
					}
				}
			}
			for _, a := range addedLegs {
				if len(samples[a.base]) > 0 && len(samples[a.probe]) > 0 {
					for i := range samples[a.base] { // legs run in rotated order each repetition: a pair per repetition
						if i < len(samples[a.probe]) {
							samples[a.name] = append(samples[a.name], samples[a.probe][i]-samples[a.base][i])
						}
					}
				}
			}
			floor, _ := MeanSEM(samples["floor"])
			for _, leg := range HotpathLegs {
				if len(samples[leg]) == 0 {
					continue
				}
				m, s := MeanSEM(samples[leg])
				rows = append(rows, HotpathRow{Leg: leg, Threads: t, Endpoints: e, NsPerMsg: m, SEM: s,
					RatioToFloor: m / floor, InstrPerMsg: math.NaN()})
			}
		}
	}
	if o.Valgrind != "" {
		for _, e := range o.Endpoints {
			for _, leg := range HotpathLegs {
				if addedLeg(leg) {
					continue // a difference of two legs, not a leg of its own
				}
				n, err := instructionsPerMessage(o, dir, leg, e)
				if err != nil {
					return rows, err
				}
				for i := range rows {
					if rows[i].Leg == leg && rows[i].Endpoints == e && rows[i].Threads == 1 {
						rows[i].InstrPerMsg = n
					}
				}
				removeSegments(dir)
			}
		}
	}
	return rows, nil
}

func addedLeg(leg string) bool {
	for _, a := range addedLegs {
		if a.name == leg {
			return true
		}
	}
	return false
}

func runHotpathShape(o HotpathOptions, dir string, threads, endpoints int, legs string, env ...string) (map[string][]float64, error) {
	args := []string{"--threads", strconv.Itoa(threads), "--endpoints", strconv.Itoa(endpoints),
		"--msgs", strconv.FormatInt(o.Msgs, 10), "--reps", strconv.Itoa(o.Reps)}
	if legs != "" {
		args = append(args, "--legs", legs)
	}
	if o.Pin {
		args = append(args, "--pin", "1")
	}
	cmd := exec.Command(o.Binary, args...)
	cmd.Env = hotpathEnv(dir, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	removeSegments(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %s", o.Binary, err, stderr.String())
	}
	return parseHotpathCSV(out)
}

func removeSegments(dir string) {
	m, _ := filepath.Glob(filepath.Join(dir, "*.pulse"))
	for _, p := range m {
		os.Remove(p)
	}
}

func parseHotpathCSV(out []byte) (map[string][]float64, error) {
	recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("hotpath output: %w", err)
	}
	samples := map[string][]float64{}
	for i, r := range recs {
		if i == 0 || len(r) != 5 {
			continue
		}
		v, err := strconv.ParseFloat(r[4], 64)
		if err != nil {
			return nil, fmt.Errorf("hotpath output line %d: %w", i+1, err)
		}
		samples[r[0]] = append(samples[r[0]], v)
	}
	return samples, nil
}

var collected = regexp.MustCompile(`Collected : (\d+)`)

// instructionsPerMessage runs one leg single-threaded under callgrind at two
// message counts; the difference cancels setup and teardown exactly.
func instructionsPerMessage(o HotpathOptions, dir, leg string, endpoints int) (float64, error) {
	run, env := leg, []string(nil)
	for _, tl := range trackedLegs {
		if leg == tl.name {
			run, env = tl.base, []string{tl.env}
		}
	}
	count := func(msgs int64) (float64, error) {
		cmd := exec.Command(o.Valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", o.Binary,
			"--legs", run, "--threads", "1", "--endpoints", strconv.Itoa(endpoints),
			"--msgs", strconv.FormatInt(msgs, 10), "--reps", "1")
		cmd.Env = hotpathEnv(dir, env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("callgrind %s: %v: %s", leg, err, lastLines(stderr.String(), 5))
		}
		m := collected.FindStringSubmatch(stderr.String())
		if m == nil {
			return 0, fmt.Errorf("callgrind %s: no instruction count in its output", leg)
		}
		return strconv.ParseFloat(m[1], 64)
	}
	// hotpath runs msgs/20+1 warm-up messages, then msgs measured ones.
	total := func(m int64) float64 { return float64(m + m/20 + 1) }
	const m1, m2 = 200000, 600000
	a, err := count(m1)
	if err != nil {
		return 0, err
	}
	b, err := count(m2)
	if err != nil {
		return 0, err
	}
	return (b - a) / (total(m2) - total(m1)), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// WriteHotpathCSV writes rows as CSV.
func WriteHotpathCSV(w io.Writer, rows []HotpathRow) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"leg", "threads", "endpoints", "cpu_ns_per_msg", "sem", "ratio_to_floor", "instructions_per_msg"})
	for _, r := range rows {
		cw.Write([]string{r.Leg, strconv.Itoa(r.Threads), strconv.Itoa(r.Endpoints), f3(r.NsPerMsg), f3(r.SEM), f3(r.RatioToFloor), f3(r.InstrPerMsg)})
	}
	cw.Flush()
	return cw.Error()
}

func f3(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// HotpathTable renders rows as a Markdown table, one block per thread count.
func HotpathTable(rows []HotpathRow) string {
	var b strings.Builder
	threads := map[int]bool{}
	eps := map[int]bool{}
	for _, r := range rows {
		threads[r.Threads], eps[r.Endpoints] = true, true
	}
	ts, es := keys(threads), keys(eps)
	for _, t := range ts {
		fmt.Fprintf(&b, "\n%d thread(s): CPU ns per message (x floor) [instructions per message]\n\n| leg |", t)
		for _, e := range es {
			fmt.Fprintf(&b, " %s |", pattern(e))
		}
		b.WriteString("\n|---|")
		for range es {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for _, leg := range HotpathLegs {
			fmt.Fprintf(&b, "| %s |", leg)
			for _, e := range es {
				cell := "—"
				for _, r := range rows {
					if r.Leg == leg && r.Threads == t && r.Endpoints == e {
						cell = fmt.Sprintf("%.2f ± %.2f (%.2fx)", r.NsPerMsg, r.SEM, r.RatioToFloor)
						if !math.IsNaN(r.InstrPerMsg) {
							cell += fmt.Sprintf(" [%.1f]", r.InstrPerMsg)
						}
					}
				}
				fmt.Fprintf(&b, " %s |", cell)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func pattern(endpoints int) string {
	if endpoints == 1 {
		return "fixed"
	}
	return fmt.Sprintf("alt-%d", endpoints)
}

func keys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
