package realros

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// lane is the prefix, RMW and build under test, from scripts/test-ros.sh.
type lane struct {
	prefix, ws, distro, rmw string
	build                   string   // ros2_pulse's build directory (probe, pulse)
	env                     []string // the prefix's and the nodes' setup, sourced once
}

var (
	laneOnce sync.Once
	theLane  *lane
	laneErr  error
	domains  atomic.Int32 // each run its own DDS domain
)

// setup is the lane, or a skip saying what is missing.
func setup(t *testing.T) *lane {
	t.Helper()
	laneOnce.Do(func() { theLane, laneErr = newLane() })
	if laneErr != nil {
		t.Skipf("real-ROS lane: %v (make test-ros builds the test nodes and sets it up)", laneErr)
	}
	return theLane
}

func newLane() (*lane, error) {
	l := &lane{prefix: os.Getenv("ROS_PREFIX"), ws: os.Getenv("PULSE_ROS_WS"), distro: os.Getenv("PULSE_ROS_DISTRO"),
		rmw: os.Getenv("PULSE_RMW"), build: os.Getenv("PULSE_BUILD")}
	if l.prefix == "" || l.ws == "" || l.distro == "" || l.rmw == "" {
		return nil, fmt.Errorf("no ROS prefix (ROS_PREFIX, PULSE_ROS_WS, PULSE_ROS_DISTRO, PULSE_RMW unset)")
	}
	if l.build == "" {
		l.build, _ = filepath.Abs("../../build")
	}
	for _, f := range []string{l.probe(), l.pulse(), filepath.Join(l.ws, "setup.bash")} {
		if _, err := os.Stat(f); err != nil {
			return nil, err
		}
	}
	// The environment a user's shell has after sourcing both setups.
	out, err := exec.Command("bash", "-c", `source "$1/setup.bash" && source "$2/setup.bash" && env -0`, "bash",
		l.prefix, l.ws).Output()
	if err != nil {
		return nil, fmt.Errorf("sourcing %s and %s: %v", l.prefix, l.ws, err)
	}
	for _, kv := range bytes.Split(out, []byte{0}) {
		s := string(kv)
		if s == "" || strings.HasPrefix(s, "ROS_DOMAIN_ID=") || strings.HasPrefix(s, "RMW_IMPLEMENTATION=") ||
			strings.HasPrefix(s, "LD_PRELOAD=") || strings.HasPrefix(s, "ROS_PULSE") || strings.HasPrefix(s, "ROS_TOPIC_STATS") {
			continue
		}
		l.env = append(l.env, s)
	}
	return l, nil
}

// probe is the library preloaded into the nodes: the build's, or PULSE_ROS_PROBE
// (the fault build, build/lib/fault/libros2_pulse.so, shows the lane can fail).
func (l *lane) probe() string {
	if p := os.Getenv("PULSE_ROS_PROBE"); p != "" {
		return p
	}
	return filepath.Join(l.build, "lib/libros2_pulse.so")
}

func (l *lane) pulse() string { return filepath.Join(l.build, "bin/pulse") }
func (l *lane) humble() bool  { return l.distro == "humble" }

// cycloneConfig keeps Cyclone DDS on loopback without multicast, so a test
// hears only its own processes (and its own domain).
const cycloneConfig = `<CycloneDDS><Domain Id="any"><General><AllowMulticast>false</AllowMulticast></General>` +
	`<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>` +
	`<Peers><Peer Address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>`

// run is one test's processes: its own segment directory, DDS domain and truth files.
type run struct {
	t      *testing.T
	l      *lane
	dir    string // ROS_PULSE_DIR
	truths string
	domain int
	procs  []*proc
	extra  []string // more environment for every process
}

// proc is one test node's process.
type proc struct {
	name   string
	cmd    *exec.Cmd
	truth  string
	out    *bytes.Buffer
	done   chan struct{}
	err    error
	waited bool
}

