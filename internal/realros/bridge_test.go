package realros

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// heard is what pulse_listen.py kept of one topic.
type heard struct {
	Received int `json:"received"`
	Messages []struct {
		Source     string `json:"measurement_source_name"`
		Metrics    string `json:"metrics_source"`
		Unit       string `json:"unit"`
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
	listener := r.node("listener", "cpp", "", "--sub", "/chatter", "--duration", "13")
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
	var rates []float64
	for _, m := range h.Messages {
		if m.Source == "/listener" && m.Metrics == "/chatter" && m.Unit == "Hz" && len(m.Statistics) > 0 {
			rates = append(rates, m.Statistics[0].Data)
		}
	}
	real := r.truth(listener).Endpoints[0].Hz()
	sort.Float64s(rates)
	if len(rates) > 0 {
		table(t, "bridge: /statistics heard by rclpy", fmt.Sprintf("%d messages, median %.2f Hz", h.Received, rates[len(rates)/2]),
			fmt.Sprintf("%.2f Hz received", real))
	}
	if len(rates) < 4 || real == 0 || math.Abs(rates[len(rates)/2]-real) > 0.05*real {
		var got []string
		for _, m := range h.Messages {
			got = append(got, m.Source+" "+m.Metrics+" "+m.Unit)
		}
		t.Errorf("rclpy heard %d /statistics messages; /listener's /chatter rates %v (median against the %.2f Hz it received at); heard: %s",
			h.Received, rates, real, strings.Join(got, ", "))
	}
}
