package config

import (
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/logfmt"
)

func load(env map[string]string) (Env, string) {
	var warn strings.Builder
	e := Load(func(k string) string { return env[k] }, &warn)
	return e, warn.String()
}

func TestDefaults(t *testing.T) {
	e, warn := load(nil)
	if e.Period != DefaultPeriod || e.Format != logfmt.Text || e.MaxBytes != DefaultMaxBytes || e.EmitIdle || e.Quiet || warn != "" {
		t.Fatalf("defaults: %+v warn=%q", e, warn)
	}
}

func TestValidValues(t *testing.T) {
	e, warn := load(map[string]string{
		"ROS_TOPIC_STATISTICS_PUBLISH_PERIOD": " 2.5 ", "ROS_TOPIC_STATS_FORMAT": "jsonl",
		"ROS_TOPIC_STATS_MAX_BYTES": "0", "ROS_PULSE_EMIT_IDLE": "1", "ROS_TOPIC_STATS_QUIET": "1",
		"ROS_PULSE_DIR": "/run/pulse", "ROS_TOPIC_STATS_OUTPUT_FILE": "/tmp/x.log",
	})
	if e.Period != 2500*time.Millisecond || e.Format != logfmt.JSONL || e.MaxBytes != 0 || !e.EmitIdle || !e.Quiet ||
		e.Dir != "/run/pulse" || e.OutputFile != "/tmp/x.log" || warn != "" {
		t.Fatalf("%+v warn=%q", e, warn)
	}
}

// Every garbage value gives exactly one message naming the variable, and the default.
func TestGarbageValues(t *testing.T) {
	cases := map[string]string{
		"ROS_TOPIC_STATISTICS_PUBLISH_PERIOD": "nan",
		"ROS_TOPIC_STATS_FORMAT":              "xml",
		"ROS_TOPIC_STATS_MAX_BYTES":           "-5",
		"ROS_PULSE_DIR":                       "relative/dir",
	}
	for name, value := range cases {
		e, warn := load(map[string]string{name: value})
		if strings.Count(warn, "\n") != 1 || !strings.Contains(warn, name) || !strings.Contains(warn, value) {
			t.Errorf("%s=%q: warning %q", name, value, warn)
		}
		def, _ := load(nil)
		if e != def {
			t.Errorf("%s=%q: not the default: %+v", name, value, e)
		}
	}
	// Opt-in flags accept exactly "1": anything else but "0" is off, and said once each.
	e, warn := load(map[string]string{"ROS_PULSE_EMIT_IDLE": "true", "ROS_TOPIC_STATS_QUIET": "yes"})
	if e.EmitIdle || e.Quiet || strings.Count(warn, "\n") != 2 ||
		!strings.Contains(warn, "invalid ROS_PULSE_EMIT_IDLE 'true' (expected exactly 1 to switch it on, or 0), using off") ||
		!strings.Contains(warn, "invalid ROS_TOPIC_STATS_QUIET 'yes'") {
		t.Errorf("flags: %+v %q", e, warn)
	}
	if e, warn := load(map[string]string{"ROS_PULSE_EMIT_IDLE": "0"}); e.EmitIdle || warn != "" {
		t.Errorf("0 is off, silently: %+v %q", e, warn)
	}
	// The period's message names the minimum.
	if _, warn := load(map[string]string{"ROS_TOPIC_STATISTICS_PUBLISH_PERIOD": "10ms"}); !strings.Contains(warn, "at least 50ms") ||
		!strings.Contains(warn, "using 5") {
		t.Errorf("period below the minimum: %q", warn)
	}
}

func TestParsePeriod(t *testing.T) {
	for in, want := range map[string]time.Duration{"1": time.Second, "0.25": 250 * time.Millisecond, "500ms": 500 * time.Millisecond} {
		if got, err := ParsePeriod(in); err != nil || got != want {
			t.Errorf("ParsePeriod(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "0", "-1", "inf", "1e9", "0.001", "2 s", "abc"} {
		if _, err := ParsePeriod(bad); err == nil {
			t.Errorf("ParsePeriod(%q) accepted", bad)
		}
	}
}
