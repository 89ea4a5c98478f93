package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/recorder"
	"ros2_pulse/internal/segment"
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

// A run gets its own directory inside the machine-wide one, sees the probe
// in its environment and returns the command's status. Its directory stays
// for the other views until an ended run is older than the retention; then
// the next run sweeps it away.
func TestRunDirectoryStatusAndSweep(t *testing.T) {
	base := t.TempDir()
	out := filepath.Join(t.TempDir(), "env.txt")
	var summary strings.Builder
	opt := Options{Lib: lib(t), Dir: base, Retain: time.Hour, Recorder: recorder.Options{Period: 100 * time.Millisecond},
		Summary: &summary, Stdout: os.Stdout, Stderr: os.Stderr}
	code, err := Run(context.Background(), []string{"sh", "-c", `echo "$LD_PRELOAD $ROS_PULSE_DIR" > ` + out + `; exit 3`}, opt)
	if err != nil || code != 3 {
		t.Fatalf("code %d err %v", code, err)
	}
	b, _ := os.ReadFile(out)
	fields := strings.Fields(string(b))
	if len(fields) != 2 || !strings.HasSuffix(fields[0], "libros2_pulse.so") || filepath.Dir(fields[1]) != base ||
		!strings.HasPrefix(filepath.Base(fields[1]), segment.RunPrefix) {
		t.Fatalf("command saw %q", b)
	}
	first := fields[1]
	if _, err := os.Stat(filepath.Join(first, segment.RunLock)); err != nil {
		t.Fatalf("the ended run's directory must stay for the other views: %v", err)
	}
	if !strings.Contains(summary.String(), "pulse summary") {
		t.Errorf("summary: %q", summary.String())
	}
	// Within the retention the next run keeps it; past it, the next run removes it.
	if _, err := Run(context.Background(), []string{"true"}, opt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(first); err != nil {
		t.Fatalf("swept within the retention: %v", err)
	}
	opt.Retain = 0
	if _, err := Run(context.Background(), []string{"true"}, opt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Errorf("ended run %s left behind past the retention", first)
	}
	// A run inside a run puts its directory beside its parent's, one level deep.
	run, err := segment.MakeRunDir(base)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if _, err := Run(context.Background(), []string{"sh", "-c", `echo "$ROS_PULSE_DIR" > ` + out}, Options{Lib: lib(t), Dir: run.Path,
		Retain: time.Hour, Recorder: recorder.Options{Period: 100 * time.Millisecond}, Stdout: os.Stdout, Stderr: os.Stderr}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); filepath.Dir(strings.TrimSpace(string(b))) != base {
		t.Errorf("nested run directory %q is not in %s", b, base)
	}
}

// Cancelling the context terminates the command's whole process group.
func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	code, err := Run(ctx, []string{"sh", "-c", "sleep 30 & sleep 30; wait"},
		Options{Lib: lib(t), Dir: t.TempDir(), Recorder: recorder.Options{Period: time.Second}, Stdout: os.Stdout, Stderr: os.Stderr})
	if err != nil || code != 128+15 || time.Since(start) > 5*time.Second {
		t.Fatalf("code %d err %v after %v", code, err, time.Since(start))
	}
}
