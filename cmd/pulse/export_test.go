package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// promQuery runs an instant query against Prometheus's HTTP API.
func promQuery(t *testing.T, addr, q string) []struct {
	Metric map[string]string
	Value  [2]any
} {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
		Error string
	}
	body, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		t.Fatalf("query %q: %v %s", q, err, body)
	}
	return r.Data.Result
}

// promReady reports whether Prometheus answers its readiness endpoint.
func promReady(addr string) bool {
	resp, err := http.Get("http://" + addr + "/-/ready")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func sampleValue(v [2]any) float64 {
	s, _ := v[1].(string)
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// scaledRules is deploy/prometheus's rule file with its windows shortened,
// so a stall fires in seconds instead of minutes.
func scaledRules(t *testing.T, dir string) string {
	b, err := os.ReadFile("../../deploy/prometheus/ros2_pulse.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer("[1m]", "[4s]", "[10m]", "[30s]", "for: 30s", "for: 1s", "for: 1m", "for: 1s", "for: 2m", "for: 1s", "for: 5m", "for: 1s").Replace(string(b))
	path := filepath.Join(dir, "rules.yml")
	os.WriteFile(path, []byte(s), 0o600)
	return path
}

// A real Prometheus scrapes pulse export while simgraph runs the demo robot:
// rate() of every demo topic is within 2 % of its configured rate, a killed
// process's node goes up == 0, and an injected stall fires the alert.
func TestExportWithRealPrometheus(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus is needed for this test (apt-get install prometheus; .ci/run does)")
	}
	_, sim, _ := bin(t)
	dir := t.TempDir()
	demo, err := os.ReadFile("../../sim/graphs/demo.graph")
	if err != nil {
		t.Fatal(err)
	}
	graphText := strings.Replace(string(demo), "pub /scan 10 thread size=8000", "pub /scan 10 thread size=8000 stall=20:100", 1) +
		"\nprocess doomed kill=17\n  node /doomed\n    pub /heartbeat 5 thread\n"
	graphPath := filepath.Join(dir, "g.graph")
	os.WriteFile(graphPath, []byte(graphText), 0o600)
	segs := filepath.Join(dir, "segs")
	os.Mkdir(segs, 0o700)
	build := filepath.Dir(filepath.Dir(sim))
	graph := exec.Command(sim, "--graph", graphPath, "--duration", "60")
	graph.Env = append(os.Environ(), "LD_PRELOAD="+filepath.Join(build, "lib/libros2_pulse.so"),
		"LD_LIBRARY_PATH="+filepath.Join(build, "lib/sim/jazzy"), "ROS_PULSE_DIR="+segs, "ROS_TOPIC_STATS_QUIET=1")
	if err := graph.Start(); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()

	exportAddr := freePort(t)
	exp := pulseCmd(t, "export", "--listen", exportAddr)
	exp.Env = append(exp.Env, "ROS_PULSE_DIR="+segs)
	exp.Stderr = os.Stderr
	if err := exp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { exp.Process.Signal(os.Interrupt); exp.Wait() }()

	promAddr := freePort(t)
	cfg := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: ros2_pulse
    static_configs: [{targets: [%q]}]
`, scaledRules(t, dir), exportAddr)), 0o600)
	p := exec.Command(prom, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	var promLog strings.Builder
	p.Stdout, p.Stderr = &promLog, &promLog
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { p.Process.Signal(os.Interrupt); p.Wait() }()
	defer func() {
		if t.Failed() {
			t.Logf("prometheus log:\n%s", promLog.String())
		}
	}()

	// Rates over 8 s of steady traffic, once Prometheus has scraped that long,
	// before any fault: rate() only extrapolates a little beyond its samples.
	for !promReady(promAddr) || len(promQuery(t, promAddr, `up{job="ros2_pulse"} == 1`)) == 0 {
		if time.Since(t0) > 10*time.Second {
			t.Fatalf("Prometheus never scraped pulse export")
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(9 * time.Second)
	if time.Since(t0) > 16*time.Second {
		t.Fatalf("too slow to measure before the faults at 17 s (%v)", time.Since(t0))
	}
	want := map[string]float64{"/scan": 10, "/camera/image": 30, "/camera/detections": 30, "/cmd_vel": 20, "/tf": 50, "/odom": 50}
	got := map[string]float64{}
	for _, r := range promQuery(t, promAddr, `max by (topic) (sum by (topic, transport) (rate(ros2_pulse_messages_total{side="pub"}[8s])))`) {
		got[r.Metric["topic"]] = sampleValue(r.Value)
	}
	t.Logf("rate() per topic: %v", got)
	for topic, hz := range want {
		if math.Abs(got[topic]-hz) > 0.02*hz {
			t.Errorf("rate() of %s = %.3f, configured %g: more than 2 %% off", topic, got[topic], hz)
		}
	}
	if up := promQuery(t, promAddr, `ros2_pulse_node_up{node="/doomed"}`); len(up) != 1 || sampleValue(up[0].Value) != 1 {
		t.Errorf("/doomed before it is killed: %v", up)
	}

	// The doomed process is SIGKILLed at 17 s: its node goes down.
	deadline := t0.Add(26 * time.Second)
	for {
		up := promQuery(t, promAddr, `ros2_pulse_node_up{node="/doomed"}`)
		if len(up) == 1 && sampleValue(up[0].Value) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/doomed never went up == 0: %v", up)
		}
		time.Sleep(500 * time.Millisecond)
	}

	// /scan stalls at 20 s: the stall alert fires for it, and for nothing healthy.
	deadline = t0.Add(40 * time.Second)
	for {
		resp, err := http.Get("http://" + promAddr + "/api/v1/alerts")
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Data struct {
				Alerts []struct {
					Labels map[string]string
					State  string
				}
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		scan := false
		for _, a := range r.Data.Alerts {
			if a.Labels["alertname"] != "Ros2TopicStalled" || a.State != "firing" {
				continue
			}
			switch a.Labels["topic"] {
			case "/scan":
				scan = true
			case "/heartbeat": // its publisher was killed: a stall too
			default:
				t.Errorf("a healthy topic was alerted as stalled: %v", a.Labels)
			}
		}
		if scan {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stall alert for /scan never fired: %+v", r.Data.Alerts)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
