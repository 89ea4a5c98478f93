// Package cpu measures what ROS processes cost: CPU time and resident
// memory from /proc/<pid>/stat (kept open and read again each period by
// stat.go; a process's threads and one-off readings through
// prometheus/procfs), once per period,
// with the load average beside each sample, so that paired A/B measurements
// of node cost can be read against the machine's condition
// (shared/seeds/001). Probed processes are named by the nodes their segments
// list; other ROS processes by the `__node:=` remap or the entry point on
// their command line. `pulse cpu` and the CPU column of `pulse top` use it.
package cpu

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/procfs"

	"ros2_pulse/internal/window"
)

// Target is a process to measure and the name it is reported under.
type Target struct {
	Pid    int
	Name   string // its nodes, joined by ','; or the command-line identity
	Probed bool   // named from its segment (false: from its command line)
	// Start is the start time its segment gives (clock ticks after boot; 0
	// unknown): /proc/<Pid> is read only where it is that process's, never
	// another's that has the pid here (a recycled pid, or a container's pid
	// read outside its PID namespace).
	Start uint64
}

// Sample is one process's (or, with threads, one thread's) cost over the
// last period.
type Sample struct {
	TsNs     int64 // wall clock of the reading
	Elapsed  float64
	Pid, Tid int    // Tid 0: the whole process
	Thread   string // the thread's comm, when Tid != 0
	Name     string
	CPUPct   float64 // percent of one core over the period
	RSSBytes int64
	Load1    float64
	Load5    float64
	Load15   float64
	Wakeups  int64 // callbacks and takes since the previous sample (window.Wakeups); -1 unknown
}

// reading is one /proc stat reading, keyed by pid (or tid) and start time so
// a recycled pid never yields a delta against another process.
type reading struct {
	cpuS float64
	mono time.Duration
}

type key struct {
	pid, tid int
	start    uint64
}

// Reader reads a process's cumulative CPU time and its memory: what an
// exporter hands Prometheus as a counter and a gauge.
type Reader struct{ fs procfs.FS }

// Reading is one process's /proc/<pid>/stat.
type Reading struct {
	CPUSeconds float64 // utime + stime
	RSSBytes   int64
}

// NewReader reads /proc at procRoot ("" for /proc).
func NewReader(procRoot string) (*Reader, error) {
	if procRoot == "" {
		procRoot = procfs.DefaultMountPoint
	}
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", procRoot, err)
	}
	return &Reader{fs: fs}, nil
}

// Read returns pid's CPU time and resident memory; with start (its start
// time, clock ticks after boot) not 0, only where pid is still that process.
func (r *Reader) Read(pid int, start uint64) (Reading, error) {
	p, err := r.fs.Proc(pid)
	if err != nil {
		return Reading{}, err
	}
	st, err := p.Stat()
	if err != nil {
		return Reading{}, err
	}
	if start != 0 && st.Starttime != start {
		return Reading{}, fmt.Errorf("pid %d is another process than the one started at %d ticks", pid, start)
	}
	return Reading{CPUSeconds: st.CPUTime(), RSSBytes: int64(st.ResidentMemory())}, nil
}

// Sampler keeps the previous reading of every process it has seen.
type Sampler struct {
	fs      procfs.FS
	stats   *statFiles // without threads: each process's stat kept open
	threads bool
	prev    map[key]reading
	start   time.Time
}

// New reads /proc at procRoot ("" for /proc). threads adds one sample per
// thread beside each process's.
func New(procRoot string, threads bool) (*Sampler, error) {
	r, err := NewReader(procRoot)
	if err != nil {
		return nil, err
	}
	if procRoot == "" {
		procRoot = procfs.DefaultMountPoint
	}
	s := &Sampler{fs: r.fs, threads: threads, prev: map[key]reading{}, start: time.Now()}
	if !threads {
		s.stats = newStatFiles(procRoot)
	}
	return s, nil
}

// Close closes the files the sampler keeps open (a later Sample opens them again).
func (s *Sampler) Close() {
	if s.stats != nil {
		s.stats.close()
	}
}

