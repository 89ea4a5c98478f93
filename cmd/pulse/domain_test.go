package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// domainLocks is where tests on this machine claim ROS domains: one lock
// file per domain, shared by every test binary of every clone.
const domainLocks = "/tmp/ros2_pulse-test-domains"

// testDomain gives the calling test a ROS domain that no other test, test
// binary or clone on this machine uses while it runs: it holds an exclusive
// flock on domainLocks/<id>.lock until the test ends (the kernel drops it if
// the binary dies). Domain 0 (everyone's default) and this environment's
// ROS_DOMAIN_ID are never given. DDS maps a domain to UDP ports
// 7400 + 250 x id, so ids stop at 232.
func testDomain(t *testing.T) int {
	t.Helper()
	if err := os.MkdirAll(domainLocks, 0o777); err != nil {
		t.Fatalf("domain locks: %v", err)
	}
	_ = os.Chmod(domainLocks, 0o777|os.ModeSticky) // other users' tests share it
	mine, _ := strconv.Atoi(os.Getenv("ROS_DOMAIN_ID"))
	const first, last = 1, 232
	start := first + os.Getpid()%(last-first+1) // spread concurrent binaries out
	for i := 0; i <= last-first; i++ {
		id := first + (start-first+i)%(last-first+1)
		if id == mine {
			continue
		}
		f, err := os.OpenFile(filepath.Join(domainLocks, fmt.Sprintf("%d.lock", id)), os.O_RDWR|os.O_CREATE, 0o666)
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
	t.Fatalf("every ROS domain 1-232 is claimed in %s", domainLocks)
	return 0
}
