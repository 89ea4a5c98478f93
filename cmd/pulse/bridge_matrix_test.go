package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rmwCyclone is the CycloneDDS configuration an rmw_cyclonedds node builds
// for a row's environment, written out by hand from rmw_cyclonedds_cpp
// src/rmw_node.cpp, check_create_domain (humble and jazzy branches), with the
// discovery options rcl derives on Jazzy (rcl src/rcl/init.c, localhost.c,
// discovery_options.c). It deliberately does not call the bridge's code: the
// subscriber stands where a ROS node stands. The node's configuration is
// this fragment followed by CYCLONEDDS_URI.
const (
	// Humble, ROS_LOCALHOST_ONLY=1: the domain on the loopback interface.
	humbleLocalhostFragment = `<CycloneDDS><Domain><General><Interfaces><NetworkInterface address="127.0.0.1"/></Interfaces></General></Domain></CycloneDDS>,`
	// Jazzy, range LOCALHOST (or the deprecated ROS_LOCALHOST_ONLY=1): no
	// multicast, automatic participant indexes, localhost as a static peer.
	jazzyLocalhostFragment     = `<CycloneDDS><Domain><General><AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex><Peers><Peer address="localhost"/></Peers></Discovery></Domain></CycloneDDS>,`
	jazzyLocalhostPeerFragment = `<CycloneDDS><Domain><General><AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex><Peers><Peer address="localhost"/><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>,`
	// Jazzy, range SUBNET: multicast as CycloneDDS does it, the static peers added.
	jazzySubnetFragment     = `<CycloneDDS><Domain><Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex></Discovery></Domain></CycloneDDS>,`
	jazzySubnetPeerFragment = `<CycloneDDS><Domain><Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex><Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>,`
)

// jazzyOffFragment: range OFF, no multicast, a tag of the node's own pid (so
// no other process discovers it), peers ignored.
func jazzyOffFragment(pid int) string {
	return fmt.Sprintf(`<CycloneDDS><Domain><General><AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>none</ParticipantIndex><Tag>ros_discovery_off_%d</Tag></Discovery></Domain></CycloneDDS>,`, pid)
}

// multicastInterface reports whether the host has an interface other than
// loopback that is up and can multicast (what the default ranges use).
func multicastInterface() bool {
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagMulticast != 0 && i.Flags&net.FlagLoopback == 0 {
			return true
		}
	}
	return false
}

// rosEnv is this environment on ROS domain `domain` with every discovery
// setting cleared: a row adds its own.
func rosEnv(domain string) []string {
	env := append(os.Environ(), "ROS_DOMAIN_ID="+domain)
	for _, k := range []string{"CYCLONEDDS_URI", "ROS_LOCALHOST_ONLY", "ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_STATIC_PEERS"} {
		env = append(env, k+"=")
	}
	return env
}