// Sample reads every target once. A process's first reading yields no
// sample (a rate needs two); one that has gone yields none and is forgotten.
func (s *Sampler) Sample(targets []Target) []Sample {
	now := time.Now()
	mono := now.Sub(s.start)
	var load procfs.LoadAvg
	if l, err := s.fs.LoadAvg(); err == nil {
		load = *l
	}
	seen := make(map[key]bool, len(s.prev))
	var out []Sample
	sample := func(t Target, k key, cpuS float64, rssBytes int64, comm string) {
		seen[k] = true
		r := reading{cpuS: cpuS, mono: mono}
		old, ok := s.prev[k]
		s.prev[k] = r
		if !ok || r.mono <= old.mono {
			return
		}
		smp := Sample{
			TsNs: now.UnixNano(), Elapsed: mono.Seconds(), Pid: t.Pid, Tid: k.tid, Name: t.Name,
			CPUPct:   100 * max(0, r.cpuS-old.cpuS) / (r.mono - old.mono).Seconds(),
			RSSBytes: rssBytes, Load1: load.Load1, Load5: load.Load5, Load15: load.Load15, Wakeups: -1,
		}
		if k.tid != 0 {
			smp.Thread = comm
		}
		out = append(out, smp)
	}
	if s.stats != nil { // processes only: each one's stat file, kept open
		pids := make(map[int]bool, len(targets))
		for _, t := range targets {
			st, err := s.stats.read(t.Pid)
			if err != nil || t.Start != 0 && st.start != t.Start {
				continue
			}
			pids[t.Pid] = true
			sample(t, key{pid: t.Pid, start: st.start}, st.cpuSeconds(), st.rssPages*int64(os.Getpagesize()), st.comm)
		}
		s.stats.keep(pids)
	} else { // with threads: each process and its threads through procfs
		for _, t := range targets {
			p, err := s.fs.Proc(t.Pid)
			if err != nil {
				continue
			}
			procs := []procfs.Proc{p}
			if ths, err := s.fs.AllThreads(t.Pid); err == nil {
				sort.Sort(ths)
				procs = append(procs, ths...)
			}
			for i, q := range procs {
				st, err := q.Stat()
				if err != nil {
					continue
				}
				if i == 0 && t.Start != 0 && st.Starttime != t.Start {
					break // not the process its segment is of: none of its threads either
				}
				k := key{pid: t.Pid, start: st.Starttime}
				if i > 0 {
					k.tid = q.PID
				}
				sample(t, k, st.CPUTime(), int64(st.ResidentMemory()), st.Comm)
			}
		}
	}
	for k := range s.prev {
		if !seen[k] {
			delete(s.prev, k)
		}
	}
	return out
}

// wrappers start a node as a child process and are not one: their command
// lines repeat the node's arguments, so they must not be weighed as the node.
var wrappers = map[string]bool{"ros2": true, "pixi": true, "ros2-launch": true, "launch": true, "bash": true, "sh": true,
	"timeout": true}

// execWrapper is the command-line syntax of a program that execs the command
// it is given (or, for valgrind, runs it in its own process): a process
// still showing its command line is the node under it.
type execWrapper struct {
	argOpts     map[string]bool // options that take the next argument
	positionals int             // arguments before the command (taskset's mask, chrt's priority)
	assignments bool            // NAME=VALUE arguments before the command (env)
	forks       map[string]bool // options that make it a parent waiting for a child (setsid -w): not the node
}

func set(s ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return m
}

var execWrappers = map[string]execWrapper{
	"nice":     {argOpts: set("-n", "--adjustment")},
	"ionice":   {argOpts: set("-c", "--class", "-n", "--classdata")},
	"taskset":  {positionals: 1},
	"chrt":     {argOpts: set("-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"), positionals: 1},
	"stdbuf":   {argOpts: set("-i", "-o", "-e", "--input", "--output", "--error")},
	"env":      {argOpts: set("-u", "--unset", "-C", "--chdir", "-S", "--split-string"), assignments: true},
	"setsid":   {forks: set("-w", "--wait")},
	"valgrind": {}, // its options are --opt=value
}

