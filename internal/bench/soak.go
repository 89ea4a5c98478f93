package bench

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// SoakOptions configure RunSoak.
type SoakOptions struct {
	Pulse, Simgraph, SimLib, Probe string
	Graph                          string          // "stress"
	Periods                        []time.Duration // one pulse record per period, side by side
	Duration, Every, Warmup        time.Duration
	Log                            io.Writer
}

// SoakSample is one reading of one recorder's memory.
type SoakSample struct {
	Period             time.Duration
	At                 time.Duration // since the recorders started
	RSS, Anon, File    uint64        // bytes, /proc/<pid>/status
	Shmem              uint64        // the mapped segments
	HeapLive, HeapGoal float64       // MB after the last GC (GODEBUG=gctrace=1); NaN before the first
	GCs                int
}

// gcLine matches the runtime's gctrace line: "gc 12 @3.1s 0%: … 4->4->2 MB, 5 MB goal, …".
var gcLine = regexp.MustCompile(`^gc (\d+) @.*?(\d+)->(\d+)->(\d+) MB, (\d+) MB goal`)

// heapTrace follows one recorder's gctrace on its stderr.
type heapTrace struct {
	mu         sync.Mutex
	gcs        int
	live, goal float64
	other      []string // anything else the recorder said: a soak that warns is not a soak
}

func (h *heapTrace) follow(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		m := gcLine.FindStringSubmatch(line)
		h.mu.Lock()
		if m != nil {
			h.gcs, _ = strconv.Atoi(m[1])
			h.live, _ = strconv.ParseFloat(m[4], 64)
			h.goal, _ = strconv.ParseFloat(m[5], 64)
		} else if !strings.HasPrefix(line, "gc ") && !strings.HasPrefix(line, "scvg") && len(h.other) < 20 {
			h.other = append(h.other, line)
		}
		h.mu.Unlock()
	}
}

func (h *heapTrace) read() (gcs int, live, goal float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gcs == 0 {
		return 0, math.NaN(), math.NaN()
	}
	return h.gcs, h.live, h.goal
}

