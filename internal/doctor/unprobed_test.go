package doctor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// What makes the loader ignore LD_PRELOAD is read from the executable: its
// set-user-ID or set-group-ID bit, or file capabilities (setcap, as a
// realtime node is given cap_sys_nice).
func TestSecureExec(t *testing.T) {
	dir := t.TempDir()
	exe := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		path, want string
	}{
		{exe("plain", 0o755), ""},
		{exe("suid", 0o755|os.ModeSetuid), "set-user-ID"},
		{exe("sgid", 0o755|os.ModeSetgid), "set-group-ID"},
		{filepath.Join(dir, "missing"), ""},
	} {
		if got := secureExec(c.path); got != c.want {
			t.Errorf("%s: %q, want %q", c.path, got, c.want)
		}
	}
	setcap, err := exec.LookPath("setcap")
	if err != nil || os.Geteuid() != 0 {
		t.Logf("file capabilities not tried: setcap needs root and libcap2-bin (%v)", err)
		return
	}
	p := exe("rt", 0o755)
	if out, err := exec.Command(setcap, "cap_sys_nice+ep", p).CombinedOutput(); err != nil {
		t.Fatalf("setcap: %v: %s", err, out)
	}
	if got := secureExec(p); !strings.HasPrefix(got, "file capabilities") {
		t.Errorf("an executable with cap_sys_nice: %q", got)
	}
}

func TestIsLaunchAndPreload(t *testing.T) {
	for argv, want := range map[string]bool{
		"/usr/bin/python3 /opt/ros/jazzy/bin/ros2 launch pkg x.launch.py": true,
		"ros2 --use-python-default-buffering launch pkg x.launch.py":      true,
		"ros2 run pkg node":                        false,
		"/usr/bin/python3 /opt/ros/jazzy/bin/ros2": false,
		"/opt/ros/jazzy/lib/pkg/launch":            false,
	} {
		if got := isLaunch(strings.Fields(argv)); got != want {
			t.Errorf("%q: %v", argv, got)
		}
	}
	for v, want := range map[string]bool{
		"/usr/lib/ros2-pulse/libros2_pulse.so": true, "/a.so:/b/libros2_pulse.so": true, "/a.so /b/libros2_pulse.so": true,
		"": false, "libm.so.6": false, "/x/libros2_pulse_other.txt/a.so": false,
	} {
		if got := preloadsProbe(v); got != want {
			t.Errorf("LD_PRELOAD=%q: %v", v, got)
		}
	}
}