// unwrap strips the exec wrappers in front of a command line; ok is false
// for a wrapper that is a parent process rather than the node.
func unwrap(argv []string) (rest []string, ok bool) {
	for len(argv) > 0 {
		w, isWrapper := execWrappers[filepath.Base(argv[0])]
		if !isWrapper {
			return argv, true
		}
		i := 1
		for ; i < len(argv) && strings.HasPrefix(argv[i], "-") && len(argv[i]) > 1; i++ {
			if argv[i] == "--" {
				i++
				break
			}
			if w.forks[argv[i]] {
				return nil, false
			}
			if w.argOpts[argv[i]] {
				i++
			}
		}
		i += w.positionals
		for w.assignments && i < len(argv) && strings.Contains(argv[i], "=") && !strings.HasPrefix(argv[i], "/") {
			i++
		}
		if i >= len(argv) || strings.HasPrefix(argv[i], "-") {
			return nil, false // no command under it
		}
		argv = argv[i:]
	}
	return argv, len(argv) > 0
}

// interpreters run an entry point given as their first non-option argument.
var interpreters = map[string]bool{"python3": true, "python": true}

// Identity names an unprobed ROS process from its command line: the
// `__node:=` remap if any, else the entry point (the script an interpreter
// runs, or the executable). ok is false for a process that is not a ROS
// node: no `--ros-args` and no remap, or a wrapper such as `ros2 run`.
func Identity(cmdline []string) (name string, ok bool) {
	if len(cmdline) == 0 {
		return "", false
	}
	ros, rename := false, ""
	for _, a := range cmdline {
		switch {
		case a == "--ros-args":
			ros = true
		case strings.HasPrefix(a, "__node:="):
			ros, rename = true, strings.TrimPrefix(a, "__node:=")
		case strings.HasPrefix(a, "__name:="): // the ROS 1 era spelling rclpy still accepts
			ros, rename = true, strings.TrimPrefix(a, "__name:=")
		}
	}
	if !ros {
		return "", false
	}
	cmdline, ok = unwrap(cmdline)
	if !ok {
		return "", false
	}
	entry := filepath.Base(cmdline[0])
	if interpreters[strings.TrimRight(entry, "0123456789.")] || interpreters[entry] {
		entry = ""
		for _, a := range cmdline[1:] {
			if a == "--ros-args" {
				break
			}
			if !strings.HasPrefix(a, "-") {
				entry = filepath.Base(a)
				break
			}
		}
		if entry == "" {
			return "", false
		}
	}
	if wrappers[entry] {
		return "", false
	}
	if rename != "" {
		return "/" + strings.TrimPrefix(rename, "/"), true
	}
	return entry, true
}

// Unprobed lists the ROS processes under procRoot that have no segment
// (pids not in probed), named by Identity.
func Unprobed(procRoot string, probed map[int]bool) []Target {
	if procRoot == "" {
		procRoot = procfs.DefaultMountPoint
	}
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []Target
	for _, p := range procs {
		if probed[p.PID] || p.PID == self {
			continue
		}
		cmd, err := p.CmdLine()
		if err != nil {
			continue
		}
		if name, ok := Identity(cmd); ok {
			out = append(out, Target{Pid: p.PID, Name: name})
		}
	}
	return out
}

// Targets lists what to measure: the live probed processes of a window,
// named by their nodes, then (with others) the unprobed ROS processes.
func Targets(procs []window.Proc, others bool, procRoot string) []Target {
	var out []Target
	probed := map[int]bool{}
	for _, p := range procs {
		if !p.Alive {
			continue
		}
		probed[p.Pid] = true
		name := p.NodeNames()
		if name == "" {
			name = filepath.Base(p.Exe)
		}
		out = append(out, Target{Pid: p.Pid, Name: name, Probed: true, Start: p.Start})
	}
	if others {
		out = append(out, Unprobed(procRoot, probed)...)
	}
	return out
}
