package logfmt

import (
	"bytes"
	"math"
	"testing"

	"github.com/klauspost/compress/zstd"

	"ros2_pulse/internal/window"
)

// A record with a detail period: the RUN line says so, lean windows read
// back lean (their detail unknown, not empty) with rates within half a
// message of the measured ones, and detail windows read back whole and
// marked, in both formats and compressed or not.
func TestLeanAndDetailWindowsRoundTrip(t *testing.T) {
	w := fixture()
	w.Topics[1].PubInter, w.Topics[1].PubAny = 10.0137, 10.0137 // 20.03 messages over 2.0004 s
	for _, f := range []Format{Text, JSONL} {
		lean, _ := Lean(w, nil)
		if w.Topics[1].PubInter != 10.0137 || len(w.Timers) == 0 || w.Lean {
			t.Fatalf("%s: Lean changed its window", f)
		}
		detail := *w
		detail.Detail, detail.Seconds = true, 60
		var log []byte
		log = append(log, RenderRun(f, RunInfo{ID: "r1", Host: "h", Version: "v", StartNs: 1, DetailS: 60})...)
		log = append(log, Render(f, lean, Options{})...)
		log = append(log, Render(f, &detail, Options{})...)
		var z bytes.Buffer
		enc, _ := zstd.NewWriter(&z)
		enc.Write(log)
		enc.Close()
		for name, data := range map[string][]byte{"plain": log, "zst": z.Bytes()} {
			res := read(t, data)
			if len(res.Windows) != 2 || res.Malformed != 0 {
				t.Fatalf("%s %s: %s", f, name, res)
			}
			l, d := res.Windows[0], res.Windows[1]
			if !l.Lean || l.Detail || d.Lean || !d.Detail || d.Seconds != 60 || l.Run != "r1" {
				t.Fatalf("%s %s: lean %v/%v detail %v/%v", f, name, l.Lean, l.Detail, d.Lean, d.Detail)
			}
			if len(l.Timers)+len(l.Callbacks)+len(l.Calls)+len(l.Threads) != 0 || len(l.Nodes) != 2 || len(l.Procs) != 2 {
				t.Errorf("%s %s: the lean window carries %+v", f, name, l)
			}
			if len(d.Timers) != 2 || len(d.Callbacks) != 3 || len(d.Calls) != 2 {
				t.Errorf("%s %s: the detail window lost its detail: %+v", f, name, d)
			}
			chatter := l.Topic("/chatter")
			if chatter == nil || chatter.PubInter != 10 || chatter.RecvInter != 9.5 || chatter.PubInter*l.Seconds != 20 {
				t.Errorf("%s %s: lean /chatter %+v", f, name, chatter)
			}
		}
	}
	// A window of a run without a detail period is whole, never lean.
	res := read(t, append(RenderRun(Text, RunInfo{ID: "r2"}), Render(Text, w, Options{})...))
	if res.Windows[0].Lean || res.Windows[0].Detail {
		t.Fatal("a plain run's window reads as lean or detail")
	}
}

// Rates go to whole messages over the window, but a live rate never to 0.
func TestToMessage(t *testing.T) {
	for _, c := range []struct{ hz, secs, want float64 }{
		{10.0137, 1, 10}, {9.49, 1, 9}, {29.9, 0.999, 30 / 0.999}, {0.2, 1, 0.2}, {0, 1, 0}, {5, 0, 5},
	} {
		if got := toMessage(c.hz, c.secs); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("toMessage(%v, %v) = %v, want %v", c.hz, c.secs, got, c.want)
		}
	}
}

// A compressed log whose writer was killed mid-window reads to its last
// whole window and counts the torn tail as malformed.
func TestReadTornCompressedTail(t *testing.T) {
	var z bytes.Buffer
	enc, _ := zstd.NewWriter(&z)
	enc.Write(Render(Text, fixture(), Options{}))
	enc.Flush()
	whole := z.Len()
	enc.Write(Render(Text, fixture(), Options{}))
	enc.Flush()
	torn := z.Bytes()[:whole+(z.Len()-whole)/2]
	res := read(t, torn)
	if len(res.Windows) != 1 || res.Malformed != 1 {
		t.Fatalf("torn stream: %s", res)
	}
}

// A replay shows a lean window with the detail of the minute that covers
// it, counts scaled to the window, durations as measured; whole windows and
// windows of other runs are left as they are.
func TestReplayedBorrowsDetail(t *testing.T) {
	w := fixture()
	lean1, _ := Lean(w, nil)
	lean1.TsNs, lean1.Seconds, lean1.Run = 1e9, 1, "r"
	lean2 := *lean1
	lean2.TsNs = 2e9
	d := *w
	d.TsNs, d.Seconds, d.Detail, d.Run = 2e9, 4, true, "r"
	other := *lean1
	other.Run = "s"
	got := Replayed([]*window.Window{lean1, &lean2, &d, &other})
	if len(got) != 3 {
		t.Fatalf("%d windows replayed, want the 3 of the timeline", len(got))
	}
	for _, r := range got[:2] {
		if r.Lean || len(r.Timers) != 2 || len(r.Callbacks) != 3 || len(r.Calls) != 2 {
			t.Fatalf("not borrowed: %+v", r)
		}
		cb := r.Callbacks[0].Duration
		if cb.N != 5 || cb.MaxMs != 131 || cb.SumMs != 9.5 { // 19 over 4 s: ~5 in 1 s
			t.Errorf("callback scaled to %+v", cb)
		}
		if c := r.Calls[1]; c.Started != 5 || c.Evicted != 1 || c.Hist[1].N != 2 {
			t.Errorf("call scaled to %+v", c)
		}
		if r.Topic("/chatter").PubInter != 10 {
			t.Errorf("the lean window's own rate was replaced")
		}
	}
	if w.Callbacks[0].Duration.N != 19 || w.Calls[1].Hist[1].N != 8 {
		t.Fatal("borrowing changed the detail window")
	}
	if !got[2].Lean || len(got[2].Timers) != 0 {
		t.Error("a window of another run borrowed this run's detail")
	}
}
