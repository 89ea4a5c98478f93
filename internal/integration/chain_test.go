package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/simtruth"
	"ros2_pulse/internal/window"
)

// chainExpect is sim/graphs/chain.graph: a pipeline whose middle nodes
// publish inside their subscription callbacks (relay=), and a camera branch
// with one hop intra-process joining the planner.
func chainExpect(distro string) map[string]expect {
	return map[string]expect{
		"/sensing/points":            {pubInter: 10, recvInter: 10},
		"/perception/filtered":       {pubInter: 10, recvInter: 10},
		"/perception/objects":        {pubInter: 10, recvInter: 10},
		"/planning/trajectory":       {pubInter: 10, recvInter: 10},
		"/control/cmd_vel":           {pubInter: 10, recvInter: 10},
		"/control/status":            {pubInter: 4},
		"/sensing/image":             {pubInter: 30, recvInter: 30},
		"/perception/camera_objects": {pubIntra: intraSeen(distro, 30), recvIntra: 30},
		"/perception/camera_tracks":  {pubInter: 30, recvInter: 30},
	}
}

// The stand-in's pipeline (issue 47's proof graph): pulse counts every
// relayed message exactly, and the graph's own truth is a chain: every relay
// published exactly what its callback received, and each message's age
// since its chain began grows by at least each relay's callback cost.
func TestAccuracyChain(t *testing.T) {
	for _, distro := range []string{"jazzy", "humble"} {
		t.Run(distro, func(t *testing.T) {
			g := sim(t, "chain", distro, 6*time.Second)
			rec := newRecorder(t, g.dir, time.Second, window.Options{})
			ws := record(t, g, rec, time.Second)
			g.wait()
			if len(ws) < 3 {
				t.Fatalf("only %d windows", len(ws))
			}
			for _, p := range accuracyProblems(t, g, ws, chainExpect(distro)) {
				t.Error(p)
			}
			for _, p := range chainProblems(g.truth()) {
				t.Error(p)
			}
		})
	}
}

// relays are chain.graph's links: node, input topic, output topic, the
// input callback's cost (ms).
var relays = []struct {
	node, in, out string
	costMs        float64
}{
	{"/perception/filter", "/sensing/points", "/perception/filtered", 2},
	{"/perception/detector", "/perception/filtered", "/perception/objects", 3},
	{"/perception/camera_detector", "/sensing/image", "/perception/camera_objects", 1},
	{"/perception/camera_tracker", "/perception/camera_objects", "/perception/camera_tracks", 1},
	{"/planning/planner", "/perception/objects", "/planning/trajectory", 4},
	{"/control/controller", "/planning/trajectory", "/control/cmd_vel", 1},
}

// chainProblems checks the graph's own truth once every process exited:
// each relay published what its callback received, and the age of the
// messages a subscription received since their chain's first publish is at
// least the relays' costs before it.
func chainProblems(truth *simtruth.Snapshot) []string {
	var bad []string
	for _, p := range truth.Procs {
		if !p.Exited {
			bad = append(bad, fmt.Sprintf("%s (pid %d) did not exit normally: its counts are not final", p.Process, p.Pid))
		}
	}
	find := func(kind, node, topic string) ([4]uint64, simtruth.Timing, bool) {
		for k, c := range truth.Counts {
			if k.Kind == kind && k.Node == node && k.Topic == topic {
				return c, truth.Timing[k], true
			}
		}
		return [4]uint64{}, simtruth.Timing{}, false
	}
	// The least age a message of each topic can have when taken: the costs of the relays upstream.
	least := map[string]float64{"/sensing/points": 0, "/sensing/image": 0}
	for _, r := range relays { // in upstream order
		least[r.out] = least[r.in] + r.costMs
		sub, _, ok1 := find("sub", r.node, r.in)
		pub, _, ok2 := find("pub", r.node, r.out)
		if !ok1 || !ok2 {
			bad = append(bad, fmt.Sprintf("%s: no truth of its subscription to %s or its publisher of %s", r.node, r.in, r.out))
			continue
		}
		received := sub[simtruth.SubInter] + sub[simtruth.SubIntra]
		published := max(pub[simtruth.PubInter], pub[simtruth.PubIntra]) // an intra node counts every publish intra
		if received == 0 || published != received {
			bad = append(bad, fmt.Sprintf("%s: received %d on %s, published %d on %s", r.node, received, r.in, published, r.out))
		}
	}
	for k, tm := range truth.Timing {
		if k.Kind != "sub" || !strings.HasPrefix(k.Node, "/") {
			continue
		}
		want, chained := least[k.Topic]
		if !chained {
			continue // /parameter_events and the like
		}
		c := truth.Counts[k]
		if tm.E2EN != c[simtruth.SubInter]+c[simtruth.SubIntra] {
			bad = append(bad, fmt.Sprintf("%s %s: %d ages for %d messages delivered", k.Node, k.Topic, tm.E2EN, c[simtruth.SubInter]+c[simtruth.SubIntra]))
			continue
		}
		if mean := float64(tm.E2ENs) / float64(max(tm.E2EN, 1)) / 1e6; mean < want || float64(tm.E2EMaxNs)/1e6 < mean {
			bad = append(bad, fmt.Sprintf("%s %s: mean age %.2f ms (max %.2f), at least %.0f ms upstream", k.Node, k.Topic, mean, float64(tm.E2EMaxNs)/1e6, want))
		}
	}
	return bad
}

// A relay= that cannot be built is refused at parse time, saying why.
func TestRelayRefused(t *testing.T) {
	sim := filepath.Join(buildDir(t), "bin/simgraph")
	for _, c := range []struct{ graph, want string }{
		{"process p\n  node /a\n    pub /out 10\n    sub /in relay=/out\n", "relay=/out: the node already publishes it"},
		{"process p\n  node /a\n    sub /in relay=/x relay=/y\n", "one relay a subscription"},
		{"process p\n  node /a\n    sub /in relay=not-a-name\n", "bad sub option 'relay=not-a-name'"},
	} {
		path := filepath.Join(t.TempDir(), "bad.graph")
		if err := os.WriteFile(path, []byte(c.graph), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(sim, "--graph", path, "--duration", "1").CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%q: %v, %s; want a refusal saying %q", c.graph, err, out, c.want)
		}
	}
}
