package cpu

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Header is the CSV header `pulse cpu` writes and --summary reads. wakeups
// (callbacks and takes the probe saw in the process since the previous row;
// empty for threads, unprobed processes and the first row) came later:
// --summary reads files without it too (headerV1).
var Header = []string{"ts_ns", "elapsed_s", "pid", "tid", "name", "thread", "cpu_pct", "rss_bytes", "load1", "load5", "load15", "wakeups"}

var headerV1 = Header[:11]

// WriteCSV appends samples as CSV rows (encoding/csv quotes hostile names).
func WriteCSV(w *csv.Writer, samples []Sample) error {
	for _, s := range samples {
		if err := w.Write([]string{
			strconv.FormatInt(s.TsNs, 10), strconv.FormatFloat(s.Elapsed, 'f', 3, 64),
			strconv.Itoa(s.Pid), strconv.Itoa(s.Tid), s.Name, s.Thread,
			strconv.FormatFloat(s.CPUPct, 'f', 3, 64), strconv.FormatInt(s.RSSBytes, 10),
			strconv.FormatFloat(s.Load1, 'f', 2, 64), strconv.FormatFloat(s.Load5, 'f', 2, 64), strconv.FormatFloat(s.Load15, 'f', 2, 64),
			wakeups(s.Wakeups),
		}); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

func wakeups(n int64) string {
	if n < 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// Stat is the summary of one name (process rows only; threads apart).
type Stat struct {
	Name                   string
	Thread                 string // "" for the process
	N                      int
	Mean, Median, Max      float64 // CPU % of one core
	MeanRSSBytes, MeanLoad float64
	// MsPerWakeup: the process's CPU time over the rows with a wakeups count,
	// divided by those wake-ups (ms); NaN when none were counted.
	MsPerWakeup float64
	WakeupHz    float64
}

// Summarize reads a CSV written by WriteCSV and returns the mean, median and
// max CPU per name (and per name and thread for thread rows), sorted by mean
// CPU, highest first. Rows that do not parse are errors naming the line.
func Summarize(r io.Reader) ([]Stat, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("no CSV header: %w", err)
	}
	if h := strings.Join(head, ","); h != strings.Join(Header, ",") && h != strings.Join(headerV1, ",") {
		return nil, fmt.Errorf("not a pulse cpu CSV: header %q", h)
	}
	cr.FieldsPerRecord = len(head)
	type acc struct {
		cpu             []float64
		rss, load       float64
		cpuSec, seconds float64 // over rows with a wakeups count
		wakeups         float64
		last            float64 // elapsed_s of the previous row
	}
	by := map[[2]string]*acc{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		cpu, err1 := strconv.ParseFloat(rec[6], 64)
		rss, err2 := strconv.ParseFloat(rec[7], 64)
		load, err3 := strconv.ParseFloat(rec[8], 64)
		if err := errors.Join(err1, err2, err3); err != nil || cpu < 0 || math.IsNaN(cpu) || math.IsInf(cpu, 0) {
			return nil, fmt.Errorf("line %d: bad number in %q", line, strings.Join(rec, ","))
		}
		k := [2]string{rec[4], rec[5]}
		a := by[k]
		if a == nil {
			a = &acc{}
			by[k] = a
		}
		a.cpu = append(a.cpu, cpu)
		a.rss += rss
		a.load += load
		elapsed, errE := strconv.ParseFloat(rec[1], 64)
		if len(rec) > 11 && rec[11] != "" && errE == nil {
			n, err := strconv.ParseUint(rec[11], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: bad wakeups in %q", line, strings.Join(rec, ","))
			}
			if dt := elapsed - a.last; a.last > 0 && dt > 0 {
				a.cpuSec += cpu / 100 * dt
				a.seconds += dt
				a.wakeups += float64(n)
			}
		}
		if errE == nil {
			a.last = elapsed
		}
	}
	var out []Stat
	for k, a := range by {
		s := Stat{Name: k[0], Thread: k[1], N: len(a.cpu), MeanRSSBytes: a.rss / float64(len(a.cpu)), MeanLoad: a.load / float64(len(a.cpu)),
			MsPerWakeup: math.NaN(), WakeupHz: math.NaN()}
		if a.wakeups > 0 && a.seconds > 0 {
			s.MsPerWakeup, s.WakeupHz = a.cpuSec*1e3/a.wakeups, a.wakeups/a.seconds
		}
		sort.Float64s(a.cpu)
		for _, v := range a.cpu {
			s.Mean += v
		}
		s.Mean /= float64(len(a.cpu))
		s.Max = a.cpu[len(a.cpu)-1]
		if n := len(a.cpu); n%2 == 1 {
			s.Median = a.cpu[n/2]
		} else {
			s.Median = (a.cpu[n/2-1] + a.cpu[n/2]) / 2
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Mean != out[j].Mean {
			return out[i].Mean > out[j].Mean
		}
		return out[i].Name+out[i].Thread < out[j].Name+out[j].Thread
	})
	return out, nil
}
