package logfmt

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"ros2_pulse/internal/window"
	"ros2_pulse/internal/zlog"
)

// MaxLine is the longest line Read accepts; a longer one is skipped as
// malformed (a machine-wide jsonl window of 1000 topics is ~150 KiB).
const MaxLine = 4 << 20

// ReadResult is a parsed log.
type ReadResult struct {
	Windows   []*window.Window // in file order
	Malformed int              // lines that could not be read (skipped)
	FirstBad  int              // line number of the first of them, 0 if none
}

// Read parses a log written by pulse or by upstream ros2_pulse: text blocks,
// JSON Lines, or both mixed, sniffed per line as upstream's pulse-check does
// (a line starting with '{' is a jsonl window). Malformed lines are skipped
// and counted; unknown line kinds and unknown keys are ignored, because
// writers add kinds and keys, never fields. Only I/O errors fail.
//
// What a log cannot carry is rebuilt as follows: a topic with a TOPIC or
// PUB line (or pub gap data) has a live publisher, one with a RECV line (or
// recv gap data) a live subscription; the publish "any transport" rate is
// max(inter, intra), exact for one publisher per topic and a lower bound for
// several; per-subscription rates are not in logs.
func Read(r io.Reader) (*ReadResult, error) {
	res := &ReadResult{}
	br := bufio.NewReaderSize(r, 64<<10)
	z, err := zlog.Sniff(br) // a .zst recording
	if err != nil {
		return res, err
	}
	if z != nil {
		defer z.Close()
		br = bufio.NewReaderSize(z, 64<<10)
	}
	var cur *builder
	run := ""     // the RUN line the windows that follow belong to
	detail := 0.0 // that run's detail period (s): its other windows are lean
	add := func(w *window.Window) {
		w.Run = run
		w.Lean = detail > 0 && !w.Detail
		res.Windows = append(res.Windows, w)
	}
	finish := func() {
		if cur != nil {
			add(cur.window())
			cur = nil
		}
	}
	bad := func(lineno int) {
		res.Malformed++
		if res.FirstBad == 0 {
			res.FirstBad = lineno
		}
	}
	for lineno := 1; ; lineno++ {
		line, tooLong, err := readLine(br)
		if err == io.EOF && line == nil {
			break
		}
		if err != nil && err != io.EOF {
			return res, err
		}
		switch {
		case tooLong:
			bad(lineno)
		case len(line) > 0 && line[0] == '{':
			finish()
			if id, d, ok := parseJSONRun(line); ok {
				run, detail = id, d
			} else if w, ok := parseJSONWindow(line); ok {
				add(w)
			} else {
				bad(lineno)
			}
		case bytes.HasPrefix(line, []byte("RUN ")):
			finish()
			if id, d, ok := parseRun(string(line)); ok {
				run, detail = id, d
			} else {
				bad(lineno)
			}
		case len(line) == 0:
			finish()
		case line[0] == '#':
			if w, ok := parseHeader(string(line)); ok {
				finish()
				cur = newBuilder(w)
			} // any other comment is ignored
		case cur == nil:
			bad(lineno) // a data line outside a window
		default:
			if !cur.textLine(string(line)) {
				bad(lineno)
			}
		}
		if err == io.EOF {
			break
		}
	}
	finish()
	if z != nil && z.Err() != nil { // a torn compressed tail (the writer was killed mid-window)
		bad(0)
	}
	return res, nil
}

// readLine returns one line without its newline (and CR). A line longer than
// MaxLine is consumed and reported as tooLong.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			if buf != nil || tooLong {
				return buf, tooLong, io.EOF
			}
			return nil, false, err
		}
		if !tooLong {
			if len(buf)+len(chunk) > MaxLine {
				tooLong, buf = true, []byte{}
			} else {
				buf = append(buf, chunk...)
			}
		}
		if !isPrefix {
			if buf == nil {
				buf = []byte{}
			}
			return bytes.TrimSuffix(buf, []byte{'\r'}), tooLong, nil
		}
	}
}

// parseRun reads a text run header, "RUN id=… host=… version=… start_ns=…
// [detail_s=…]", for its id and detail period (0: none).
func parseRun(s string) (string, float64, bool) {
	kv, ok := keyvals(strings.Fields(s)[1:], "id")
	if !ok || kv["id"] == "" {
		return "", 0, false
	}
	detail := 0.0
	if d, has := kv["detail_s"]; has {
		if detail, ok = number(d); !ok {
			return "", 0, false
		}
	}
	return kv["id"], detail, true
}

// parseJSONRun reads a jsonl run header, {"run":{"id":…}}, for its id and detail period.
func parseJSONRun(line []byte) (string, float64, bool) {
	if !bytes.HasPrefix(line, []byte(`{"run":`)) {
		return "", 0, false
	}
	var j struct {
		Run *struct {
			ID      string  `json:"id"`
			DetailS float64 `json:"detail_s"`
		} `json:"run"`
	}
	if err := json.Unmarshal(line, &j); err != nil || j.Run == nil || j.Run.ID == "" || !(j.Run.DetailS >= 0) {
		return "", 0, false
	}
	return j.Run.ID, j.Run.DetailS, true
}

// String describes a read for messages: "12 windows, 3 malformed lines (first: line 7)".
func (r *ReadResult) String() string {
	s := fmt.Sprintf("%d windows", len(r.Windows))
	if r.Malformed > 0 {
		s += fmt.Sprintf(", %d malformed lines skipped (first: line %d)", r.Malformed, r.FirstBad)
	}
	return s
}
