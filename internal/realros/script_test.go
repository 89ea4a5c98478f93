package realros

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrefixProblemsInOneLine: scripts/test-ros.sh on a prefix that is
// missing, is not a ROS install, fails when sourced, or is of a distro pulse
// does not know: one line saying what is wrong, exit 2 (make test-ros), or
// "skipped" and exit 0 (make test's short lane). No ROS needed.
func TestPrefixProblemsInOneLine(t *testing.T) {
	dir := t.TempDir()
	mk := func(name, setup string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if setup != "" {
			if err := os.WriteFile(filepath.Join(p, "setup.bash"), []byte(setup), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	cases := []struct{ prefix, want string }{
		{filepath.Join(dir, "absent"), "no such directory"},
		{mk("empty", ""), "no setup.bash there"},
		{mk("broken", "return 1\n"), "fails when sourced"},
		{mk("rolling", "export ROS_DISTRO=rolling\n"), "distro 'rolling' is not one pulse supports"},
		{mk("nodistro", "true\n"), "sets no ROS_DISTRO and it has no rclcpp of a known distro"},
		{mk("notracetools", "export ROS_DISTRO=humble\n"), "no lib/libtracetools.so"},
	}
	for _, c := range cases {
		for _, short := range []bool{false, true} {
			args := []string{"../../scripts/test-ros.sh"}
			if short {
				args = append(args, "--short")
			}
			cmd := exec.Command("bash", args...)
			cmd.Env = append(os.Environ(), "ROS_PREFIX="+c.prefix)
			out, err := cmd.CombinedOutput()
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			code := 0
			if e, ok := err.(*exec.ExitError); ok {
				code = e.ExitCode()
			}
			wantCode, wantWord := 2, "test-ros: "
			if short {
				wantCode, wantWord = 0, "test-ros: skipped: "
			}
			if code != wantCode || len(lines) != 1 || !strings.HasPrefix(lines[0], wantWord) || !strings.Contains(lines[0], c.want) {
				t.Errorf("%s (short %v): exit %d, said %q; want exit %d and one line with %q", filepath.Base(c.prefix), short, code, out,
					wantCode, c.want)
			}
		}
	}
}
