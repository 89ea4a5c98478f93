package zlog

import (
	"bytes"
	"strings"
	"testing"
)

// A stream ends whole only after its last frame is closed; cut anywhere
// else, it does not. Checked without decompressing, against the encoder's
// own output (one frame, then two, with flushed blocks as the recorder
// writes them).
func TestEndsWhole(t *testing.T) {
	var file []byte
	var cuts []int // where a cut leaves whole frames
	for run := 0; run < 2; run++ {
		w := NewWriter()
		for i := 0; i < 20; i++ {
			b, err := w.Window([]byte(strings.Repeat("TOPIC /a 10.000000\n", 1+i%7)))
			if err != nil {
				t.Fatal(err)
			}
			file = append(file, b...)
		}
		end, err := w.End()
		if err != nil {
			t.Fatal(err)
		}
		file = append(file, end...)
		cuts = append(cuts, len(file))
	}
	whole := map[int]bool{0: true, cuts[0]: true, cuts[1]: true}
	for n := 0; n <= len(file); n++ {
		got, err := EndsWhole(bytes.NewReader(file[:n]))
		if err != nil {
			t.Fatal(err)
		}
		if got != whole[n] {
			t.Fatalf("cut at %d of %d bytes: whole %v, want %v", n, len(file), got, whole[n])
		}
	}
	if ok, _ := EndsWhole(strings.NewReader("plain text, not a stream\n")); ok {
		t.Error("plain text reads as whole frames")
	}
}

// FuzzEndsWhole: any bytes are walked without a panic or an error (a
// reader of memory fails only by ending).
func FuzzEndsWhole(f *testing.F) {
	w := NewWriter()
	b, _ := w.Window([]byte("TOPIC /a 1.000000\n"))
	end, _ := w.End()
	f.Add(append(append([]byte{}, b...), end...))
	f.Add([]byte{0x50, 0x2a, 0x4d, 0x18, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := EndsWhole(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	})
}
