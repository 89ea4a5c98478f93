package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"ros2_pulse/internal/diagnose"
	"ros2_pulse/internal/logfmt"
	"ros2_pulse/internal/recorder"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// ReaderRow is the recorder's cost on one synthetic directory.
type ReaderRow struct {
	Procs, Endpoints int     // processes x endpoints per process
	CPUms, CPUmsSEM  float64 // CPU per sample (scan, window, render)
	CorePct          float64 // share of one core at a 1 s period
	MaxRSSKiB        int64
	AnonKiB          int64 // private memory (RssAnon) after the last sample: RSS less the binary's pages and the shared segments
}

// MakeDirectory fills dir with procs synthetic segments of endpoints endpoints
// each (one node per 10 endpoints, a publisher and a subscription per topic).
func MakeDirectory(dir string, procs, endpoints int) error {
	for p := 0; p < procs; p++ {
		spec := segment.SyntheticSpec{Pid: 100000 + p, Exe: "/opt/ros/lib/bench_node", StartMono: 1}
		for n := 0; n < max(1, endpoints/10); n++ {
			spec.Nodes = append(spec.Nodes, fmt.Sprintf("/p%d/node_%d", p, n))
		}
		for e := 0; e < endpoints; e++ {
			kind := segment.Kind(segment.KindPublisher)
			if e%2 == 1 {
				kind = segment.KindSubscription
			}
			spec.Endpoints = append(spec.Endpoints, segment.SyntheticEndpoint{Kind: kind, Name: fmt.Sprintf("/topic_%d", e/2),
				Node: e / 10 % len(spec.Nodes), Aux: 10, Counts: [4]uint64{uint64(e), 0, 0, 0},
				QoS: &segment.QoS{Actual: true, History: 1, Depth: 10, Reliability: 1, Durability: 2, Liveliness: 1, // as the probe learns it (ABI 1.5)
					DeadlineNs: segment.DurationInfinite, LeaseNs: segment.DurationInfinite, Domain: 0, RMW: "rmw_fastrtps_cpp", Type: "std_msgs/msg/String"}})
		}
		if err := segment.WriteSynthetic(filepath.Join(dir, fmt.Sprintf("%d.0.pulse", spec.Pid)), spec); err != nil {
			return err
		}
	}
	return nil
}

func cpuNow() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// MeasureReader runs `samples` recorder steps over dir in this process and
// prints "cpu_ms=<per sample>,<sem> maxrss_kib=<n>". It is the body of the
// child process RunReader starts per directory, so RSS is the reader's own.
func MeasureReader(dir string, samples int, out io.Writer) error {
	rec, err := recorder.New(dir, recorder.Options{Period: time.Second, Format: logfmt.Text, Out: io.Discard, Retain: -1,
		Window: window.Options{}, ReuseWindows: true}) // as pulse record runs
	if err != nil {
		return err
	}
	defer rec.Close()
	var per []float64
	for i := 0; i < samples; i++ {
		c := cpuNow()
		if _, err := rec.Step(false); err != nil {
			return err
		}
		per = append(per, float64(cpuNow()-c)/1e6)
	}
	m, s := MeanSEM(per[min(1, len(per)-1):]) // the first sample maps every file
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	var anon uint64
	if p, err := procfs.Self(); err == nil {
		if st, err := p.NewStatus(); err == nil {
			anon = st.RssAnon / 1024
		}
	}
	fmt.Fprintf(out, "cpu_ms=%.4f,%.4f maxrss_kib=%d anon_kib=%d\n", m, s, ru.Maxrss, anon)
	return nil
}

// RunReader measures every (procs, endpoints) pair in a child process of self.
func RunReader(self string, procs, endpoints []int, samples int, log io.Writer) ([]ReaderRow, error) {
	var rows []ReaderRow
	for _, p := range procs {
		for _, e := range endpoints {
			dir, err := os.MkdirTemp("/dev/shm", "pulse-bench-reader-")
			if err != nil {
				return rows, err
			}
			if err := MakeDirectory(dir, p, e); err != nil {
				os.RemoveAll(dir)
				return rows, err
			}
			out, err := exec.Command(self, "bench", "reader-sample", "--dir", dir, "--samples", strconv.Itoa(samples)).Output()
			os.RemoveAll(dir)
			if err != nil {
				return rows, fmt.Errorf("reader sample %dx%d: %v", p, e, err)
			}
			var r ReaderRow
			r.Procs, r.Endpoints = p, e
			if _, err := fmtSscanf(string(out), &r.CPUms, &r.CPUmsSEM, &r.MaxRSSKiB, &r.AnonKiB); err != nil {
				return rows, fmt.Errorf("reader sample output %q: %v", out, err)
			}
			r.CorePct = r.CPUms / 1000 * 100 // one sample per second
			rows = append(rows, r)
			fmt.Fprintf(log, "reader: %d processes x %d endpoints: %.3f ms CPU per sample, %d KiB RSS (%d KiB private)\n", p, e, r.CPUms, r.MaxRSSKiB, r.AnonKiB)
		}
	}
	return rows, nil
}

