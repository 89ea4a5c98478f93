package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// graphMsg is one line of discovery_sub: a ros_discovery_info sample or a
// DCPSPublication built-in topic sample.
type graphMsg struct {
	Topic, Gid, Raw string
	Nodes           []struct {
		Namespace, Name  string
		Readers, Writers []string
	}
	Key, Participant string
	// the writer of a --raw sample and its participant (sub_common.h)
	Writer              string
	WriterParticipant   string `json:"writer_participant"`
	TopicName, TypeName string `json:"-"`
	Reliable            bool
	Durability          int
	KeepLast            int `json:"keep_last"`
}

func (m *graphMsg) UnmarshalJSON(b []byte) error {
	type plain graphMsg
	var names struct {
		TopicName string `json:"topic_name"`
		TypeName  string `json:"type_name"`
	}
	if err := json.Unmarshal(b, (*plain)(m)); err != nil {
		return err
	}
	if err := json.Unmarshal(b, &names); err != nil {
		return err
	}
	m.TopicName, m.TypeName = names.TopicName, names.TypeName
	return nil
}

// readGraph runs the test's ROS graph reader for gidSize-byte GIDs (its own
// types, from bridge/test/ros_discovery_test.idl) for d.
func readGraph(t *testing.T, env []string, gidSize int, d time.Duration, raw bool) []graphMsg {
	t.Helper()
	args := []string{fmt.Sprint(d.Seconds())}
	if raw {
		args = append(args, "--raw")
	}
	cmd := exec.Command(testBin(t, fmt.Sprintf("discovery_sub_%d", gidSize)), args...)
	cmd.Env = env
	return runLines[graphMsg](t, cmd)
}

// The bridge is a node of the graph as rmw makes one: its ros_discovery_info
// sample, decoded by a reader of the distro's layout, names the node and
// lists as its writers exactly the GUIDs (zero-padded to the distro's GID
// size) of the bridge's /statistics and /diagnostics writers as the
// DCPSPublication built-in topic shows them, under the participant that
// owns them. A reader of the other layout does not find the node.
func TestBridgeIsANode(t *testing.T) {
	pulse := needBridge(t)
	for _, tc := range []struct {
		distro        string
		gid, otherGID int
	}{{"humble", 24, 16}, {"jazzy", 16, 24}} {
		t.Run(tc.distro, func(t *testing.T) {
			env := append(os.Environ(), "CYCLONEDDS_URI="+loopbackDDS(t, t.TempDir()), "ROS_PULSE_DIR="+t.TempDir(),
				"ROS_LOCALHOST_ONLY=", "ROS_AUTOMATIC_DISCOVERY_RANGE=", "ROS_STATIC_PEERS=",
				fmt.Sprintf("ROS_DOMAIN_ID=%d", testDomain(t)))
			br := exec.Command(pulse, "bridge", "--distro", tc.distro, "--node-name", "/robot1/pulse_bridge", "--for", "8s")
			br.Env = env
			var stderr bytes.Buffer
			br.Stderr = &stderr
			if err := br.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { br.Process.Signal(os.Interrupt); br.Wait() }()
			other := make(chan []graphMsg)
			go func() { other <- readGraph(t, env, tc.otherGID, 3*time.Second, false) }()
			msgs := readGraph(t, env, tc.gid, 3*time.Second, false)
			pad := func(guid string) string { return guid + strings.Repeat("00", tc.gid-16) }

			var participant string
			var writers []string
			var info *graphMsg
			for i, m := range msgs {
				switch {
				case m.Topic == "DCPSPublication" && (m.TopicName == "rt/statistics" || m.TopicName == "rt/diagnostics"):
					writers = append(writers, pad(m.Key))
					participant = m.Participant
				case m.Topic == "DCPSPublication" && m.TopicName == "ros_discovery_info":
					// rmw_cyclonedds' writer: reliable, transient-local, keep-last 1, rmw's type name.
					if !m.Reliable || m.Durability != 1 || m.KeepLast != 1 || m.TypeName != "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_" {
						t.Errorf("the ros_discovery_info writer: %+v", m)
					}
				case m.Topic == "ros_discovery_info":
					info = &msgs[i]
				}
			}
			if len(writers) != 2 || info == nil {
				t.Fatalf("want 2 bridge writers and a ros_discovery_info sample; read:\n%+v\nbridge: %s", msgs, stderr.String())
			}
			if info.Gid != pad(participant) || len(info.Gid) != 2*tc.gid {
				t.Errorf("participant gid %s, want the writers' participant %s in %d bytes", info.Gid, participant, tc.gid)
			}
			if len(info.Nodes) != 1 || info.Nodes[0].Namespace != "/robot1" || info.Nodes[0].Name != "pulse_bridge" ||
				len(info.Nodes[0].Readers) != 0 {
				t.Fatalf("nodes: %+v", info.Nodes)
			}
			got := slices.Clone(info.Nodes[0].Writers)
			slices.Sort(got)
			slices.Sort(writers)
			if !slices.Equal(got, writers) {
				t.Errorf("the node's writers %v, want the bridge's DCPSPublication GUIDs %v", got, writers)
			}
			// A reader of the other layout refuses the sample (24 read as 16 is
			// too short) or misreads it (16 read as 24: the padding is taken
			// for an empty node list); either way it never sees the node.
			for _, m := range <-other {
				if m.Topic == "ros_discovery_info" && len(m.Nodes) > 0 {
					t.Errorf("a reader of %d-byte GIDs found nodes in the %s layout: %+v", tc.otherGID, tc.distro, m)
				}
			}
			if want := fmt.Sprintf("pulse bridge: node /robot1/pulse_bridge (ros_discovery_info, %d-byte GIDs)", tc.gid); !strings.Contains(stderr.String(), want) {
				t.Errorf("the start line does not say %q:\n%s", want, stderr.String())
			}
		})
	}
}

