package cpu

import (
	"bytes"
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestIdentity(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		name string
		ok   bool
	}{
		{"/opt/ros/jazzy/lib/demo_nodes_cpp/talker --ros-args -r __node:=talker_b", "/talker_b", true},
		{"/opt/ros/jazzy/lib/demo_nodes_cpp/talker --ros-args", "talker", true},
		{"/usr/bin/python3 /opt/ros/jazzy/lib/health/health_monitor --ros-args -r __node:=health_monitor_b", "/health_monitor_b", true},
		{"/usr/bin/python3.11 -u /opt/ros/jazzy/lib/health/health_monitor --ros-args", "health_monitor", true},
		{"/usr/bin/python3 /opt/ros/jazzy/bin/ros2 run health health_monitor --ros-args -r __node:=x", "", false}, // the wrapper
		{"pixi run node --ros-args", "", false},
		{"/usr/bin/python3 -m http.server", "", false},          // not ROS
		{"/opt/ros/jazzy/lib/demo_nodes_cpp/talker", "", false}, // no ROS arguments: only a segment names it
		{"/usr/bin/python3 --ros-args", "", false},
		// Wrappers: a forking one is never the node; an exec wrapper's process is the node under it.
		{"timeout 60 talker --ros-args", "", false},
		{"/usr/bin/timeout -s INT 60 /opt/ros/jazzy/lib/demo_nodes_cpp/talker --ros-args", "", false},
		{"nice -n 5 talker --ros-args", "talker", true},
		{"nice -5 /usr/bin/python3 /opt/ros/x/lib/p/listener --ros-args", "listener", true},
		{"env -C /tmp ROS_DOMAIN_ID=3 python3 /l/listener --ros-args -r __node:=l2", "/l2", true},
		{"env -u FOO ROS_DOMAIN_ID=3 python3 /l/listener --ros-args", "listener", true},
		{"ionice -c 2 -n 0 talker --ros-args", "talker", true},
		{"taskset -c 0,1 talker --ros-args", "talker", true},
		{"taskset 0x3 talker --ros-args", "talker", true},
		{"chrt -f 80 talker --ros-args", "talker", true},
		{"stdbuf -oL -e 0 talker --ros-args", "talker", true},
		{"setsid talker --ros-args", "talker", true},
		{"setsid -w talker --ros-args", "", false},
		{"valgrind --tool=callgrind --callgrind-out-file=x talker --ros-args", "talker", true},
		{"nice -n 5 env A=1 taskset -c 1 python3 /l/listener --ros-args", "listener", true},
		{"nice -n 5 ros2 run pkg talker --ros-args", "", false},
		{"env A=1 --ros-args", "", false}, // nothing under the wrapper
		{"", "", false},
	} {
		var argv []string
		if c.cmd != "" {
			argv = strings.Fields(c.cmd)
		}
		name, ok := Identity(argv)
		if name != c.name || ok != c.ok {
			t.Errorf("%q: got %q %v, want %q %v", c.cmd, name, ok, c.name, c.ok)
		}
	}
}

// The sampler measures itself: a busy loop in this test process reads as
// a share of a core close to what the process's own clock says.
func TestSamplerSelf(t *testing.T) {
	s, err := New("", true)
	if err != nil {
		t.Fatal(err)
	}
	me := []Target{{Pid: os.Getpid(), Name: "/self"}}
	if got := s.Sample(me); len(got) != 0 {
		t.Fatalf("a first reading has no rate: %+v", got)
	}
	ownPct := busyFor(t, 300*time.Millisecond)
	got := s.Sample(me)
	if len(got) < 2 || got[0].Tid != 0 || got[0].Name != "/self" || got[0].RSSBytes <= 0 || got[1].Tid == 0 || got[1].Thread == "" {
		t.Fatalf("samples %+v", got)
	}
	// /proc counts in 10 ms ticks: two ticks of 300 ms are about 7 points.
	if ownPct <= 0 || math.Abs(got[0].CPUPct-ownPct) > math.Max(10, 0.1*ownPct) {
		t.Errorf("a busy process read %.1f %% of a core; its own clock says %.1f %%", got[0].CPUPct, ownPct)
	}
	// A process that is gone yields nothing and is forgotten.
	if out := s.Sample([]Target{{Pid: 1 << 30, Name: "/gone"}}); len(out) != 0 || len(s.prev) != 0 {
		t.Errorf("gone: %+v, %d readings kept", out, len(s.prev))
	}
}

// busyFor spins for d and returns the share of a core this process spent
// meanwhile by its own CPU clock: the truth a sampler is judged against (a
// loaded machine gives the loop what it gives it, not a whole core).
func busyFor(t *testing.T, d time.Duration) float64 {
	t.Helper()
	own := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	cpu0, t0 := own(), time.Now()
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
	return 100 * float64(own()-cpu0) / float64(time.Since(t0))
}

func TestSummarize(t *testing.T) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(Header)
	WriteCSV(w, []Sample{
		{Name: "/a,/b", CPUPct: 10, RSSBytes: 1 << 20, Load1: 1},
		{Name: "/a,/b", CPUPct: 30, RSSBytes: 3 << 20, Load1: 1},
		{Name: "/a,/b", CPUPct: 11, RSSBytes: 2 << 20, Load1: 1},
		{Name: "/c", CPUPct: 1},
		{Name: "/c", Tid: 7, Thread: "executor", CPUPct: 0.5},
	})
	stats, err := Summarize(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 3 || stats[0].Name != "/a,/b" || stats[0].N != 3 || stats[0].Median != 11 || stats[0].Max != 30 ||
		stats[0].Mean != 17 || stats[0].MeanRSSBytes != 2<<20 || stats[2].Thread != "executor" {
		t.Fatalf("%+v", stats)
	}
	for _, bad := range []string{"", "a,b\n", strings.Join(Header, ",") + "\n1,2,3,4,n,t,notanumber,1,1,1,1\n", strings.Join(Header, ",") + "\n1,2\n"} {
		if _, err := Summarize(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A target whose segment gives its start time is read only where /proc/<pid>
// is that process: another start time (a recycled pid, a container's pid read
// outside its PID namespace) yields no sample and no reading, never another
// process's CPU.
func TestTargetStartTime(t *testing.T) {
	self := os.Getpid()
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	start, err := strconv.ParseUint(f[19], 10, 64) // field 22; f[0] is field 3
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []bool{false, true} {
		for _, c := range []struct {
			start uint64
			read  bool
		}{{start, true}, {start + 1, false}, {0, true}} {
			s, err := New("", threads) // one per target: the same pid thrice would share readings
			if err != nil {
				t.Fatal(err)
			}
			target := []Target{{Pid: self, Name: "/self", Start: c.start}}
			s.Sample(target)
			time.Sleep(20 * time.Millisecond)
			if got := s.Sample(target); (len(got) > 0) != c.read {
				t.Errorf("threads %v, start %d (its own %d): %d samples", threads, c.start, start, len(got))
			}
			s.Close()
		}
	}
	r, err := NewReader("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(self, start); err != nil {
		t.Errorf("its own start time: %v", err)
	}
	if _, err := r.Read(self, start+1); err == nil {
		t.Error("another start time read")
	}
}
