package logfmt

import (
	"strings"
	"testing"

	"ros2_pulse/internal/health"
	"ros2_pulse/internal/window"
)

// richText is every text record kind we write: the fixtures' windows, one
// with a full segment, with a verdict and EmitIdle on.
func richText() []string {
	opt := Options{EmitIdle: true, Warns: []health.Warning{{Kind: health.TopicRate, Topic: "/chatter", Value: 9.5, Min: 10, Max: 11}}}
	full := fixture()
	full.Procs[0].Dropped = 3 // a full segment
	var out []string
	for _, w := range []*window.Window{full, linkWindow(), bytesWindow()} {
		out = append(out, strings.Split(strings.TrimSpace(string(Render(Text, w, opt))), "\n")[1:]...)
	}
	return out
}

// The table of record kinds covers both directions: every kind written has
// a reader, every kind with a writer is written by the fixtures, and no
// kind has two readers (readersOf panics on that at init).
func TestTextKindsTable(t *testing.T) {
	written := map[string]bool{}
	for _, line := range richText() {
		word := strings.Fields(line)[0]
		written[word] = true
		if textReaders[word] == nil {
			t.Errorf("%s lines are written but have no reader in kinds.go: %q", word, line)
		}
	}
	for _, table := range [][]textKind{topicKinds, windowKinds} {
		for _, k := range table {
			if (k.topic != nil || k.win != nil) && !written[k.word] {
				t.Errorf("the fixtures write no %s line: the table's writer is untested", k.word)
			}
			if k.topic != nil && k.win != nil {
				t.Errorf("%s: a row writes either in a topic's block or once a window", k.word)
			}
		}
	}
}

// A line of any kind cut short after any field reads without panicking; a
// kind's word alone is malformed. ("BYTES x" once panicked the reader.)
func TestEveryKindTruncated(t *testing.T) {
	head := "# ts_ns=1 window_s=1.000\nPROC pid=100 state=alive nodes=/talker exe=-\n" // a FULL line's process
	for _, line := range richText() {
		f := strings.Fields(line)
		whole := read(t, []byte(head+line+"\n\n"))
		if whole.Malformed != 0 {
			t.Errorf("a whole line reads as malformed: %q", line)
		}
		for k := 1; k < len(f); k++ {
			cut := strings.Join(f[:k], " ")
			res := read(t, []byte(head+cut+"\n\n"))
			skipped := f[0] == "WARN" || f[0] == "ALERT"
			if k == 1 && !skipped && res.Malformed != 1 {
				t.Errorf("%q alone is not malformed: %s", cut, res)
			}
		}
	}
}
