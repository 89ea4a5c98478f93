package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/recorder"
)

func TestPreloadEnv(t *testing.T) {
	env := PreloadEnv([]string{"A=1", "LD_PRELOAD=/x/libother.so", "ROS_PULSE_DIR=/old"}, "/p/libros2_pulse.so", "/seg")
	joined := strings.Join(env, "\n")
	if !strings.Contains(joined, "LD_PRELOAD=/p/libros2_pulse.so:/x/libother.so") || !strings.Contains(joined, "ROS_PULSE_DIR=/seg") ||
		strings.Contains(joined, "/old") || !strings.Contains(joined, "A=1") {
		t.Fatalf("%q", env)
	}
	env = PreloadEnv([]string{"LD_PRELOAD="}, "/p/lib.so", "/d")
	if strings.Join(env, " ") != "LD_PRELOAD=/p/lib.so ROS_PULSE_DIR=/d" {
		t.Fatalf("%q", env)
	}
}

func lib(t *testing.T) string {
	b := os.Getenv("PULSE_BUILD")
	if b == "" {
		b, _ = filepath.Abs("../../build")
	}
	p := filepath.Join(b, "lib/libros2_pulse.so")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("run `make build` first: %v", err)
	}
	return p
}

// A run gets its own segment directory, sees the probe in its environment,
// returns the command's status and leaves nothing behind.
func TestRunOwnDirectoryAndStatus(t *testing.T) {
	out := filepath.Join(t.TempDir(), "env.txt")
	var summary strings.Builder
	code, err := Run(context.Background(), []string{"sh", "-c", `echo "$LD_PRELOAD $ROS_PULSE_DIR" > ` + out + `; exit 3`},
		Options{Lib: lib(t), Recorder: recorder.Options{Period: 100 * time.Millisecond}, Summary: &summary, Stdout: os.Stdout, Stderr: os.Stderr})
	if err != nil || code != 3 {
		t.Fatalf("code %d err %v", code, err)
	}
	b, _ := os.ReadFile(out)
	fields := strings.Fields(string(b))
	if len(fields) != 2 || !strings.HasSuffix(fields[0], "libros2_pulse.so") || !strings.Contains(fields[1], "ros2_pulse-run-") {
		t.Fatalf("command saw %q", b)
	}
	if _, err := os.Stat(fields[1]); !os.IsNotExist(err) {
		t.Errorf("run directory %s left behind", fields[1])
	}
	if !strings.Contains(summary.String(), "pulse summary") {
		t.Errorf("summary: %q", summary.String())
	}
}

// Cancelling the context terminates the command's whole process group.
func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	code, err := Run(ctx, []string{"sh", "-c", "sleep 30 & sleep 30; wait"},
		Options{Lib: lib(t), Recorder: recorder.Options{Period: time.Second}, Stdout: os.Stdout, Stderr: os.Stderr})
	if err != nil || code != 128+15 || time.Since(start) > 5*time.Second {
		t.Fatalf("code %d err %v after %v", code, err, time.Since(start))
	}
}