func (l *lane) newRun(t *testing.T, extra ...string) *run {
	t.Helper()
	r := &run{t: t, l: l, dir: t.TempDir(), truths: t.TempDir(), domain: 20 + int(domains.Add(1)+int32(os.Getpid()%50))%180, extra: extra}
	// Inline, not a file: a test's temporary path may hold a comma, which
	// CYCLONEDDS_URI reads as a list separator.
	r.extra = append([]string{"CYCLONEDDS_URI=" + cycloneConfig}, r.extra...)
	if os.Getenv("PULSE_ROS_LINKS") == "1" { // every judgement again with latency links on in every node
		r.extra = append(r.extra, "ROS_PULSE_LINKS=1")
	}
	t.Cleanup(r.stop)
	return r
}

// env is a process's environment: the lane's, the probe, this run's domain,
// loopback discovery, the RMW (rmw overrides the lane's), then extra.
func (r *run) env(rmw string, extra []string) []string {
	if rmw == "" {
		rmw = r.l.rmw
	}
	env := append([]string{}, r.l.env...)
	env = append(env, "LD_PRELOAD="+r.l.probe(), "ROS_PULSE_DIR="+r.dir, "ROS_TOPIC_STATS_QUIET=1",
		fmt.Sprintf("ROS_DOMAIN_ID=%d", r.domain), "RMW_IMPLEMENTATION="+rmw, "ROS_LOCALHOST_ONLY=1",
		"ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST", "RCUTILS_LOGGING_BUFFERED_STREAM=0")
	env = append(env, r.extra...)
	return append(env, extra...)
}

// node starts a test node: lang "cpp" (pulse_node) or "py" (pulse_node.py
// with Debian's /usr/bin/python3, the interpreter rclpy was built for).
// rmw "" is the lane's.
func (r *run) node(name, lang, rmw string, args ...string) *proc {
	r.t.Helper()
	return r.nodeEnv(name, lang, rmw, nil, args...)
}

// nodeEnv starts a test node with more environment (e.g. another ROS_DOMAIN_ID).
func (r *run) nodeEnv(name, lang, rmw string, env []string, args ...string) *proc {
	r.t.Helper()
	p := &proc{name: name, truth: filepath.Join(r.truths, name+".json"), out: &bytes.Buffer{}, done: make(chan struct{})}
	bin := filepath.Join(r.l.ws, "lib/pulse_testnodes")
	argv := append([]string{"--name", name, "--truth", p.truth}, args...)
	switch lang {
	case "cpp":
		p.cmd = exec.Command(filepath.Join(bin, "pulse_node"), argv...)
	case "py":
		p.cmd = exec.Command("/usr/bin/python3", append([]string{filepath.Join(bin, "pulse_node.py")}, argv...)...)
	default:
		r.t.Fatalf("lang %q", lang)
	}
	p.cmd.Env = r.env(rmw, env)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	r.procs = append(r.procs, p)
	return p
}

// wait waits for p to exit by itself (its --duration), within limit.
func (r *run) wait(p *proc, limit time.Duration) {
	r.t.Helper()
	select {
	case <-p.done:
	case <-time.After(limit):
		_ = p.cmd.Process.Signal(syscall.SIGINT)
		<-p.done
		r.t.Errorf("%s did not exit within %v:\n%s", p.name, limit, p.out)
	}
	p.waited = true
	if p.err != nil && !strings.Contains(p.err.Error(), "signal: killed") {
		r.t.Errorf("%s: %v\n%s", p.name, p.err, p.out)
	}
}

// waitAll waits for every process of the run.
func (r *run) waitAll(limit time.Duration) {
	for _, p := range r.procs {
		if !p.waited {
			r.wait(p, limit)
		}
	}
}

// stop ends what is still running (a failed test) and shows its output.
func (r *run) stop() {
	for _, p := range r.procs {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
			r.t.Logf("%s killed at the end of the test:\n%s", p.name, p.out)
		}
	}
}

// truth reads p's ground truth.
func (r *run) truth(p *proc) *Truth {
	r.t.Helper()
	t, err := ReadTruth(p.truth)
	if err != nil {
		r.t.Fatalf("%s wrote no truth: %v\n%s", p.name, err, p.out)
	}
	return t
}

