package realros

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// lttng runs one lttng command against the test's own session daemon.
func lttng(t *testing.T, home string, args ...string) {
	t.Helper()
	cmd := exec.Command("lttng", args...)
	cmd.Env = append(os.Environ(), "LTTNG_HOME="+home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lttng %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

var (
	bt2Event = regexp.MustCompile(`ros2:(\w+): .*vpid = (\d+).*\{ (.*) \}$`)
	bt2Field = regexp.MustCompile(`(\w+) = ("[^"]*"|\S+?)(?:,|$)`)
)

// traceEvent is one ros2:* event of a babeltrace2 text dump.
type traceEvent struct {
	name   string
	vpid   int
	fields map[string]string
}

func readTrace(t *testing.T, dir string) []traceEvent {
	t.Helper()
	out, err := exec.Command("babeltrace2", dir).Output()
	if err != nil {
		t.Fatalf("babeltrace2 %s: %v", dir, err)
	}
	var evs []traceEvent
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := bt2Event.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		e := traceEvent{name: m[1], fields: map[string]string{}}
		fmt.Sscan(m[2], &e.vpid)
		for _, f := range bt2Field.FindAllStringSubmatch(m[3], -1) {
			e.fields[f[1]] = strings.Trim(f[2], `"`)
		}
		evs = append(evs, e)
	}
	return evs
}

// TestBesideAnLTTngSession: a team that records ros2:* with LTTng (ros2_tracing,
// CARET) while pulse runs. A session daemon of the test's own records a
// talker and a listener started under `pulse run`: the trace holds every
// event the nodes made (each rcl_publish of the talker's topic, each
// callback_start of the listener's callback, counted against the nodes'
// own counts), and pulse's counts stay exact.
func TestBesideAnLTTngSession(t *testing.T) {
	l := setup(t)
	if os.Getenv("PULSE_ROS_LTTNG") != "with" {
		t.Skipf("%s's tracetools is built without LTTng: there is no session to live beside", l.prefix)
	}
	for _, tool := range []string{"lttng", "lttng-sessiond", "babeltrace2"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (Debian: lttng-tools, babeltrace2)", tool)
		}
	}
	r := l.newRun(t)
	home := t.TempDir()
	sessiond := exec.Command("lttng-sessiond", "--no-kernel")
	sessiond.Env = append(os.Environ(), "LTTNG_HOME="+home)
	if err := sessiond.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sessiond.Process.Kill(); _ = sessiond.Wait() })
	time.Sleep(time.Second)
	trace := filepath.Join(home, "trace")
	lttng(t, home, "create", "pulse-test", "--output="+trace)
	lttng(t, home, "enable-event", "--userspace", "ros2:*")
	lttng(t, home, "add-context", "--userspace", "--type=vpid")
	lttng(t, home, "start")

	// Both nodes under one `pulse run`, as a launch would be.
	bin := filepath.Join(l.ws, "lib/pulse_testnodes/pulse_node")
	listenerTruth, talkerTruth := filepath.Join(r.truths, "listener.json"), filepath.Join(r.truths, "talker.json")
	script := fmt.Sprintf(`%[1]s --name listener --truth %[2]s --sub /traced --duration 7 &
sleep 1; %[1]s --name talker --truth %[3]s --pub /traced,100,16,300 --duration 5; wait`, bin, listenerTruth, talkerTruth)
	cmd := exec.Command(l.pulse(), "run", "--dir", r.dir, "--no-summary", "--", "bash", "-c", script)
	for _, kv := range r.env("", []string{"LTTNG_HOME=" + home}) {
		if !strings.HasPrefix(kv, "LD_PRELOAD=") && !strings.HasPrefix(kv, "ROS_PULSE_DIR=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pulse run: %v\n%s", err, out)
	}
	lttng(t, home, "stop")
	lttng(t, home, "destroy", "pulse-test")

	talker, err := ReadTruth(talkerTruth)
	if err != nil {
		t.Fatal(err)
	}
	listener, err := ReadTruth(listenerTruth)
	if err != nil {
		t.Fatal(err)
	}
	sent, received := talker.Endpoints[0].Count, listener.Endpoints[0].Count
	if sent != 300 || received == 0 {
		t.Fatalf("the nodes: sent %d, received %d", sent, received)
	}
	// The trace, joined as tracetools' analyses join it: topic -> rcl handle ->
	// rclcpp subscription -> callback.
	evs := readTrace(t, trace)
	pubHandle, subHandle, subscription, callback := "", "", "", ""
	for _, e := range evs {
		switch {
		case e.name == "rcl_publisher_init" && e.vpid == talker.Pid && e.fields["topic_name"] == "/traced":
			pubHandle = e.fields["publisher_handle"]
		case e.name == "rcl_subscription_init" && e.vpid == listener.Pid && e.fields["topic_name"] == "/traced":
			subHandle = e.fields["subscription_handle"]
		case e.name == "rclcpp_subscription_init" && e.vpid == listener.Pid && e.fields["subscription_handle"] == subHandle:
			subscription = e.fields["subscription"]
		case e.name == "rclcpp_subscription_callback_added" && e.vpid == listener.Pid && e.fields["subscription"] == subscription:
			callback = e.fields["callback"]
		}
	}
	var publishes, starts uint64
	for _, e := range evs {
		if e.name == "rcl_publish" && e.vpid == talker.Pid && e.fields["publisher_handle"] == pubHandle {
			publishes++
		}
		if e.name == "callback_start" && e.vpid == listener.Pid && e.fields["callback"] == callback {
			starts++
		}
	}
	if pubHandle == "" || callback == "" || publishes != sent || starts != received {
		t.Errorf("LTTng recorded %d rcl_publish of /traced (the talker sent %d) and %d callback_start of its callback "+
			"(the listener received %d); handles %q %q, %d events", publishes, sent, starts, received, pubHandle, callback, len(evs))
	}
	// pulse, beside it, exact.
	s := r.scan()
	if f := lookup(s, talker.Pid, &talker.Endpoints[0]); f.counts[0] != sent {
		t.Errorf("pulse counts %d publishes of /traced, the talker %d", f.counts[0], sent)
	}
	if f := lookup(s, listener.Pid, &listener.Endpoints[0]); f.counts[0]+f.counts[1] != received {
		t.Errorf("pulse counts %d deliveries of /traced, the listener %d", f.counts[0]+f.counts[1], received)
	}
	table(t, "beside an LTTng session", fmt.Sprintf("exact (%d sent, %d received)", sent, received),
		fmt.Sprintf("trace: %d rcl_publish, %d callback_start of %d events", publishes, starts, len(evs)))
}
