// Package doctor answers "will the probe work here?": does a libtracetools
// export the tracepoints the probe interposes, does the probe load, and
// which processes are probed right now.
package doctor

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"ros2_pulse/internal/compat"
	"ros2_pulse/internal/cpu"
	"ros2_pulse/internal/diagnose"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"ros2_pulse/internal/bridge"
	"ros2_pulse/internal/health"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
	"ros2_pulse/probe"
)

// Tracetools is what one libtracetools.so offers.
type Tracetools struct {
	Path    string
	Symbols int      // exported ros_trace_* functions
	Missing []string // probe hooks it lacks
	Distro  string
	LTTng   bool // links lttng-ust: its tracepoints record when a session asks, and it names callbacks itself
	Err     error
}

// sinceIron are the probe's hooks whose tracepoints Humble's tracetools lacks.
var sinceIron = []string{"ros_trace_rclcpp_intra_publish", "ros_trace_rclcpp_ring_buffer_enqueue", "ros_trace_rclcpp_ring_buffer_dequeue"}

// InspectTracetools reads the dynamic symbol table of path.
func InspectTracetools(path string) Tracetools {
	t := Tracetools{Path: path}
	f, err := elf.Open(path)
	if err != nil {
		t.Err = err
		return t
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Err = fmt.Errorf("no dynamic symbols: %w", err)
		return t
	}
	have := map[string]bool{}
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "ros_trace_") && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF {
			have[s.Name] = true
		}
	}
	t.Symbols = len(have)
	// Humble has one function per tracepoint; the enabled_/do_ pairs, and
	// the intra-process publish and ring buffer tracepoints, came with Iron
	// and Jazzy. A hook is missing only where this library's distro has it.
	guarded := false
	for name := range have {
		guarded = guarded || strings.HasPrefix(name, "ros_trace_enabled_")
	}
	for _, name := range probe.Exports() {
		if !strings.HasPrefix(name, "ros_trace_") || have[name] {
			continue
		}
		if !guarded && (strings.HasPrefix(name, "ros_trace_enabled_") || strings.HasPrefix(name, "ros_trace_do_") ||
			slices.Contains(sinceIron, name)) {
			continue
		}
		t.Missing = append(t.Missing, name)
	}
	if libs, err := f.ImportedLibraries(); err == nil {
		for _, l := range libs {
			t.LTTng = t.LTTng || strings.HasPrefix(l, "liblttng-ust")
		}
	}
	switch {
	case have["ros_trace_rmw_take_request"]:
		t.Distro = "kilted (tracetools >= 8.5)"
	case have["ros_trace_enabled_rcl_init"]:
		t.Distro = "iron/jazzy"
	case have["ros_trace_rcl_publish"]:
		t.Distro = "humble"
	default:
		t.Distro = "none: no tracepoints"
	}
	return t
}

// FindTracetools lists candidate libtracetools.so files: LD_LIBRARY_PATH, /opt/ros/*/lib.
func FindTracetools(extra []string) []string {
	var dirs []string
	for _, d := range strings.Split(os.Getenv("LD_LIBRARY_PATH"), ":") {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	globbed, _ := filepath.Glob("/opt/ros/*/lib")
	dirs = append(dirs, globbed...)
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if r, err := filepath.EvalSymlinks(p); err == nil && !seen[r] {
			seen[r] = true
			out = append(out, p)
		}
	}
	for _, p := range extra {
		add(p)
	}
	for _, d := range dirs {
		add(filepath.Join(d, "libtracetools.so"))
	}
	sort.Strings(out[len(extra):])
	return out
}

