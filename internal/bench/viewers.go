package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// ViewerOptions configure RunViewers.
type ViewerOptions struct {
	Pulse, Simgraph, SimLib, Probe string
	Graph                          string // "stress": the farm the reader's cost is judged on
	Period                         string // the viewers' refresh, "1s"
	Trials                         int
	Measure, Warmup                time.Duration
	Log                            io.Writer
}

// ViewerTrial is one viewer's CPU over one measurement.
type ViewerTrial struct {
	Trial   int
	Arm     string  // "record" or "top"
	CorePct float64 // percent of one core
}

// ViewerArms are the viewers compared: pulse record (whole windows written
// to /dev/null) is the reader alone; record-zst writes a day's recording
// (lean windows, a whole one a minute, compressed: design note 0031); pulse
// top adds CPU sampling, verdicts and drawing in a real terminal (tmux).
var ViewerArms = []string{"record", "record-zst", "top"}

// RunViewers measures each viewer's own CPU while it watches a running graph:
// both arms every trial, order rotated, read from /proc/<pid>/stat.
func RunViewers(o ViewerOptions) ([]ViewerTrial, error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return nil, fmt.Errorf("tmux is needed to give pulse top a terminal (apt-get install tmux)")
	}
	seg, err := os.MkdirTemp("/dev/shm", "pulse-bench-viewers-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(seg)
	total := time.Duration(o.Trials*len(ViewerArms))*(o.Measure+o.Warmup+time.Second) + 10*time.Second
	graph := exec.Command(o.Simgraph, "--graph", o.Graph, "--duration", strconv.FormatFloat(total.Seconds(), 'f', 0, 64))
	graph.Env = append(os.Environ(), "LD_PRELOAD="+o.Probe, "LD_LIBRARY_PATH="+o.SimLib, "ROS_PULSE_DIR="+seg, "ROS_TOPIC_STATS_QUIET=1")
	if err := graph.Start(); err != nil {
		return nil, err
	}
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()
	time.Sleep(2 * time.Second) // every process has created its endpoints
	socket := fmt.Sprintf("pulse-bench-%d", os.Getpid())
	defer exec.Command("tmux", "-L", socket, "kill-server").Run()

	var trials []ViewerTrial
	for i := 0; i < o.Trials; i++ {
		for _, arm := range Rotations(ViewerArms, i) {
			pct, err := measureViewer(o, arm, seg, socket)
			if err != nil {
				return trials, fmt.Errorf("trial %d %s: %w", i, arm, err)
			}
			trials = append(trials, ViewerTrial{Trial: i, Arm: arm, CorePct: pct})
			fmt.Fprintf(o.Log, "viewers trial %d %-6s %.3f %% of a core\n", i, arm, pct)
		}
	}
	return trials, nil
}

// measureViewer starts one viewer, lets it warm up, and returns its CPU
// share over o.Measure.
func measureViewer(o ViewerOptions, arm, seg, socket string) (float64, error) {
	var pid int
	var stop func()
	switch arm {
	case "record", "record-zst":
		out := "/dev/null"
		if arm == "record-zst" {
			dir, err := os.MkdirTemp("", "pulse-bench-zst-")
			if err != nil {
				return 0, err
			}
			defer os.RemoveAll(dir)
			out = filepath.Join(dir, "robot.log.zst")
		}
		cmd := exec.Command(o.Pulse, "record", "--period", o.Period, "--out", out)
		cmd.Env = append(os.Environ(), "ROS_PULSE_DIR="+seg)
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		pid, stop = cmd.Process.Pid, func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
	case "top":
		// exec: the pane's process is pulse itself.
		shell := fmt.Sprintf("exec env ROS_PULSE_DIR=%s %s top --period %s", seg, o.Pulse, o.Period)
		if out, err := exec.Command("tmux", "-L", socket, "new-session", "-d", "-s", "v", "-x", "120", "-y", "40", "-P", "-F", "#{pane_pid}", shell).Output(); err != nil {
			return 0, err
		} else if pid, err = strconv.Atoi(strings.TrimSpace(string(out))); err != nil {
			return 0, err
		}
		stop = func() { exec.Command("tmux", "-L", socket, "kill-session", "-t", "v").Run() }
	}
	defer stop()
	time.Sleep(o.Warmup)
	fs, err := procfs.NewFS("/proc")
	if err != nil {
		return 0, err
	}
	read := func() (float64, time.Time, error) {
		p, err := fs.Proc(pid)
		if err != nil {
			return 0, time.Time{}, err
		}
		st, err := p.Stat()
		return st.CPUTime(), time.Now(), err
	}
	c0, t0, err := read()
	if err != nil {
		return 0, err
	}
	time.Sleep(o.Measure)
	c1, t1, err := read()
	if err != nil {
		return 0, fmt.Errorf("the viewer exited: %w", err)
	}
	return 100 * (c1 - c0) / t1.Sub(t0).Seconds(), nil
}

// ViewerRow summarises one arm, and top's paired difference to record.
type ViewerRow struct {
	Arm                string
	CorePct, CorePctSE float64
	DiffPct, DiffSEM   float64 // vs record, paired by trial
}

// CompareViewers pairs top with record trial by trial.
func CompareViewers(trials []ViewerTrial) []ViewerRow {
	by := map[string][]float64{}
	for _, t := range trials {
		by[t.Arm] = append(by[t.Arm], t.CorePct)
	}
	var rows []ViewerRow
	for _, arm := range ViewerArms {
		r := ViewerRow{Arm: arm}
		r.CorePct, r.CorePctSE = MeanSEM(by[arm])
		r.DiffPct, r.DiffSEM = Paired(by["record"], by[arm])
		rows = append(rows, r)
	}
	return rows
}

// WriteViewersCSV writes the raw trials.
func WriteViewersCSV(w io.Writer, trials []ViewerTrial) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"trial", "arm", "core_pct"})
	for _, t := range trials {
		cw.Write([]string{strconv.Itoa(t.Trial), t.Arm, strconv.FormatFloat(t.CorePct, 'f', 4, 64)})
	}
	cw.Flush()
	return cw.Error()
}

// ViewersTable renders rows as Markdown.
func ViewersTable(graph, period string, n int, rows []ViewerRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nviewers on the %s graph, refresh %s, N=%d paired trials, order rotated\n\n", graph, period, n)
	b.WriteString("| viewer | CPU % of one core | vs record (paired) |\n|---|---|---|\n")
	for _, r := range rows {
		diff := "—"
		if r.Arm != "record" {
			diff = pm(r.DiffPct, r.DiffSEM, 3)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.Arm, pm(r.CorePct, r.CorePctSE, 3), diff)
	}
	return b.String()
}
