package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// simgraph --msgcost US makes every publish and delivery spend US µs of CPU,
// as a real middleware's would (issue 45): the benchmarks' stand-in farm
// then costs what real rclcpp on Cyclone DDS does a message. Judged by the
// graph's own rusage and event count: with the option the CPU is at least
// events × cost; without it, well under.
func TestSimMsgCostIsSpent(t *testing.T) {
	b := buildDir(t)
	graph := filepath.Join(t.TempDir(), "pair.graph")
	if err := os.WriteFile(graph, []byte("process talker\n  node /talker\n    pub /chatter 200\n"+
		"process listener\n  node /listener\n    sub /chatter\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const costUS = 2000 // well above what an event costs even under qemu-user (~600 µs)
	run := func(extra ...string) (cpu, events float64) {
		t.Helper()
		args := append([]string{"--graph", graph, "--duration", "1", "--rusage"}, extra...)
		cmd := exec.Command(filepath.Join(b, "bin/simgraph"), args...)
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Join(b, "lib/sim/jazzy"), "TMPDIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("simgraph %v: %v\n%s", extra, err, out)
		}
		m := regexp.MustCompile(`RESULT cpu_s=([0-9.]+)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("simgraph %v reported no CPU:\n%s", extra, out)
		}
		cpu, _ = strconv.ParseFloat(string(m[1]), 64)
		for _, e := range regexp.MustCompile(`RESULT events=(\d+)`).FindAllSubmatch(out, -1) {
			n, _ := strconv.ParseFloat(string(e[1]), 64)
			events += n
		}
		if events < 100 {
			t.Fatalf("simgraph %v made %v events in 1 s of 200 Hz:\n%s", extra, events, out)
		}
		return cpu, events
	}
	cpu, events := run("--msgcost", strconv.Itoa(costUS))
	if want := events * costUS * 1e-6; cpu < want {
		t.Errorf("--msgcost %d: %.3f s of CPU for %v events, under the %.3f s they must spend", costUS, cpu, events, want)
	}
	cpu, events = run()
	if spent := events * costUS * 1e-6; cpu >= spent/2 {
		t.Errorf("without --msgcost: %.3f s of CPU for %v events, as if each cost %d µs", cpu, events, costUS)
	}
	if out, err := exec.Command(filepath.Join(b, "bin/simgraph"), "--graph", graph, "--msgcost", "-3").CombinedOutput(); err == nil ||
		!regexp.MustCompile(`--msgcost wants microseconds`).Match(out) {
		t.Errorf("--msgcost -3: %v, %s; want a refusal that says what it wants", err, out)
	}
}
