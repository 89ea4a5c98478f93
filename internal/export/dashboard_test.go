package export

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func dashboardExprs(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../../deploy/grafana/ros2_pulse.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	q, err := DashboardQueries(f)
	if err != nil {
		t.Fatalf("the dashboard is not valid JSON: %v", err)
	}
	return q
}

// exposedNames lists the series names the exporter can expose, from its
// descriptors (histograms expand to _bucket, _sum and _count).
func exposedNames(t *testing.T) map[string]bool {
	c, err := New(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ch := make(chan *prometheus.Desc, 64)
	c.Describe(ch)
	close(ch)
	re := regexp.MustCompile(`fqName: "([^"]+)"`)
	names := map[string]bool{"up": true} // Prometheus's own per-target series
	for d := range ch {
		n := re.FindStringSubmatch(d.String())[1]
		names[n] = true
		if strings.HasSuffix(n, "_seconds") && (strings.Contains(n, "gap") || strings.Contains(n, "latency") ||
			strings.Contains(n, "callback_duration") || strings.Contains(n, "timer_lateness") || strings.Contains(n, "service_response")) {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[n+s] = true
			}
		}
	}
	return names
}

// The dashboard's queries use only metric names the exporter really exposes.
func TestDashboardUsesExposedMetrics(t *testing.T) {
	names := exposedNames(t)
	metric := regexp.MustCompile(`\b(ros2_pulse_[a-z_]+|up)\b`)
	exprs := dashboardExprs(t)
	if len(exprs) < 15 {
		t.Fatalf("only %d expressions in the dashboard", len(exprs))
	}
	used := map[string]bool{}
	for _, e := range exprs {
		for _, m := range metric.FindAllString(e, -1) {
			used[m] = true
			if !names[m] {
				t.Errorf("the dashboard queries %q, which pulse export does not expose (in %q)", m, e)
			}
		}
	}
	// Recorded series come from the shipped rules.
	rules, err := os.ReadFile("../../deploy/prometheus/ros2_pulse.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exprs {
		for _, m := range regexp.MustCompile(`\bros2_pulse:[a-z0-9_:]+`).FindAllString(e, -1) {
			if !strings.Contains(string(rules), "record: "+m+"\n") {
				t.Errorf("the dashboard queries %q, which the shipped rules do not record", m)
			}
		}
	}
	for _, must := range []string{"ros2_pulse_messages_total", "ros2_pulse_node_up", "ros2_pulse_process_cpu_seconds_total", "ros2_pulse_message_gap_seconds_bucket", "ros2_pulse_spec_rule_ok",
		"ros2_pulse_service_response_seconds_bucket", "ros2_pulse_service_outstanding", "ros2_pulse_service_server_missing"} {
		if !used[must] {
			t.Errorf("the dashboard never shows %s", must)
		}
	}
}

// Series from many robots meet in one central server (deploy/fleet), told
// apart only by `robot`: every aggregation and every match in the rules and
// the dashboard keeps it, so two robots' series never add up.
func TestEveryAggregationKeepsRobot(t *testing.T) {
	rules, err := os.ReadFile("../../deploy/prometheus/ros2_pulse.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	clause := regexp.MustCompile(`\b(by|on)\s*\(([^)]*)\)`)
	n := 0
	for _, text := range append(dashboardExprs(t), string(rules)) {
		for _, m := range clause.FindAllStringSubmatch(text, -1) {
			n++
			if !regexp.MustCompile(`\brobot\b`).MatchString(m[2]) {
				t.Errorf("%q drops robot: %.120s", m[0], text)
			}
		}
	}
	if n < 10 {
		t.Errorf("only %d by/on clauses found: the test reads the wrong files", n)
	}
}
