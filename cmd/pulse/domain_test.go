package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// claimsDir is where tests on this machine claim what must not be shared
// while they run (ROS domains, the fleet's subnets): one lock file per id,
// shared by every test binary of every clone.
const claimsDir = "/tmp/ros2_pulse-test-claims"

// claim gives the calling test an id of kind in [first, last] that no other
// test, test binary or clone on this machine holds while it runs: an
// exclusive flock on claimsDir/KIND-ID.lock, held until the test ends (the
// kernel drops it if the binary dies). Ids for which skip is true are never
// given.
func claim(t *testing.T, kind string, first, last int, skip func(int) bool) int {
	t.Helper()
	if err := os.MkdirAll(claimsDir, 0o777); err != nil {
		t.Fatalf("test claims: %v", err)
	}
	_ = os.Chmod(claimsDir, 0o777|os.ModeSticky) // other users' tests share it
	n := last - first + 1
	start := os.Getpid() % n // spread concurrent binaries out
	for i := 0; i < n; i++ {
		id := first + (start+i)%n
		if skip != nil && skip(id) {
			continue
		}
		f, err := os.OpenFile(filepath.Join(claimsDir, fmt.Sprintf("%s-%d.lock", kind, id)), os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			continue // another user's lock file we cannot open: theirs
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
			f.Close()
			continue
		}
		t.Cleanup(func() { f.Close() })
		return id
	}
	t.Fatalf("every %s %d-%d is claimed in %s", kind, first, last, claimsDir)
	return 0
}

// testDomain gives the calling test a ROS domain no other test, test binary
// or clone on this machine uses while it runs. Domain 0 (everyone's default)
// and this environment's ROS_DOMAIN_ID are never given. DDS maps a domain to
// UDP ports 7400 + 250 x id, so ids stop at 232.
func testDomain(t *testing.T) int {
	t.Helper()
	mine, err := strconv.Atoi(os.Getenv("ROS_DOMAIN_ID"))
	if err != nil {
		mine = 0
	}
	return claim(t, "ros-domain", 1, 232, func(id int) bool { return id == mine })
}