// scan reads the run's segments once; a segment problem fails the test.
func (r *run) scan() *segment.Scan {
	r.t.Helper()
	rd := segment.NewReader(r.dir)
	defer rd.Close()
	s, err := rd.Scan()
	if err != nil {
		r.t.Fatal(err)
	}
	for _, p := range s.Problems {
		r.t.Errorf("segment problem: %v", p)
	}
	return s
}

// pulseCmd runs pulse on this run's segments.
func (r *run) pulseCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(r.l.pulse(), args...)
	cmd.Env = r.env("", nil)
	cmd.Env = append(cmd.Env, "LD_PRELOAD=") // pulse itself is not probed
	return cmd
}

// found is what pulse holds of one truth endpoint: same process, node, kind
// and name (a timer: period), every generation summed, as views do.
type found struct {
	counts [segment.CountersPerEndpoint]uint64
	eps    []*segment.Endpoint
	snap   *segment.Snapshot
}

func kindOf(k string) segment.Kind {
	return map[string]segment.Kind{"publisher": segment.KindPublisher, "subscription": segment.KindSubscription,
		"timer": segment.KindTimer, "service": segment.KindService, "client": segment.KindClient}[k]
}

func lookup(s *segment.Scan, pid int, e *Endpoint) found {
	var f found
	for _, snap := range s.Snapshots {
		if snap.Pid != pid {
			continue
		}
		f.snap = snap
		for i := range snap.Endpoints {
			ep := &snap.Endpoints[i]
			same := ep.Name == e.Name
			if e.Kind == "timer" { // a timer is known by its period (a publisher's own timer has another)
				same = ep.Aux == uint64(e.PeriodNs)
			}
			if ep.Kind != kindOf(e.Kind) || window.NodeOf(snap, ep) != e.Node || !same {
				continue
			}
			for j := range f.counts {
				f.counts[j] += ep.Counts[j]
			}
			f.eps = append(f.eps, ep)
		}
	}
	return f
}

// logLines is a command's output, one line per entry, for failure messages.
func logLines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// has says whether the prefix has rmw installed.
func (l *lane) has(rmw string) bool {
	_, err := os.Stat(filepath.Join(l.prefix, "lib", "lib"+rmw+".so"))
	return err == nil
}

// table logs one row of the capability table (docs/REAL-ROS.md): what pulse
// said beside what the nodes measured. scripts/test-ros.sh collects the rows.
func table(t *testing.T, capability, pulse, node string) {
	t.Helper()
	t.Logf("TABLE\t%s\t%s\t%s", capability, pulse, node)
}

// tally is a judged set of counts: how many endpoints, pulse's sum and the nodes'.
type tally struct {
	n           int
	pulse, node uint64
}

func (a *tally) add(b tally) { a.n, a.pulse, a.node = a.n+b.n, a.pulse+b.pulse, a.node+b.node }

func (a tally) row(t *testing.T, capability string) {
	t.Helper()
	table(t, capability, fmt.Sprintf("%d messages", a.pulse), fmt.Sprintf("%d messages (%d endpoints)", a.node, a.n))
}

// realMinusMono is CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns: a window's
// wall-clock bounds (pulse's ts_ns, a /statistics window) to the nodes' stamps.
func realMinusMono(t *testing.T) int64 {
	t.Helper()
	var rt, mt unix.Timespec
	if unix.ClockGettime(unix.CLOCK_REALTIME, &rt) != nil || unix.ClockGettime(unix.CLOCK_MONOTONIC, &mt) != nil {
		t.Fatal("clock_gettime")
	}
	return rt.Nano() - mt.Nano()
}

// windowAgrees says whether a rate pulse gave for the window (from, to]
// (CLOCK_MONOTONIC ns) is what e really did then: its count in the window,
// give or take the messages within edge of either bound (a scan and the
// wall clock it names are read a few µs apart; a callback's stamp follows
// its tracepoint).
func windowAgrees(e *Endpoint, hz float64, from, to, edge int64) (bool, uint64, uint64) {
	lo, hi := e.Between(from+edge, to-edge), e.Between(from-edge, to+edge)
	got := hz * float64(to-from) / 1e9
	return got >= float64(lo)-0.01 && got <= float64(hi)+0.01, lo, hi
}