// loopbackMulticastNamespace makes a network namespace whose loopback can
// multicast (as a host configured for localhost-only ROS has it), removed
// when the test ends, and returns the command prefix that runs in it; nil
// where namespaces cannot be made (not root, no ip).
func loopbackMulticastNamespace(t *testing.T) []string {
	if os.Geteuid() != 0 {
		return nil
	}
	name := fmt.Sprintf("pulse-lo-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Logf("ip netns add: %v %s", err, out)
		return nil
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	for _, args := range [][]string{{"link", "set", "lo", "up"}, {"link", "set", "lo", "multicast", "on"}, {"route", "add", "224.0.0.0/4", "dev", "lo"}} {
		mustRun(t, append([]string{"ip", "-n", name}, args...)...)
	}
	return []string{"ip", "netns", "exec", name}
}

// mustRun runs a command, failing the test with its output.
func mustRun(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// subscribeIn runs dds_sub under the command prefix wrap (none: here).
func subscribeIn(t *testing.T, wrap []string, env []string, d time.Duration) []subMsg {
	t.Helper()
	if wrap == nil {
		return subscribe(t, env, d, false)
	}
	return runSubscriber(t, env, wrap[0], append(wrap[1:], testBin(t, "dds_sub"), fmt.Sprint(d.Seconds()))...)
}

// pulse bridge is heard by a node that configures CycloneDDS by
// rmw_cyclonedds' rules, in every discovery setup Humble and Jazzy offer:
// /statistics rates within 2 % of the graph, or, where the range makes two
// participants on one host deaf to each other by design (OFF), nothing and
// no error.
func TestBridgeDiscoveryMatrix(t *testing.T) {
	needBridge(t)
	dir := t.TempDir()
	// The usual file of a host whose loopback has no multicast (and of
	// containers): no multicast, automatic participant indexes, the unicast
	// peer 127.0.0.1. It names no interface: with ROS_LOCALHOST_ONLY=1 Humble's
	// rmw names 127.0.0.1, and CycloneDDS refuses an interface named twice.
	noMulticastPath := filepath.Join(dir, "no-multicast.xml")
	os.WriteFile(noMulticastPath, []byte(`<CycloneDDS><Domain id="any"><General><AllowMulticast>false</AllowMulticast></General>`+
		`<Discovery><ParticipantIndex>auto</ParticipantIndex><Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>`), 0o600)
	noMulticast := "file://" + noMulticastPath
	graph, segs := startGraph(t, dir, "demo", "200")
	truth := sampleTruth(t, dir)
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()
	// The graph's processes start and their publishers send their first
	// message a period after creation: the first row's windows would cover
	// that start-up, which is not a rate.
	time.Sleep(3 * time.Second)
	loMulticast := false
	if ifc, err := net.InterfaceByName("lo"); err == nil {
		loMulticast = ifc.Flags&net.FlagMulticast != 0
	}
	subPid := os.Getpid() // OFF rows: the tag is the node's own pid; any pid but the bridge's stands for it
	rows := []struct {
		name, distro string
		env          []string
		fragment     func() string
		heard        bool
		needs        string // "multicast" on a non-loopback interface, or "lo-multicast"
	}{
		{"humble default", "humble", nil, func() string { return "" }, true, "multicast"},
		{"humble default, no-multicast file", "humble", []string{"CYCLONEDDS_URI=" + noMulticast}, func() string { return "" }, true, ""},
		{"humble LOCALHOST_ONLY=0", "humble", []string{"ROS_LOCALHOST_ONLY=0"}, func() string { return "" }, true, "multicast"},
		{"humble LOCALHOST_ONLY=0, no-multicast file", "humble", []string{"ROS_LOCALHOST_ONLY=0", "CYCLONEDDS_URI=" + noMulticast},
			func() string { return "" }, true, ""},
		{"humble LOCALHOST_ONLY=1", "humble", []string{"ROS_LOCALHOST_ONLY=1"}, func() string { return humbleLocalhostFragment }, true, "lo-multicast"},
		{"humble LOCALHOST_ONLY=1, no-multicast file", "humble", []string{"ROS_LOCALHOST_ONLY=1", "CYCLONEDDS_URI=" + noMulticast},
			func() string { return humbleLocalhostFragment }, true, ""},
		{"jazzy LOCALHOST", "jazzy", []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"}, func() string { return jazzyLocalhostFragment }, true, ""},
		{"jazzy LOCALHOST, peer", "jazzy", []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST", "ROS_STATIC_PEERS=127.0.0.1"},
			func() string { return jazzyLocalhostPeerFragment }, true, ""},
		{"jazzy SUBNET", "jazzy", []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET"}, func() string { return jazzySubnetFragment }, true, "multicast"},
		{"jazzy SUBNET, peer", "jazzy", []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET", "ROS_STATIC_PEERS=127.0.0.1"},
			func() string { return jazzySubnetPeerFragment }, true, "multicast"},
		{"jazzy OFF", "jazzy", []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=OFF"}, func() string { return jazzyOffFragment(subPid) }, false, ""},
		{"jazzy OFF, peer", "jazzy", []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=OFF", "ROS_STATIC_PEERS=127.0.0.1"},
			func() string { return jazzyOffFragment(subPid) }, false, ""},
		{"jazzy deprecated LOCALHOST_ONLY=1", "jazzy", []string{"ROS_LOCALHOST_ONLY=1"}, func() string { return jazzyLocalhostFragment }, true, ""},
	}
	want := []string{"/scan", "/camera/image", "/cmd_vel", "/tf", "/odom"}
	for _, r := range rows {
		t.Run(strings.NewReplacer(" ", "_", ",", "").Replace(r.name), func(t *testing.T) {
			var wrap []string // a command prefix that runs both participants in a namespace
			switch {
			case r.needs == "multicast" && !multicastInterface():
				t.Skip("this host has no multicast interface besides loopback: the default range cannot discover here")
			case r.needs == "lo-multicast" && !loMulticast:
				if wrap = loopbackMulticastNamespace(t); wrap == nil {
					t.Skip("loopback has no multicast on this host, and a network namespace whose loopback has it needs root: " +
						"ROS nodes bound to 127.0.0.1 without peers cannot discover each other here either")
				}
			}
			base := rosEnv(fmt.Sprint(testDomain(t)))
			user := append(append([]string(nil), base...), r.env...)
			brErr := startBridge(t, wrap, append(user, "ROS_PULSE_DIR="+segs), "--distro", r.distro, "--period", "2s", "--statistics")
			// The subscriber: the same user environment, configured by the table.
			uri := ""
			for _, kv := range r.env {
				if v, ok := strings.CutPrefix(kv, "CYCLONEDDS_URI="); ok {
					uri = v
				}
			}
			// 7 s: three 2 s windows, so one message more or less is under
			// 2 % of a 10 Hz topic.
			msgs := subscribeIn(t, wrap, append(base, "CYCLONEDDS_URI="+r.fragment()+uri), 7*time.Second)
			if !r.heard {
				if len(msgs) != 0 || strings.Contains(brErr.String(), "error") {
					t.Errorf("OFF: received %d messages (want none, by design); bridge stderr:\n%s", len(msgs), brErr.String())
				}
				return
			}
			// every 2 s window received, to the message, against what the graph did in it
			for _, p := range truth.judgeStatistics(msgs, want, 2) {
				t.Errorf("%s; %d messages\nbridge stderr:\n%s", p, len(msgs), brErr.String())
			}
		})
	}
}

// Bad discovery input: what rcl warns about gets its warning and its
// fallback, once; what stops a ROS node stops the bridge with one line and
// exit 2. The start line says where each setting came from.
func TestBridgeDiscoveryInput(t *testing.T) {
	pulse, _, _ := bin(t)
	run := func(env ...string) (int, string) {
		c := exec.Command(pulse, "bridge", "--distro", "jazzy", "--for", "1s", "--period", "500ms")
		c.Env = append(os.Environ(), append([]string{"ROS_PULSE_DIR=" + t.TempDir(), "CYCLONEDDS_URI=", "ROS_LOCALHOST_ONLY=",
			"ROS_AUTOMATIC_DISCOVERY_RANGE=", "ROS_STATIC_PEERS=", fmt.Sprintf("ROS_DOMAIN_ID=%d", testDomain(t))}, env...)...)
		out, err := c.CombinedOutput()
		return exitCode(err), string(out)
	}
	code, out := run("ROS_AUTOMATIC_DISCOVERY_RANGE=everywhere", "ROS_STATIC_PEERS=127.0.0.1;"+strings.Repeat("p", 300))
	if code != 0 || strings.Count(out, "Invalid value 'everywhere' specified for 'ROS_AUTOMATIC_DISCOVERY_RANGE', assuming localhost only") != 1 ||
		strings.Count(out, "specified to 'ROS_STATIC_PEERS' is too long (maximum of 255); skipping") != 1 ||
		!strings.Contains(out, "jazzy rules (from --distro); discovery range LOCALHOST (from ROS_AUTOMATIC_DISCOVERY_RANGE (invalid)); static peers 127.0.0.1 (from ROS_STATIC_PEERS)") {
		t.Errorf("an unknown range and an overlong peer: exit %d\n%s", code, out)
	}
	if code, out = run("CYCLONEDDS_URI=file:///nonexistent/cyclonedds.xml"); code != 2 ||
		strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "CYCLONEDDS_URI names /nonexistent/cyclonedds.xml") {
		t.Errorf("a missing CYCLONEDDS_URI file: exit %d\n%s", code, out)
	}
	if code, out = run("ROS_DOMAIN_ID=300"); code != 2 || !strings.Contains(out, `ROS_DOMAIN_ID="300": must be a whole number from 0 to 232`) {
		t.Errorf("a bad ROS_DOMAIN_ID: exit %d\n%s", code, out)
	}
}

// pulse doctor shows how a running bridge joined the graph: the same
// warnings and start line it printed; nothing once it stopped.
func TestDoctorShowsTheBridge(t *testing.T) {
	pulse, _, _ := bin(t)
	dir := t.TempDir()
	br := exec.Command(pulse, "bridge", "--distro", "jazzy", "--for", "3s", "--dir", dir)
	br.Env = append(os.Environ(), "ROS_AUTOMATIC_DISCOVERY_RANGE=bogus", "ROS_STATIC_PEERS=", "ROS_LOCALHOST_ONLY=", "CYCLONEDDS_URI=",
		fmt.Sprintf("ROS_DOMAIN_ID=%d", testDomain(t)))
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	doctor := func() string {
		out, _ := pulseCmd(t, "doctor", "--dir", dir).Output()
		return string(out)
	}
	var out string
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if out = doctor(); strings.Contains(out, "bridge pid") {
			break
		}
	}
	want := fmt.Sprintf("bridge pid %d running: Invalid value 'bogus' specified for 'ROS_AUTOMATIC_DISCOVERY_RANGE', assuming localhost only", br.Process.Pid)
	if !strings.Contains(out, want) || !strings.Contains(out, "jazzy rules (from --distro); discovery range LOCALHOST") {
		t.Errorf("doctor while the bridge runs:\n%s", out)
	}
	br.Wait()
	if out = doctor(); strings.Contains(out, "bridge pid") {
		t.Errorf("doctor after the bridge stopped:\n%s", out)
	}
}

// pulse bridge is heard by a real Fast DDS subscriber configured as an
// rmw_fastrtps node of each row (bridge/test/fastdds_sub.cpp holds that
// table, cited from rmw_fastrtps_shared_cpp src/participant.cpp): it
// receives /diagnostics, and /statistics with rates within 2 % of the graph.
// The rows run side by side, each in its own domain. A Fast DDS node only
// learns of the bridge from the bridge's own periodic SPDP (every 8 s) where
// it cannot multicast to it, so each subscriber listens 14 s.
func TestBridgeFastDDS(t *testing.T) {
	needBridge(t)
	if _, err := os.Stat(testBin(t, "fastdds_sub")); err != nil {
		t.Fatal("fastdds_sub is not built: apt-get install libfastrtps-dev fastddsgen g++, then make bridge")
	}
	dir := t.TempDir()
	graph, segs := startGraph(t, dir, "demo", "200")
	truth := sampleTruth(t, dir)
	defer func() { graph.Process.Signal(os.Interrupt); graph.Wait() }()
	time.Sleep(3 * time.Second) // past the graph's start-up, as in TestBridgeDiscoveryMatrix
	rows := []struct {
		name, distro, profile string
		env                   []string // the same for the ROS node and the bridge: the user's environment
		needs                 string
	}{
		{"default", "humble", "default", nil, "multicast"},
		{"humble LOCALHOST_ONLY=1", "humble", "humble-localhost", []string{"ROS_LOCALHOST_ONLY=1"}, ""},
		{"jazzy LOCALHOST", "jazzy", "jazzy-localhost", []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"}, ""},
	}
	want := []string{"/scan", "/camera/image", "/cmd_vel", "/tf", "/odom"}
	// The group waits for its parallel rows, so the graph outlives them.
	t.Run("rows", func(t *testing.T) {
		for _, r := range rows {
			t.Run(strings.NewReplacer(" ", "_", "=", "").Replace(r.name), func(t *testing.T) {
				t.Parallel()
				if r.needs == "multicast" && !multicastInterface() {
					t.Skip("this host has no multicast interface besides loopback: the default range cannot discover here")
				}
				user := append(rosEnv(fmt.Sprint(testDomain(t))), r.env...)
				brErr := startBridge(t, nil, append(user, "ROS_PULSE_DIR="+segs), "--distro", r.distro, "--period", "2s")
				msgs := runSubscriber(t, user, testBin(t, "fastdds_sub"), "14", r.profile)
				diagnostics := 0
				for _, m := range msgs {
					if m.Topic == "diagnostics" && len(m.Status) > 0 {
						diagnostics++
					}
				}
				if diagnostics == 0 {
					t.Errorf("no /diagnostics received; %d messages\nbridge stderr:\n%s", len(msgs), brErr.String())
				}
				for _, p := range truth.judgeStatistics(msgs, want, 2) {
					t.Errorf("%s; %d messages\nbridge stderr:\n%s", p, len(msgs), brErr.String())
				}
			})
		}
	})
}
