package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math"
	"math/big"
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

	"golang.org/x/crypto/bcrypt"

	"ros2_pulse/internal/export"
)

func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// scrapeBody is one scrape of a pulse export's /metrics.
func scrapeBody(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// promSample is one series of an instant query's answer.
type promSample struct {
	Metric map[string]string
	Value  [2]any
}

// promQuery runs an instant query against Prometheus's HTTP API, now.
func promQuery(t *testing.T, addr, q string) []promSample {
	t.Helper()
	return promQueryAt(t, addr, q, time.Time{})
}

// promQueryAt runs an instant query evaluated at ts (zero: now).
func promQueryAt(t *testing.T, addr, q string, ts time.Time) []promSample {
	t.Helper()
	u := "http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q)
	if !ts.IsZero() {
		u += fmt.Sprintf("&time=%.3f", float64(ts.UnixNano())/1e9)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   struct {
			Result []promSample
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
// rate() of every demo topic is within 2 % of its configured rate, the loss
// rule reads an injected 20 % loss, a killed process's node goes up == 0,
// and an injected stall fires the alert.
func TestExportWithRealPrometheus(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus is needed for this test (apt-get install prometheus; .ci/run does)")
	}
	dir := t.TempDir()
	demo, err := os.ReadFile("../../sim/graphs/demo.graph")
	if err != nil {
		t.Fatal(err)
	}
	graphText := strings.Replace(string(demo), "pub /scan 10 thread size=8000", "pub /scan 10 thread size=8000 stall=20:100", 1) +
		"\nprocess doomed kill=17\n  node /doomed\n    pub /heartbeat 5 thread\n" +
		"\nprocess lossy\n  node /lossy_listener\n    sub /tf drop=0.2\n" +
		"\nprocess hog\n  node /hog\n    timer 50 cost=19\n" +
		"\nprocess pybusy\n  node /py_busy lang=py\n    timer 20 cost=48\n"
	graphPath := filepath.Join(dir, "g.graph")
	os.WriteFile(graphPath, []byte(graphText), 0o600)
	graph, segs := startGraph(t, dir, graphPath, "60", "ROS_TOPIC_STATS_JITTER=1", "ROS_TOPIC_STATS_LATENCY=1")
	t0 := time.Now()
	truth := sampleTruth(t, dir)
	specPath := filepath.Join(dir, "spec.yaml")
	os.WriteFile(specPath, []byte("topics:\n  /tf: {min_hz: 45, max_hz: 55, side: pub}\n  /odom: {min_hz: 45}\nnodes: [/controller]\n"), 0o600)
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()

	exportAddr := freePort(t)
	exp := pulseCmd(t, "export", "--listen", exportAddr, "--spec", specPath, "--period", "1s")
	exp.Env = append(exp.Env, "ROS_PULSE_DIR="+segs)
	exp.Stderr = os.Stderr
	if err := exp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { exp.Process.Signal(os.Interrupt); exp.Wait() }()
	// A fleet's lean exporter beside it: no gap or latency histograms, the
	// last message's age still there.
	leanAddr := freePort(t)
	lean := pulseCmd(t, "export", "--listen", leanAddr, "--period", "1s", "--histograms=false")
	lean.Env = append(lean.Env, "ROS_PULSE_DIR="+segs)
	if err := lean.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { lean.Process.Signal(os.Interrupt); lean.Wait() }()

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
	fat, leanBody := scrapeBody(t, exportAddr), scrapeBody(t, leanAddr)
	if !strings.Contains(fat, "ros2_pulse_message_gap_seconds_bucket{") || !strings.Contains(fat, "ros2_pulse_message_latency_seconds_bucket{") ||
		strings.Contains(leanBody, "ros2_pulse_message_gap_seconds") || strings.Contains(leanBody, "ros2_pulse_message_latency_seconds") ||
		!strings.Contains(leanBody, "ros2_pulse_last_message_age_seconds{") || !strings.Contains(leanBody, "ros2_pulse_messages_total{") {
		t.Errorf("--histograms=false: %d bytes against %d; the lean scrape:\n%.2000s", len(leanBody), len(fat), leanBody)
	}
	if time.Since(t0) > 16*time.Second {
		t.Fatalf("too slow to measure before the faults at 17 s (%v)", time.Since(t0))
	}
	got := map[string]float64{}
	queried := time.Now()
	for _, r := range promQuery(t, promAddr, `max by (topic) (sum by (topic, transport) (rate(ros2_pulse_messages_total{side="pub"}[8s])))`) {
		got[r.Metric["topic"]] = sampleValue(r.Value)
	}
	// What the graph published over the same 8 s, by its own counts (rateAgrees:
	// rate() extrapolates from the scrapes inside its range, whose ends are not ours).
	did := truth.rates(queried.Add(-8*time.Second), queried)
	t.Logf("rate() per topic: %v; the graph: %v", got, did)
	for _, topic := range []string{"/scan", "/camera/image", "/camera/detections", "/cmd_vel", "/tf", "/odom"} {
		if !rateAgrees(got[topic], did[topic], 8) {
			t.Errorf("rate() of %s = %.3f, the graph published %.3f Hz: more than max(2 %%, one message) off", topic, got[topic], did[topic])
		}
	}
	// The loss recording rule: the best-effort /tf listener misses its
	// injected fifth; the other subscriptions miss nothing.
	losses := promQuery(t, promAddr, `ros2_pulse:subscription_loss_ratio:rate1m`)
	for _, r := range losses {
		want := 0.0
		if r.Metric["node"] == "/lossy_listener" {
			want = 0.2
		}
		v := sampleValue(r.Value)
		if math.Abs(v-want) > 0.03 {
			t.Errorf("loss of %s at %s = %.3f, injected %g", r.Metric["topic"], r.Metric["node"], v, want)
		}
		t.Logf("loss of %s at %s: %.4f", r.Metric["topic"], r.Metric["node"], v)
	}
	if len(losses) < 5 {
		t.Errorf("loss ratios for %d subscriptions, want every demo subscription and /tf's: %v", len(losses), losses)
	}
	// Executors, rolled up per process: /hog's one rclcpp thread sleeps 19 ms
	// in every 20 ms callback, /py_busy's rclpy thread 48 of every 50 ms
	// outside rcl_wait (at least that share, however late the machine runs
	// them); the rclpy thread has a wait series and no busy one (its callbacks
	// are not timed: never a 0).
	for _, node := range []string{"/hog", "/py_busy"} {
		up := promQuery(t, promAddr, `ros2_pulse_node_up{node="`+node+`"}`)
		if len(up) != 1 {
			t.Errorf("%s: node_up %v", node, up)
			continue
		}
		pid := up[0].Metric["pid"]
		rolled := promQuery(t, promAddr, `ros2_pulse:process_executor_busy_ratio:max{pid="`+pid+`"}`)
		if len(rolled) != 1 || sampleValue(rolled[0].Value) < 0.85 || sampleValue(rolled[0].Value) > 1 {
			t.Errorf("%s (pid %s): its process's busiest executor thread %v, want 0.85-1", node, pid, rolled)
		}
		busySeries := promQuery(t, promAddr, `ros2_pulse_thread_busy_seconds_total{pid="`+pid+`"}`)
		waitSeries := promQuery(t, promAddr, `ros2_pulse_thread_wait_seconds_total{pid="`+pid+`"}`)
		if len(waitSeries) == 0 || (node == "/py_busy") != (len(busySeries) == 0) {
			t.Errorf("%s (pid %s): %d busy and %d wait series; want wait series, and busy ones only for rclcpp", node, pid, len(busySeries), len(waitSeries))
		}
		t.Logf("%s: busiest executor thread of its process %v", node, rolled)
	}
	// Every query of the shipped dashboard runs, and those that must show
	// something on a healthy robot do.
	f, err := os.Open("../../deploy/grafana/ros2_pulse.json")
	if err != nil {
		t.Fatal(err)
	}
	queries, err := export.DashboardQueries(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	empty := 0
	for _, q := range queries {
		if strings.HasPrefix(q, "label_values(") {
			continue // a Grafana function, not PromQL
		}
		if len(promQuery(t, promAddr, q)) == 0 {
			empty++
			// failures that are not there, bounds the spec does not set, and
			// what the demo robot has none of (actions, clients without a server)
			if !strings.Contains(q, "== 0") && !strings.Contains(q, "spec_max_hz") && !strings.Contains(q, "server_missing") &&
				!strings.Contains(q, "action_") {
				t.Errorf("dashboard query returns nothing on a healthy robot: %s", q)
			}
		}
	}
	t.Logf("%d dashboard queries run, %d empty (failures that are not there)", len(queries), empty)
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

// writeSelfSigned writes a throwaway certificate and key for 127.0.0.1.
func writeSelfSigned(t *testing.T, dir string) (certPath, keyPath string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pulse-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return
}

// tlsAndPassword writes an exporter-toolkit web configuration with a
// throwaway certificate and one basic-auth user, and returns it with a
// client that trusts that certificate.
func tlsAndPassword(t *testing.T, dir, user, password string) (string, *http.Client) {
	t.Helper()
	certPath, keyPath, pool := writeSelfSigned(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webCfg := filepath.Join(dir, "web.yml")
	os.WriteFile(webCfg, []byte(fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  %s: %s\n", certPath, keyPath, user, hash)), 0o600)
	return webCfg, &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
}

// TLS and basic auth come from exporter-toolkit's web configuration; a bad
// one is refused at start with a clear error.
func TestExportTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	webCfg, client := tlsAndPassword(t, dir, "prometheus", "s3cret")
	addr := freePort(t)
	exp := pulseCmd(t, "export", "--listen", addr, "--web.config.file", webCfg)
	exp.Env = append(exp.Env, "ROS_PULSE_DIR="+filepath.Join(dir, "segs"))
	if err := exp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { exp.Process.Signal(os.Interrupt); exp.Wait() }()
	get := func(user, pass string) (int, string) {
		req, _ := http.NewRequest("GET", "https://"+addr+"/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var code int
	var body string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if code, body = get("prometheus", "s3cret"); code != 0 {
			break
		}
	}
	if code != 200 || !strings.Contains(body, "ros2_pulse_build_info") || !strings.Contains(body, `ros2_pulse_processes{state="alive"} 0`) {
		t.Fatalf("with TLS and the password: %d\n%.300s", code, body)
	}
	if code, _ = get("prometheus", "wrong"); code != 401 {
		t.Errorf("a wrong password: %d, want 401", code)
	}
	if code, _ = get("", ""); code != 401 {
		t.Errorf("no credentials: %d, want 401", code)
	}
	if resp, err := http.Get("http://" + addr + "/metrics"); err == nil && resp.StatusCode == 200 {
		t.Errorf("plain HTTP was served")
	}

	// A web config naming a missing certificate fails at start, saying so.
	os.WriteFile(webCfg, []byte("tls_server_config:\n  cert_file: /nonexistent.pem\n  key_file: /nonexistent.key\n"), 0o600)
	bad := pulseCmd(t, "export", "--listen", freePort(t), "--web.config.file", webCfg)
	out, err := bad.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "nonexistent") {
		t.Errorf("a bad web config: %v\n%s", err, out)
	}
}