// RunSoak runs the graph under the probe for o.Duration with one
// `pulse record` per period watching it, and samples each recorder's
// resident memory every o.Every. Recorders write to /dev/null: the file
// they would write is not their memory.
func RunSoak(o SoakOptions) ([]SoakSample, error) {
	seg, err := os.MkdirTemp("/dev/shm", "pulse-bench-soak-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(seg)
	graph := exec.Command(o.Simgraph, "--graph", o.Graph, "--duration", strconv.FormatFloat((o.Duration+30*time.Second).Seconds(), 'f', 0, 64))
	graph.Env = append(os.Environ(), "LD_PRELOAD="+o.Probe, "LD_LIBRARY_PATH="+o.SimLib, "ROS_PULSE_DIR="+seg, "ROS_TOPIC_STATS_QUIET=1")
	if err := graph.Start(); err != nil {
		return nil, err
	}
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()
	time.Sleep(2 * time.Second) // every process has created its endpoints

	type recorder struct {
		period time.Duration
		cmd    *exec.Cmd
		trace  *heapTrace
		proc   procfs.Proc
	}
	var recs []*recorder
	defer func() {
		for _, r := range recs {
			r.cmd.Process.Signal(os.Interrupt)
			r.cmd.Wait()
		}
	}()
	for _, p := range o.Periods {
		cmd := exec.Command(o.Pulse, "record", "--period", p.String(), "--out", "/dev/null")
		cmd.Env = append(os.Environ(), "ROS_PULSE_DIR="+seg, "GODEBUG=gctrace=1")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		r := &recorder{period: p, cmd: cmd, trace: &heapTrace{}}
		go r.trace.follow(stderr)
		if r.proc, err = procfs.NewProc(cmd.Process.Pid); err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	start := time.Now()
	var out []SoakSample
	for at := time.Duration(0); at <= o.Duration; at += o.Every {
		time.Sleep(time.Until(start.Add(at)))
		for _, r := range recs {
			st, err := r.proc.NewStatus()
			if err != nil {
				return out, fmt.Errorf("pulse record --period %s exited after %s: %w (it said: %s)",
					r.period, time.Since(start).Round(time.Second), err, strings.Join(r.trace.other, " | "))
			}
			s := SoakSample{Period: r.period, At: time.Since(start), RSS: st.VmRSS, Anon: st.RssAnon, File: st.RssFile, Shmem: st.RssShmem}
			s.GCs, s.HeapLive, s.HeapGoal = r.trace.read()
			out = append(out, s)
			fmt.Fprintf(o.Log, "soak %-6s %7s  rss %6.2f MiB  anon %6.2f MiB  heap %4.0f MB after gc %d\n",
				r.period, s.At.Round(time.Second), mib(s.RSS), mib(s.Anon), s.HeapLive, s.GCs)
		}
	}
	for _, r := range recs {
		if len(r.trace.other) > 0 {
			return out, fmt.Errorf("pulse record --period %s said: %s", r.period, strings.Join(r.trace.other, " | "))
		}
	}
	return out, nil
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// SoakRow summarises one recorder after its warm-up.
type SoakRow struct {
	Period                  time.Duration
	AnonWarm, AnonEnd       float64 // MiB: the mean of the samples in the first and last tenth after warm-up
	AnonMax                 float64 // MiB after warm-up
	SlopeMiBPerHour         float64 // least-squares over every sample after warm-up
	RSSWarm, RSSEnd         float64
	HeapLiveMax, HeapGoalMx float64
	Samples                 int
}

// SummariseSoak fits each recorder's anonymous RSS after warm-up.
func SummariseSoak(samples []SoakSample, periods []time.Duration, warmup time.Duration) []SoakRow {
	var rows []SoakRow
	for _, p := range periods {
		var xs, anon, rss []float64
		r := SoakRow{Period: p, HeapLiveMax: math.NaN(), HeapGoalMx: math.NaN()}
		for _, s := range samples {
			if s.Period != p || s.At < warmup {
				continue
			}
			xs = append(xs, s.At.Hours())
			anon = append(anon, mib(s.Anon))
			rss = append(rss, mib(s.RSS))
			r.AnonMax = math.Max(r.AnonMax, mib(s.Anon))
			if !math.IsNaN(s.HeapLive) {
				r.HeapLiveMax = nanMax(r.HeapLiveMax, s.HeapLive)
				r.HeapGoalMx = nanMax(r.HeapGoalMx, s.HeapGoal)
			}
		}
		r.Samples = len(xs)
		if len(xs) >= 2 {
			tenth := max(1, len(xs)/10)
			r.AnonWarm, _ = MeanSEM(anon[:tenth])
			r.AnonEnd, _ = MeanSEM(anon[len(anon)-tenth:])
			r.RSSWarm, _ = MeanSEM(rss[:tenth])
			r.RSSEnd, _ = MeanSEM(rss[len(rss)-tenth:])
			r.SlopeMiBPerHour = slope(xs, anon)
		}
		rows = append(rows, r)
	}
	return rows
}

func nanMax(a, b float64) float64 {
	if math.IsNaN(a) {
		return b
	}
	return math.Max(a, b)
}

// slope is the least-squares slope of ys over xs.
func slope(xs, ys []float64) float64 {
	mx, _ := MeanSEM(xs)
	my, _ := MeanSEM(ys)
	var num, den float64
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	if den == 0 {
		return math.NaN()
	}
	return num / den
}

// WriteSoakCSV writes every sample.
func WriteSoakCSV(w io.Writer, samples []SoakSample) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"period", "seconds", "rss_bytes", "rss_anon_bytes", "rss_file_bytes", "rss_shmem_bytes", "gcs", "heap_live_mb", "heap_goal_mb"})
	for _, s := range samples {
		cw.Write([]string{s.Period.String(), strconv.FormatFloat(s.At.Seconds(), 'f', 1, 64),
			strconv.FormatUint(s.RSS, 10), strconv.FormatUint(s.Anon, 10), strconv.FormatUint(s.File, 10), strconv.FormatUint(s.Shmem, 10),
			strconv.Itoa(s.GCs), strconv.FormatFloat(s.HeapLive, 'f', 0, 64), strconv.FormatFloat(s.HeapGoal, 'f', 0, 64)})
	}
	cw.Flush()
	return cw.Error()
}

// SoakTable renders rows as Markdown.
func SoakTable(graph string, d, warmup time.Duration, rows []SoakRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\npulse record on the %s graph for %s; figures after a %s warm-up\n\n", graph, d, warmup)
	b.WriteString("| period | RssAnon after warm-up | RssAnon at the end | max | slope (least squares) | VmRSS warm → end | Go heap live (max) | samples |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %.2f MiB | %.2f MiB | %.2f MiB | %+.3f MiB/h | %.2f → %.2f MiB | %.0f MB (goal %.0f) | %d |\n",
			r.Period, r.AnonWarm, r.AnonEnd, r.AnonMax, r.SlopeMiBPerHour, r.RSSWarm, r.RSSEnd, r.HeapLiveMax, r.HeapGoalMx, r.Samples)
	}
	return b.String()
}