// CheckProbe verifies the probe exports exactly its contract and that ld.so
// accepts it as a preload.
func CheckProbe(lib string) error {
	f, err := elf.Open(lib)
	if err != nil {
		return err
	}
	syms, err := f.DynamicSymbols()
	f.Close()
	if err != nil {
		return err
	}
	var got []string
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && elf.ST_BIND(s.Info) == elf.STB_GLOBAL {
			got = append(got, s.Name)
		}
	}
	want := probe.Exports()
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		return fmt.Errorf("exports %v, expected %v", got, want)
	}
	// The host process is pulse itself (--version): a program of pulse's own
	// architecture, which /bin/true is not when an arm64 pulse runs under
	// qemu-user on an amd64 machine.
	host, args := "/bin/true", []string(nil)
	if self, err := os.Executable(); err == nil {
		host, args = self, []string{"--version"}
	}
	var stderr bytes.Buffer
	cmd := exec.Command(host, args...)
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+lib)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		return fmt.Errorf("ld.so refuses it as a preload: %v %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// silentSub is a live subscription that has received nothing.
type silentSub struct {
	key         string // segment key # endpoint index . generation
	topic, node string
	pid         int
	hidden      bool // its takes may fire no tracepoint (window.RecvHidden)
}

func silentSubs(scan *segment.Scan) map[string]silentSub {
	out := map[string]silentSub{}
	for _, s := range scan.Snapshots {
		for i := range s.Endpoints {
			e := &s.Endpoints[i]
			if !s.Alive || e.Kind != segment.KindSubscription || e.Retired() || window.IsBuiltin(e.Name) ||
				e.Counts[segment.SlotInter]+e.Counts[segment.SlotIntra] != 0 {
				continue
			}
			k := fmt.Sprintf("%s#%d.%d", s.Key(), e.Index, e.Generation)
			ss := silentSub{key: k, topic: e.Name, pid: s.Pid, hidden: window.RecvHidden(s, e)}
			if e.Node >= 0 && e.Node < len(s.Nodes) {
				ss.node = s.Nodes[e.Node].Name
			}
			out[k] = ss
		}
	}
	return out
}

// reportSilent names the subscriptions that received nothing while their
// topic was published here over a second (looked at only when some are
// silent now); each starved one is a problem. Silent ones whose takes may
// fire no tracepoint are not measured.
// laterScan is one more scan a second after the first, taken once for
// every report that needs one.
type laterScan struct {
	scan *segment.Scan
	secs float64
	done bool
}

func (l *laterScan) get(r *segment.Reader) (*segment.Scan, float64) {
	if !l.done {
		l.done = true
		t0 := time.Now()
		time.Sleep(time.Second)
		if s, err := r.Scan(); err == nil {
			l.scan, l.secs = s, time.Since(t0).Seconds()
		}
	}
	return l.scan, l.secs
}

// reportBusy names the threads that spent 90 % or more of the next second
// inside callbacks: an executor with no time left, whose timers skip
// periods and whose subscriptions' queues overflow.
func reportBusy(out io.Writer, r *segment.Reader, first *segment.Scan, later *laterScan) int {
	timed := false
	for _, s := range first.Snapshots {
		timed = timed || s.Alive && len(s.Threads) > 0
	}
	if !timed {
		return 0
	}
	second, _ := later.get(r)
	if second == nil {
		return 0
	}
	w := window.Compute(first, second, first.Mono, time.Now().UnixNano(), window.Options{})
	problems := 0
	for _, th := range w.Threads {
		if th.Load() < 90 {
			continue
		}
		if problems == 0 {
			fmt.Fprintf(out, "executor threads with no time left\n")
		}
		where := "inside callbacks"
		if th.BusyPct < 90 { // rclpy: its callbacks are not timed, its waits are
			where = "outside rcl_wait"
		}
		fmt.Fprintf(out, "  WARN thread %d (%s) of pid %d spent %.0f %% of a second %s (node: %s): "+
			"its timers skip periods and its subscriptions drop what their queues cannot hold\n", th.Tid, th.Name, th.Pid, th.Load(), where, th.Node)
		problems++
	}
	return problems
}

// reportWhy prints what internal/diagnose finds: each publisher or
// subscription that can meet nobody (a problem), and each pair that meets
// with a warning. It returns the problems and the subscriptions explained
// (pid and topic), which the starved check below need not repeat.
func reportWhy(out io.Writer, scan *segment.Scan) (int, map[string]bool) {
	explained := map[string]bool{}
	probed := map[int]bool{}
	for _, s := range scan.Snapshots {
		probed[s.Pid] = probed[s.Pid] || s.Alive
	}
	var notProbed []string // ROS processes here without a segment (found by their command line)
	for _, t := range cpu.Unprobed("", probed) {
		notProbed = append(notProbed, fmt.Sprintf("%s (pid %d)", t.Name, t.Pid))
	}
	findings := append(diagnose.Diagnose(scan), diagnose.Unpublished(scan, notProbed)...)
	if len(findings) == 0 {
		return 0, explained
	}
	fmt.Fprintf(out, "why silent (publishers and subscriptions that cannot meet, and pairs that meet with a warning)\n")
	problems := 0
	for i := range findings {
		f := &findings[i]
		level := "WARN"
		if f.Error {
			level = "FAIL"
			problems++
			if !f.Pub {
				explained[fmt.Sprintf("%d %s", f.Pid, f.Topic)] = true
			}
		}
		fmt.Fprintf(out, "  %s %s\n", level, f.Line())
		if q := f.QoS; q != nil && (f.Reason == diagnose.QoSIncompatible || f.Reason == diagnose.QoSWarning) {
			fmt.Fprintf(out, "         its QoS: %s\n", compat.Summary(q))
		}
		var peers []string
		for _, p := range f.Peers {
			peers = append(peers, fmt.Sprintf("%s (pid %d) %s", p.Node, p.Pid, p.Reason))
		}
		if len(peers) > 1 {
			side := "publishers"
			if f.Pub {
				side = "subscriptions"
			}
			fmt.Fprintf(out, "         %s: %s\n", side, strings.Join(peers, "; "))
		}
	}
	return problems, explained
}

// reportServices says which live client calls a service that no live
// process here serves (its calls are never answered from this machine; a
// server on another host is not seen), and which server has requests open
// for more than 10 s. Warnings: another host may serve it.
func reportServices(out io.Writer, scan *segment.Scan) int {
	served := map[string]bool{}
	for _, s := range scan.Snapshots {
		for i := range s.Endpoints {
			if e := &s.Endpoints[i]; s.Alive && e.Kind == segment.KindService && !e.Retired() {
				served[e.Name] = true
			}
		}
	}
	var lines []string
	for _, s := range scan.Snapshots {
		if !s.Alive {
			continue
		}
		for i := range s.Endpoints {
			e := &s.Endpoints[i]
			if e.Retired() || e.Calls == nil || e.Kind != segment.KindClient && e.Kind != segment.KindService {
				continue
			}
			node := window.NodeOf(s, e)
			open := ""
			if n := len(e.Calls.Open); n > 0 {
				open = fmt.Sprintf("; %d calls open, the oldest for %.1f s", n, float64(scan.Mono-min(scan.Mono, e.Calls.Open[0]))/1e9)
			}
			switch {
			case e.Kind == segment.KindClient && !served[e.Name]:
				lines = append(lines, fmt.Sprintf("  WARN %s (pid %d) calls %s, which no process on this machine serves: its calls are never answered here "+
					"(a server on another host is not seen)%s; fix: start its server, or check the service name", node, s.Pid, e.Name, open))
			case e.Kind == segment.KindService && e.Calls.SendFailed > 0:
				lines = append(lines, fmt.Sprintf("  WARN %s (pid %d) serving %s: %s%s; fix: %s", node, s.Pid, e.Name,
					health.SendFailedWords(float64(e.Calls.SendFailed)), open, health.SendFailedFix))
			case e.Kind == segment.KindService && len(e.Calls.Open) > 0 && scan.Mono-min(scan.Mono, e.Calls.Open[0]) > 10e9:
				lines = append(lines, fmt.Sprintf("  WARN %s (pid %d) took requests of %s and has not answered them%s; a handler that hangs or never responds",
					node, s.Pid, e.Name, open))
			}
		}
	}
	if len(lines) == 0 {
		return 0
	}
	fmt.Fprintf(out, "services\n%s\n", strings.Join(lines, "\n"))
	return 0 // warnings: a server on another host may answer
}

func reportSilent(out io.Writer, r *segment.Reader, first *segment.Scan, later *laterScan, explained map[string]bool) int {
	before, pub1 := silentSubs(first), window.PublishedByTopic(first)
	waiting := false
	for _, ss := range before {
		waiting = waiting || pub1[ss.topic] > 0 || ss.hidden
	}
	// Subscriptions that have received, whose likely cause of starving is
	// visible (their only publishers here on another DDS vendor's RMW):
	// stopped, if they receive nothing of what is published meanwhile.
	mayStop := len(health.QuietSince(first, first, diagnose.Unmatched(first))) > 0
	if !waiting && !mayStop {
		return 0
	}
	second, secs := later.get(r)
	if second == nil {
		return 0
	}
	now, pub2 := silentSubs(second), window.PublishedByTopic(second)
	keys := make([]string, 0, len(now))
	for k := range now {
		if _, ok := before[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	problems, headed := 0, false
	var unmatched []window.Unmatched // the diagnosis of the later scan, made for the first starved subscription
	diagnosed := false
	for _, k := range keys {
		ss := now[k]
		if pub2[ss.topic] <= pub1[ss.topic] || explained[fmt.Sprintf("%d %s", ss.pid, ss.topic)] {
			continue // nothing published here meanwhile: quiet is not starved; or said why above
		}
		if !headed {
			fmt.Fprintf(out, "subscriptions that received nothing\n")
			headed = true
		}
		hz := float64(pub2[ss.topic]-pub1[ss.topic]) / secs
		if ss.hidden {
			fmt.Fprintf(out, "  --   %s (pid %d) on %s: nothing counted while %.1f Hz are published here; not measured "+
				"(an rclpy subscription on Humble: raw takes fire no tracepoint)\n", ss.node, ss.pid, ss.topic, hz)
			continue
		}
		if !diagnosed {
			unmatched, diagnosed = diagnose.Unmatched(second), true
		}
		words := health.StarvedWords(hz)
		if u, ok := health.StarvedCauseIn(second, unmatched, ss.topic, ss.node, ss.pid); ok { // its only publishers are on another DDS vendor
			words = health.StarvedBecause(hz, &u)
		}
		fmt.Fprintf(out, "  WARN %s (pid %d) on %s: %s\n", ss.node, ss.pid, ss.topic, words)
		problems++
	}
	if mayStop {
		if !diagnosed {
			unmatched = diagnose.Unmatched(second)
		}
		for _, q := range health.QuietSince(first, second, unmatched) {
			if pub2[q.Topic] <= pub1[q.Topic] {
				continue // nothing published here meanwhile
			}
			if !headed {
				fmt.Fprintf(out, "subscriptions that received nothing\n")
				headed = true
			}
			hz := float64(pub2[q.Topic]-pub1[q.Topic]) / secs
			fmt.Fprintf(out, "  WARN %s (pid %d) on %s: %s\n", q.Node, q.Pid, q.Topic, q.Words(hz))
			problems++
		}
	}
	return problems
}

// Report prints the whole diagnosis and returns the number of problems.
// nothing is what to say when dir holds no probed process.
// Segments of processes that exited more than retain ago are listed as stale, not removed.
func Report(out io.Writer, lib string, libErr error, tracetools []string, dir, nothing string, retain time.Duration) int {
	problems := 0
	fmt.Fprintf(out, "probe library\n")
	if libErr != nil {
		fmt.Fprintf(out, "  FAIL %v\n", libErr)
		problems++
	} else if err := CheckProbe(lib); err != nil {
		fmt.Fprintf(out, "  FAIL %s: %v\n", lib, err)
		problems++
	} else {
		fmt.Fprintf(out, "  ok   %s loads as a preload and exports its %d hooks (tracetools and its symbol helpers; rcl publish, timer, wait, endpoint-init and service calls)\n", lib, len(probe.Exports()))
	}

	fmt.Fprintf(out, "libtracetools\n")
	if len(tracetools) == 0 {
		fmt.Fprintf(out, "  FAIL none found in LD_LIBRARY_PATH or /opt/ros/*/lib (source your ROS setup, or pass --tracetools PATH)\n")
		problems++ // without it the probe has nothing to count in
	}
	for _, p := range tracetools {
		t := InspectTracetools(p)
		switch {
		case t.Err != nil:
			fmt.Fprintf(out, "  FAIL %s: %v\n", p, t.Err)
			problems++
		case len(t.Missing) > 0:
			fmt.Fprintf(out, "  FAIL %s: %d ros_trace_* functions, missing %v (built with TRACETOOLS_DISABLED?)\n", p, t.Symbols, t.Missing)
			problems++
		case t.LTTng:
			fmt.Fprintf(out, "  ok   %s: %d ros_trace_* functions, %s, LTTng linked\n", p, t.Symbols, t.Distro)
		default:
			fmt.Fprintf(out, "  ok   %s: %d ros_trace_* functions, %s, without LTTng\n", p, t.Symbols, t.Distro)
		}
	}

	fmt.Fprintf(out, "segments in %s\n", dir)
	r := segment.NewReader(dir)
	r.Retain(retain, false) // a diagnosis removes nothing
	defer r.Close()
	scan, err := r.Scan()
	if err != nil {
		fmt.Fprintf(out, "  FAIL %v\n", err)
		return problems + 1
	}
	if len(scan.Snapshots) == 0 && len(scan.Stale) == 0 {
		fmt.Fprintf(out, "  --   %s: is LD_PRELOAD set in the ROS processes' environment? see `pulse env`\n", nothing)
	}
	for _, s := range scan.Snapshots {
		state := "alive "
		if !s.Alive {
			state = "exited"
		}
		var names []string
		for _, n := range s.Nodes {
			names = append(names, n.Name)
		}
		where := ""
		if run := filepath.Dir(s.Path); run != filepath.Clean(dir) {
			where = "  (" + filepath.Base(run) + ")"
		}
		fmt.Fprintf(out, "  %s pid %-7d %-7s %3d endpoints  %s  nodes: %s%s\n", state, s.Pid, s.Distro, len(s.Endpoints), s.Exe,
			strings.Join(names, ","), where)
		// Each topic once (ten nodes publish /parameter_events ten times), and
		// not the builtin topics every other view hides.
		var hidden []string
		intra := window.IntraDelivered(s)
		for i := range s.Endpoints {
			if e := &s.Endpoints[i]; e.Kind == segment.KindPublisher && intra[e.Name] && !window.IsBuiltin(e.Name) &&
				!slices.Contains(hidden, e.Name) {
				hidden = append(hidden, e.Name)
			}
		}
		if len(hidden) > 0 {
			sort.Strings(hidden)
			fmt.Fprintf(out, "         not visible on %s: intra-process publishes on %s (no rclcpp_intra_publish tracepoint before Iron); "+
				"their publish rate and loss are not measured, the deliveries are\n", s.Distro, strings.Join(hidden, ", "))
		}
		if s.DroppedEndpoints > 0 {
			fmt.Fprintf(out, "         %d endpoints did not fit the segment (raise ROS_PULSE_MAX_ENDPOINTS)\n", s.DroppedEndpoints)
		}
		if line := envLine(s.Env); line != "" && s.Alive {
			fmt.Fprintf(out, "         ROS environment: %s\n", line)
		}
		if !s.Timing && s.Alive {
			fmt.Fprintf(out, "         callback timing off (ROS_PULSE_TIMING=0, or a probe before ABI 1.4): no callback durations, busy share or timer lateness\n")
		}
	}
	reportUnprobed(out, scan, dir)
	later := &laterScan{}
	why, explained := reportWhy(out, scan)
	problems += why
	problems += reportSilent(out, r, scan, later, explained)
	problems += reportServices(out, scan)
	problems += reportBusy(out, r, scan, later)
	for _, b := range bridge.ReadStatuses(dir) {
		state := "running"
		if !b.Alive {
			state = "exited (stale status file)"
		}
		fmt.Fprintf(out, "  bridge pid %d %s: %s\n", b.Pid, state, strings.ReplaceAll(b.Text, "\n", "\n         "))
	}
	for _, st := range scan.Stale {
		fmt.Fprintf(out, "  stale  pid %-7d exited %s ago (over --retain %v): removable; the next pulse record, export, top, check or cpu of its user removes it  %s\n",
			st.Pid, time.Since(st.Since).Round(time.Second), retain, st.Path)
	}
	for _, p := range scan.Problems {
		fmt.Fprintf(out, "  FAIL %v\n", p)
		problems++
	}
	return problems
}

// envLine is what a process set of the ROS environment that decides whom it
// meets ("" when it set none: domain 0, the default rmw, subnet discovery).
func envLine(e *segment.Env) string {
	if e == nil {
		return ""
	}
	var parts []string
	for _, v := range []struct {
		bit        uint32
		name, text string
	}{{segment.EnvDomainID, "ROS_DOMAIN_ID", e.DomainID}, {segment.EnvRMW, "RMW_IMPLEMENTATION", e.RMW},
		{segment.EnvLocalhostOnly, "ROS_LOCALHOST_ONLY", e.LocalhostOnly}, {segment.EnvDiscoveryRange, "ROS_AUTOMATIC_DISCOVERY_RANGE", e.DiscoveryRange},
		{segment.EnvStaticPeers, "ROS_STATIC_PEERS", e.StaticPeers}} {
		if e.Set(v.bit) {
			parts = append(parts, v.name+"="+strconv.Quote(v.text))
		}
	}
	for _, v := range []struct {
		bit  uint32
		name string
	}{{segment.EnvCycloneDDSURI, "a Cyclone DDS configuration (CYCLONEDDS_URI)"}, {segment.EnvFastDDSProfile, "a Fast DDS profile"},
		{segment.EnvZenohConfig, "a Zenoh configuration"}} {
		if e.Set(v.bit) {
			parts = append(parts, v.name)
		}
	}
	return strings.Join(parts, ", ")
}
