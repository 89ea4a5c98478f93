package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"ros2_pulse/internal/graph"
)

// An intra-process-only topic: on Humble no tracepoint sees its publishes,
// so no view shows a publish rate or a loss figure for it (the deliveries
// are still counted) and a rule on them cannot be judged; on Jazzy and
// Kilted the same graph shows the measured intra publish rate.
func TestIntraPublishVisibilityPerDistro(t *testing.T) {
	pulse, sim, _ := bin(t)
	build := filepath.Dir(filepath.Dir(sim))
	for _, distro := range []string{"humble", "jazzy", "kilted"} {
		t.Run(distro, func(t *testing.T) {
			dir := t.TempDir()
			segs := filepath.Join(dir, "segs")
			graphPath, specPath := filepath.Join(dir, "g.graph"), filepath.Join(dir, "spec.yaml")
			os.WriteFile(graphPath, []byte("process cam\n  node /camera intra\n    pub /image 30 thread\n  node /detector intra\n    sub /image\n"), 0o600)
			os.WriteFile(specPath, []byte("topics:\n  /image:\n    - {min_hz: 25, side: pub}\n    - {min_hz: 25, max_loss_pct: 5}\n"), 0o600)
			g := exec.Command(sim, "--graph", graphPath, "--duration", "12")
			g.Env = append(os.Environ(), "LD_PRELOAD="+filepath.Join(build, "lib/libros2_pulse.so"),
				"LD_LIBRARY_PATH="+filepath.Join(build, "lib/sim", distro), "ROS_PULSE_DIR="+segs, "ROS_TOPIC_STATS_QUIET=1")
			if err := g.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { g.Process.Signal(os.Interrupt); g.Wait() }()
			view := func(args ...string) *exec.Cmd {
				c := pulseCmd(t, args...)
				c.Env = append(c.Env, "ROS_PULSE_DIR="+segs)
				return c
			}
			humble := distro == "humble"
			time.Sleep(500 * time.Millisecond)

			// graph: the publisher's edge is drawn; on Humble without a rate.
			out, err := view("graph", "--format", "json").Output()
			if err != nil {
				t.Fatal(err)
			}
			var gr graph.Graph
			if err := json.Unmarshal(out, &gr); err != nil {
				t.Fatal(err)
			}
			var pubEdge, subEdge *graph.Edge
			for i := range gr.Edges {
				if gr.Edges[i].Kind == "pub" {
					pubEdge = &gr.Edges[i]
				} else {
					subEdge = &gr.Edges[i]
				}
			}
			if pubEdge == nil || subEdge == nil || len(gr.Topics) != 1 {
				t.Fatalf("graph: %s", out)
			}
			pubHz, measured := pubEdge.Hz("intra")
			recvHz, _ := subEdge.Hz("intra")
			if humble && (measured || pubEdge.Transport != "not_measured" || gr.Topics[0].PubHz != nil) ||
				!humble && (!measured || pubHz < 27 || pubHz > 33 || pubEdge.Transport != "intra") || recvHz < 27 || recvHz > 33 {
				t.Errorf("graph on %s: %s", distro, out)
			}
			dot, _ := view("graph", "--format", "mermaid").Output()
			if humble != strings.Contains(string(dot), "not measured (Humble intra)") || strings.Contains(string(dot), `"0 Hz"`) {
				t.Errorf("mermaid on %s:\n%s", distro, dot)
			}

			// doctor says why, on Humble only, naming /image once and not the
			// builtin /parameter_events that both intra nodes publish.
			doc, _ := view("doctor").Output()
			if humble != strings.Contains(string(doc), "not visible on humble: intra-process publishes on /image (no rclcpp_intra_publish") {
				t.Errorf("doctor on %s:\n%s", distro, doc)
			}

			// export: no publish series for it on Humble; the deliveries are there.
			addr := freePort(t)
			exp := view("export", "--listen", addr)
			if err := exp.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { exp.Process.Signal(os.Interrupt); exp.Wait() }()
			var pubOK, recvOK, publishedOK bool
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !recvOK; time.Sleep(200 * time.Millisecond) {
				_, pubOK = scrapeCounter(t, addr, "ros2_pulse_messages_total", `topic="/image"`, `side="pub"`)
				_, publishedOK = scrapeCounter(t, addr, "ros2_pulse_published_messages_total", `topic="/image"`)
				_, recvOK = scrapeCounter(t, addr, "ros2_pulse_messages_total", `topic="/image"`, `side="recv"`, `transport="intra"`)
			}
			if !recvOK || pubOK == humble || publishedOK == humble {
				t.Errorf("export on %s: pub series %v, published %v, recv %v", distro, pubOK, publishedOK, recvOK)
			}

			// check --live: cannot judge (2) with the reason on Humble, healthy (0) elsewhere.
			chk := view("check", "--live", "--spec", specPath, "--for", "3s", "--period", "1s")
			out, err = chk.CombinedOutput()
			code := exitCode(err)
			text := string(out)
			if humble && (code != 2 || strings.Count(text, "reason=intra_publish_not_visible") < 2 || strings.Contains(text, "topic_rate") ||
				strings.Contains(text, "topic_loss")) || !humble && code != 0 {
				t.Errorf("check --live on %s: exit %d\n%s", distro, code, text)
			}

			// record: no publish figure and no loss line on Humble.
			rec, err := view("record", "--period", "1s", "--duration", "2500ms", "--format", "jsonl").Output()
			if err != nil {
				t.Fatal(err)
			}
			if humble && (strings.Contains(string(rec), `"pub_intra_hz"`) || strings.Contains(string(rec), `"losses":[{`)) ||
				!humble && !regexp.MustCompile(`"pub_intra_hz":(29|30)\.`).Match(rec) {
				t.Errorf("record on %s:\n%s", distro, rec)
			}

			// top in a real terminal: PUB Hz and LOSS are "-" on Humble.
			tm := &tmuxPane{t: t, socket: fmt.Sprintf("pulse-distro-%s-%d", distro, os.Getpid())}
			defer exec.Command("tmux", "-L", tm.socket, "kill-server").Run()
			tm.run("new-session", "-d", "-s", "top", "-x", "100", "-y", "30",
				fmt.Sprintf("ROS_PULSE_DIR=%s %s top --period 500ms; sleep 60", segs, pulse))
			s := tm.waitFor("/image with a loss column", 6*time.Second, func(s string) bool {
				f := strings.Fields(row(s, "/image"))
				return len(f) >= 5 && f[len(f)-1] == "ok" && (humble || f[4] != "-")
			})
			f := strings.Fields(row(s, "/image")) // name, PUB Hz, RECV Hz, INTRA, LOSS, ...
			if humble && (f[1] != "-" || f[4] != "-") || !humble && (f[1] == "-" || f[4] != "0.0%") {
				t.Errorf("top on %s: %q\n%s", distro, row(s, "/image"), s)
			}
		})
	}
}
