package top

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"ros2_pulse/internal/recorder"
	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/spec"
)

// A replayed log is judged like offline pulse check and drawn with the same
// screens: the third window's sag is a WARN row and a warning.
func TestLoadLogReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	log := ""
	for i, hz := range []string{"50.000000", "50.000000", "20.000000", "50.000000"} {
		log += "# ts_ns=" + string(rune('1'+i)) + "000000000 window_s=1.000\nTOPIC /odom " + hz + "\nRECV /odom inter=" + hz + " intra=0.000000\nNODE /odometry\nPROC pid=42 state=alive nodes=/odometry exe=/usr/bin/python3\n\n"
	}
	os.WriteFile(path, []byte(log), 0o600)
	s, err := spec.Parse([]byte("topics:\n  /odom: {min_hz: 45}\n"))
	if err != nil {
		t.Fatal(err)
	}
	frames, res, err := LoadLog(path, s)
	if err != nil || len(frames) != 4 || res.Malformed != 0 {
		t.Fatalf("%v %d frames %s", err, len(frames), res)
	}
	if len(frames[2].Warns) != 1 || frames[2].Warns[0].Value != 20 || len(frames[1].Warns) != 0 {
		t.Fatalf("verdicts: %+v / %+v", frames[1].Warns, frames[2].Warns)
	}
	var m tea.Model = New("run.log", true)
	m, _ = m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	for _, f := range frames[:3] {
		m, _ = m.Update(FrameMsg(f))
	}
	v := m.View()
	if !strings.Contains(row(v, "/odom"), "WARN") || !strings.Contains(v, "/odom recv 20.0 Hz, expected ≥ 45") ||
		!strings.Contains(row(v, "/odometry"), "alive") || strings.Contains(row(v, "/odometry"), "quiet") {
		t.Errorf("replayed screen:\n%s", v)
	}
	if _, _, err := LoadLog(filepath.Join(t.TempDir(), "missing.log"), nil); err == nil {
		t.Error("a missing log must fail")
	}
}

func row(screen, name string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " ›"), name+" ") {
			return l
		}
	}
	return ""
}

// Live runs a recorder in its own goroutine and hands frames to the
// program's goroutine (run under -race in make test).
func TestLiveSendsFrames(t *testing.T) {
	dir := t.TempDir()
	err := segment.WriteSynthetic(filepath.Join(dir, "4242.0.pulse"), segment.SyntheticSpec{Pid: 4242, StartMono: 1, Exe: "/opt/ros/lib/talker",
		Nodes:     []string{"/talker"},
		Endpoints: []segment.SyntheticEndpoint{{Kind: segment.KindPublisher, Name: "/chatter", Node: 0, Counts: [4]uint64{7, 0, 0, 0}}}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := make(chan tea.Msg, 64)
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	if err := Live(ctx, dir, recorder.Options{Period: 50 * time.Millisecond, Retain: -1}, func(m tea.Msg) { msgs <- m }); err != nil {
		t.Fatal(err)
	}
	close(msgs)
	frames := 0
	var m tea.Model = New("live", false)
	for msg := range msgs {
		if f, ok := msg.(FrameMsg); ok {
			frames++
			if f.W == nil || !f.Live || f.W.Topic("/chatter") == nil || len(f.W.Procs) != 1 {
				t.Fatalf("frame %+v", f)
			}
		}
		m, _ = m.Update(msg)
	}
	if frames < 3 || !strings.Contains(m.View(), "/chatter") {
		t.Errorf("%d frames; screen:\n%s", frames, m.View())
	}
}