// WriteReaderCSV writes rows as CSV.
func WriteReaderCSV(w io.Writer, rows []ReaderRow) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"processes", "endpoints_per_process", "cpu_ms_per_sample", "sem", "core_pct_at_1s", "max_rss_kib", "private_kib"})
	for _, r := range rows {
		cw.Write([]string{strconv.Itoa(r.Procs), strconv.Itoa(r.Endpoints), f3(r.CPUms), f3(r.CPUmsSEM), f3(r.CorePct), strconv.FormatInt(r.MaxRSSKiB, 10), strconv.FormatInt(r.AnonKiB, 10)})
	}
	cw.Flush()
	return cw.Error()
}

// ReaderTable renders rows as Markdown and names the largest directory sampled under 50 ms.
func ReaderTable(rows []ReaderRow) string {
	var b strings.Builder
	b.WriteString("\n| processes | endpoints each | CPU per sample | % of a core at 1 s | max RSS | private |\n|---|---|---|---|---|---|\n")
	best := -1
	for i, r := range rows {
		fmt.Fprintf(&b, "| %d | %d | %s ms | %.3f %% | %.1f MiB | %.1f MiB |\n", r.Procs, r.Endpoints, pm(r.CPUms, r.CPUmsSEM, 3), r.CorePct,
			float64(r.MaxRSSKiB)/1024, float64(r.AnonKiB)/1024)
		if r.CPUms < 50 && (best < 0 || r.Procs*r.Endpoints > rows[best].Procs*rows[best].Endpoints) {
			best = i
		}
	}
	if best >= 0 {
		fmt.Fprintf(&b, "\nLargest directory sampled in under 50 ms: %d processes x %d endpoints (%.1f ms).\n",
			rows[best].Procs, rows[best].Endpoints, rows[best].CPUms)
	}
	return b.String()
}

func fmtSscanf(s string, cpu, sem *float64, rss, anon *int64) (int, error) {
	return fmt.Sscanf(strings.TrimSpace(s), "cpu_ms=%f,%f maxrss_kib=%d anon_kib=%d", cpu, sem, rss, anon)
}

// MeasurePhases reads dir as pulse record does, a sample every interval
// (a live graph: the scans find the probe's lines as cold as a recorder
// does), and prints each phase's CPU a sample, mean ± SEM: the scan, the
// window (with the why-silent diagnosis) and the whole window's text. each:
// a line per sample first, the window split from its diagnosis, with the
// CPU of the process's other threads (Go's collector) and the collections
// the sample saw: what makes one live sample dearer than another.
// settledFrom > 0: a last line with the reading (scan and window with its
// diagnosis) of samples settledFrom on, once a launching graph has settled.
func MeasurePhases(dir string, samples int, interval time.Duration, each bool, settledFrom int, out io.Writer) error {
	runtime.LockOSThread() // this thread's own CPU, apart from the collector's threads
	defer runtime.UnlockOSThread()
	rd := segment.NewReader(dir)
	defer rd.Close()
	rd.Retain(-1, false)
	var sc window.Scratch
	sc.ReuseWindows = true
	var memo diagnose.Memo
	start := segment.NowMono()
	prev, err := rd.Scan()
	if err != nil {
		return err
	}
	gcs := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	var scan, compute, render, reading []float64
	for i := 0; i < samples; i++ {
		time.Sleep(interval)
		metrics.Read(gcs)
		gc0, t0 := gcs[0].Value.Uint64(), threadCPU()
		c0 := cpuNow()
		cur, err := rd.Scan()
		if err != nil {
			return err
		}
		c1 := cpuNow()
		w := sc.Compute(prev, cur, start, time.Now().UnixNano(), window.Options{})
		cm := cpuNow()
		w.Unmatched = memo.Unmatched(cur)
		c2 := cpuNow()
		_ = logfmt.Render(logfmt.Text, w, logfmt.Options{})
		c3 := cpuNow()
		rd.Recycle(prev)
		prev = cur
		scan, compute, render = append(scan, ms(c1-c0)), append(compute, ms(c2-c1)), append(render, ms(c3-c2))
		reading = append(reading, ms(c2-c0))
		if each {
			metrics.Read(gcs)
			others := ms(c3-c0) - ms(threadCPU()-t0)
			fmt.Fprintf(out, "sample=%d scan_ms=%.3f window_ms=%.3f memo_ms=%.3f text_ms=%.3f others_ms=%.3f gc=%d\n",
				i, ms(c1-c0), ms(cm-c1), ms(c2-cm), ms(c3-c2), others, gcs[0].Value.Uint64()-gc0)
		}
	}
	for _, p := range []struct {
		name string
		v    []float64
	}{{"scan", scan}, {"window", compute}, {"text", render}} {
		m, s := MeanSEM(p.v[min(1, len(p.v)-1):]) // the first sample after the baseline converts every name
		fmt.Fprintf(out, "%s_ms=%.3f,%.3f ", p.name, m, s)
	}
	fmt.Fprintln(out)
	if settledFrom > 0 && settledFrom < len(reading) {
		settled := reading[settledFrom:]
		m, s := MeanSEM(settled)
		fmt.Fprintf(out, "settled_ms=%.3f,%.3f max_ms=%.3f samples=%d\n", m, s, slices.Max(settled), len(settled))
	}
	return nil
}

// threadCPU is the calling OS thread's CPU time.
func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
