// Package config reads the environment variables users already know from
// upstream ros2_pulse. A bad value never stops anything: it gives one clear
// message and the safe default.
package config

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"ros2_pulse/internal/logfmt"
	"ros2_pulse/internal/segment"
)

const (
	DefaultPeriod   = 5 * time.Second
	MinPeriod       = 50 * time.Millisecond
	DefaultMaxBytes = 10 << 20
)

// Env is the recording configuration taken from the environment.
type Env struct {
	Period     time.Duration // ROS_TOPIC_STATISTICS_PUBLISH_PERIOD
	Format     logfmt.Format // ROS_TOPIC_STATS_FORMAT
	OutputFile string        // ROS_TOPIC_STATS_OUTPUT_FILE ("" = none set)
	MaxBytes   int64         // ROS_TOPIC_STATS_MAX_BYTES (0 = never rotate)
	EmitIdle   bool          // ROS_PULSE_EMIT_IDLE
	Quiet      bool          // ROS_TOPIC_STATS_QUIET
	Dir        string        // ROS_PULSE_DIR, else the default segment directory
	DirFrom    string        // where Dir came from, for messages: "--dir", "ROS_PULSE_DIR" or "default"
}

// WithDir returns the environment with a --dir flag applied (when given),
// made absolute: the probe takes only absolute directories.
func (e Env) WithDir(flag string) (Env, error) {
	if flag == "" {
		return e, nil
	}
	abs, err := filepath.Abs(flag)
	if err != nil {
		return e, fmt.Errorf("--dir %q: %w", flag, err)
	}
	e.Dir, e.DirFrom = abs, "--dir"
	return e, nil
}

// NothingThere is what a view says when the directory holds no probed
// process: which directory it read and why that one.
func (e Env) NothingThere() string {
	why := map[string]string{
		"--dir":         "given by --dir",
		"ROS_PULSE_DIR": "from ROS_PULSE_DIR",
	}[e.DirFrom]
	if why == "" {
		why = "the machine-wide default; ROS_PULSE_DIR or --dir chooses another"
	}
	return fmt.Sprintf("no probed process in %s (%s)", e.Dir, why)
}

// Load reads the environment through getenv and reports bad values on warn.
func Load(getenv func(string) string, warn io.Writer) Env {
	e := Env{Period: DefaultPeriod, Format: logfmt.Text, MaxBytes: DefaultMaxBytes, Dir: segment.DefaultDir(), DirFrom: "default"}
	bad := func(name, value, expected, fallback string) {
		fmt.Fprintf(warn, "pulse: invalid %s '%s' (expected %s), using %s\n", name, value, expected, fallback)
	}
	if v := getenv("ROS_TOPIC_STATISTICS_PUBLISH_PERIOD"); strings.TrimSpace(v) != "" {
		if d, err := ParsePeriod(v); err != nil {
			bad("ROS_TOPIC_STATISTICS_PUBLISH_PERIOD", v, fmt.Sprintf("seconds or a duration, at least %v, e.g. 2.0", MinPeriod), "5")
		} else {
			e.Period = d
		}
	}
	if v := getenv("ROS_TOPIC_STATS_FORMAT"); strings.TrimSpace(v) != "" {
		if f, err := logfmt.ParseFormat(v); err != nil {
			bad("ROS_TOPIC_STATS_FORMAT", v, "'text' or 'jsonl'", "text")
		} else {
			e.Format = f
		}
	}
	e.OutputFile = getenv("ROS_TOPIC_STATS_OUTPUT_FILE")
	if v := getenv("ROS_TOPIC_STATS_MAX_BYTES"); strings.TrimSpace(v) != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			bad("ROS_TOPIC_STATS_MAX_BYTES", v, "a byte count >= 0, 0 = never rotate", "10485760")
		} else {
			e.MaxBytes = n
		}
	}
	// Exactly "1" is on, as in upstream and the probe; "0" and unset are off;
	// anything else is off too, and said.
	flag := func(name string) bool {
		switch v := getenv(name); v {
		case "", "0":
			return false
		case "1":
			return true
		default:
			bad(name, v, "exactly 1 to switch it on, or 0", "off")
			return false
		}
	}
	e.EmitIdle = flag("ROS_PULSE_EMIT_IDLE")
	e.Quiet = flag("ROS_TOPIC_STATS_QUIET")
	if v := getenv("ROS_PULSE_DIR"); v != "" {
		if strings.HasPrefix(v, "/") {
			e.Dir, e.DirFrom = v, "ROS_PULSE_DIR"
		} else {
			bad("ROS_PULSE_DIR", v, "an absolute path", e.Dir)
		}
	}
	return e
}

// FromOS is Load over the process environment, warning on stderr. It reads
// once per process, so a bad value is reported once, however many commands
// and flags ask.
var FromOS = sync.OnceValue(func() Env { return Load(os.Getenv, os.Stderr) })

// ParsePeriod accepts seconds ("2", "0.5") or a Go duration ("500ms").
// It rejects junk, nan, inf and anything below MinPeriod.
func ParsePeriod(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || f > 86400 {
			return 0, fmt.Errorf("period %q out of range", s)
		}
		d = time.Duration(f * float64(time.Second))
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("period %q is neither seconds nor a duration", s)
	}
	if d < MinPeriod {
		return 0, fmt.Errorf("period %q is below the minimum %v", s, MinPeriod)
	}
	return d, nil
}
