// Package locate finds the files pulse ships beside itself: the probe
// library, and for the demo the simulator and its stand-in libtracetools.
package locate

import (
	"fmt"
	"os"
	"path/filepath"
)

// ProbeLibName is the probe's file name.
const ProbeLibName = "libros2_pulse.so"

func exeDir() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return filepath.Dir(exe)
}

func firstExisting(paths []string) (string, error) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return filepath.Abs(p)
		}
	}
	return "", fmt.Errorf("not found in %v", paths)
}

// ProbeLib returns the probe library: $ROS_PULSE_LIB, then ../lib beside the
// pulse binary (a build tree or tarball), then the Debian package's
// ../lib/ros2-pulse, then /usr/local/lib and /usr/lib.
func ProbeLib() (string, error) {
	if p := os.Getenv("ROS_PULSE_LIB"); p != "" {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return "", fmt.Errorf("ROS_PULSE_LIB=%s is not a readable file", p)
		}
		return filepath.Abs(p)
	}
	dir := exeDir()
	p, err := firstExisting([]string{filepath.Join(dir, "..", "lib", ProbeLibName), filepath.Join(dir, ProbeLibName),
		filepath.Join(dir, "..", "lib", "ros2-pulse", ProbeLibName), "/usr/local/lib/" + ProbeLibName, "/usr/lib/" + ProbeLibName})
	if err != nil {
		return "", fmt.Errorf("cannot find %s (set ROS_PULSE_LIB): %w", ProbeLibName, err)
	}
	return p, nil
}

// Beside returns the program name installed beside the pulse binary; hint
// says how to build it when it is missing.
func Beside(name, hint string) (string, error) {
	p, err := firstExisting([]string{filepath.Join(exeDir(), name)})
	if err != nil {
		return "", fmt.Errorf("cannot find %s beside the pulse binary (%s)", name, hint)
	}
	return p, nil
}

// Simgraph returns the simulator: path when given (pulse demo --simgraph),
// else simgraph beside pulse. The Debian package ships no simulator, so an
// installed pulse runs the demo with a build tree's: --simgraph build/bin/simgraph.
func Simgraph(path string) (string, error) {
	if path != "" {
		p, err := firstExisting([]string{path})
		if err != nil {
			return "", fmt.Errorf("--simgraph %s: no such file", path)
		}
		return p, nil
	}
	return Beside("simgraph", "run `make build`; an installed pulse takes a build tree's with --simgraph build/bin/simgraph")
}

// SimTracetoolsDir returns the directory of the stand-in libtracetools for
// distro, in the tree of the simulator sim (../lib/sim/<distro>).
func SimTracetoolsDir(sim, distro string) (string, error) {
	switch distro {
	case "humble", "jazzy", "kilted":
	default:
		return "", fmt.Errorf("unknown distro %q (expected humble, jazzy or kilted)", distro)
	}
	dir := filepath.Join(filepath.Dir(sim), "..", "lib", "sim", distro)
	if _, err := firstExisting([]string{filepath.Join(dir, "libtracetools.so")}); err != nil {
		return "", fmt.Errorf("cannot find the %s stand-in libtracetools beside %s (run `make build`)", distro, sim)
	}
	return filepath.Abs(dir)
}