// A node name rmw would refuse stops the bridge with one clear line.
func TestBridgeNodeNameInput(t *testing.T) {
	pulse := needBridge(t)
	for _, name := range []string{"/9lives", "/robot/", "/ro-bot/pulse"} {
		c := exec.Command(pulse, "bridge", "--node-name", name, "--for", "1s")
		c.Env = append(os.Environ(), "ROS_PULSE_DIR="+t.TempDir())
		out, err := c.CombinedOutput()
		if exitCode(err) != 2 || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 ||
			!strings.Contains(string(out), fmt.Sprintf("--node-name %q", name)) {
			t.Errorf("--node-name %s: exit %d\n%s", name, exitCode(err), out)
		}
	}
}

// goldenHex reads a hand-written encoding from bridge/testdata: hex bytes,
// '#' comments.
func goldenHex(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../bridge/testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		want.WriteString(strings.Join(strings.Fields(line), ""))
	}
	if _, err := hex.DecodeString(want.String()); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return want.String()
}

// ros_discovery_info on the wire, in both layouts, equals the hand-checked
// encodings of bridge/testdata. The test reads only what its own bridge
// wrote, on a domain no other test holds (testDomain): the samples of the
// ros_discovery_info writer whose participant also owns the bridge's
// rt/statistics writer. A reader that joins before the golden sample was
// written also gets the bridge's own first sample (keep-last 1 bounds the
// writer's history, not what a matched reader already has): the writer's
// last sample is the one judged.
func TestBridgeGoldenEntitiesInfo(t *testing.T) {
	pulse := needBridge(t)
	for distro, gid := range map[string]int{"humble": 24, "jazzy": 16} {
		env := append(os.Environ(), "CYCLONEDDS_URI="+loopbackDDS(t, t.TempDir()), "ROS_PULSE_DIR="+t.TempDir(),
			fmt.Sprintf("ROS_DOMAIN_ID=%d", testDomain(t)))
		br := exec.Command(pulse, "bridge", "--golden", "--distro", distro, "--for", "5s")
		br.Env = env
		if err := br.Start(); err != nil {
			t.Fatal(err)
		}
		msgs := readGraph(t, env, gid, 2*time.Second, true)
		br.Process.Signal(os.Interrupt)
		br.Wait()
		bridges, infoWriters := map[string]bool{}, map[string]bool{}
		for _, m := range msgs {
			if m.Topic == "DCPSPublication" && m.TopicName == "rt/statistics" {
				bridges[m.Participant] = true
			}
		}
		if len(bridges) != 1 {
			t.Fatalf("%s: want the test's one bridge on its domain, found %d participants with rt/statistics: %+v", distro, len(bridges), msgs)
		}
		var raws []string
		for _, m := range msgs {
			if m.Raw == "" {
				continue
			}
			if !bridges[m.WriterParticipant] {
				t.Errorf("%s: a ros_discovery_info sample from writer %s of participant %s, not the test's bridge", distro, m.Writer, m.WriterParticipant)
				continue
			}
			infoWriters[m.Writer] = true
			raws = append(raws, m.Raw)
		}
		if len(infoWriters) != 1 || len(raws) == 0 || len(raws) > 2 {
			t.Fatalf("%s: want 1-2 samples of the bridge's one ros_discovery_info writer, got %d from %d writers", distro, len(raws), len(infoWriters))
		}
		if want := goldenHex(t, "entities_info_"+distro+".cdr.txt"); raws[len(raws)-1] != want {
			t.Errorf("%s ros_discovery_info on the wire (the writer's last sample of %d):\n got %s\nwant %s", distro, len(raws), raws[len(raws)-1], want)
		}
	}
}
