package realros

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stamp is a builtin_interfaces/Time.
type stamp struct {
	Sec     int64 `json:"sec"`
	Nanosec int64 `json:"nanosec"`
}

func (s stamp) ns() int64 { return s.Sec*1e9 + s.Nanosec }

// heard is what pulse_listen.py kept of one topic.
type heard struct {
	Received int `json:"received"`
	Messages []struct {
		Source     string `json:"measurement_source_name"`
		Metrics    string `json:"metrics_source"`
		Unit       string `json:"unit"`
		Start      stamp  `json:"window_start"`
		Stop       stamp  `json:"window_stop"`
		Statistics []struct {
			DataType int     `json:"data_type"`
			Data     float64 `json:"data"`
		} `json:"statistics"`
	} `json:"messages"`
}

// TestBridgeHeardByRclpy: pulse bridge publishes /statistics into the run's
// domain; a real rclpy subscriber (rmw_cyclonedds_cpp) hears it, and the rate
// it carries for /listener's /chatter agrees with the rate the listener
// really received at.
func TestBridgeHeardByRclpy(t *testing.T) {
	l := setup(t)
	bridge := filepath.Join(l.build, "bin/pulse-bridge")
	if _, err := os.Stat(bridge); err != nil {
		t.Skipf("no pulse-bridge in %s (make bridge: it needs cyclonedds-dev)", l.build)
	}
	if !l.has("rmw_cyclonedds_cpp") {
		t.Skipf("%s has no rmw_cyclonedds_cpp: pulse bridge speaks Cyclone DDS", l.prefix)
	}
	r := l.newRun(t)
	listener := r.node("listener", "cpp", "", "--stamps", "--sub", "/chatter", "--duration", "13")
	r.node("talker", "cpp", "", "--pub", "/chatter,20,16", "--duration", "12")
	out := filepath.Join(r.truths, "statistics.json")
	stats := exec.Command("/usr/bin/python3", filepath.Join(l.ws, "lib/pulse_testnodes/pulse_listen.py"),
		"--topic", "/statistics", "--type", "statistics_msgs/msg/MetricsMessage", "--duration", "11", "--out", out)
	stats.Env = r.env("rmw_cyclonedds_cpp", []string{"LD_PRELOAD="})
	if err := stats.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	br := r.pulseCmd("bridge", "--statistics", "--period", "1s", "--for", "9s", "--dir", r.dir)
	if b, err := br.CombinedOutput(); err != nil {
		t.Fatalf("pulse bridge: %v\n%s", err, b)
	}
	if err := stats.Wait(); err != nil {
		t.Fatalf("pulse_listen.py: %v", err)
	}
	r.waitAll(20 * time.Second)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var h heard
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	// Every window of /listener's /chatter rate that the listener ran
	// through, against what it received in that window.
	offset := realMinusMono(t)
	sub := &r.truth(listener).Endpoints[0]
	judged, bad := 0, []string{}
	for _, m := range h.Messages {
		if m.Source != "/listener" || m.Metrics != "/chatter" || m.Unit != "Hz" || len(m.Statistics) == 0 {
			continue
		}
		from, to := m.Start.ns()-offset, m.Stop.ns()-offset
		if from < sub.FirstNs || to > sub.LastNs {
			continue // the listener's first or last window: not a window it received through
		}
		judged++
		if ok, lo, hi := windowAgrees(sub, m.Statistics[0].Data, from, to, 3e6); !ok {
			bad = append(bad, fmt.Sprintf("%.3f Hz over %.3f s (received %d-%d)", m.Statistics[0].Data, float64(to-from)/1e9, lo, hi))
		}
	}
	table(t, "bridge: /statistics heard by rclpy", fmt.Sprintf("%d messages, %d windows of /chatter judged, %d disagree", h.Received, judged, len(bad)),
		fmt.Sprintf("%d received at %.2f Hz", sub.Count, sub.Hz()))
	if judged < 4 || len(bad) > 0 {
		t.Errorf("rclpy heard %d /statistics messages; %d windows of /listener's /chatter judged; against what it received: %s",
			h.Received, judged, strings.Join(bad, "; "))
	}
}
