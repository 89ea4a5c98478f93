package logfmt

import (
	"fmt"
	"strings"

	"ros2_pulse/internal/window"
)

// The text format's record kinds, in one place: the word a line starts with,
// the function that writes a window's lines of that kind and the one that
// reads one back. renderText writes in the tables' order and textLine reads
// by word, so a new kind is a row here and its two functions (write_text.go,
// read_text.go, read_text_records.go, paths.go). A reader skips a word it
// does not know: a newer writer's kind. jsonl's kinds are the keys of
// jsonWindow (read_jsonl.go), which encoding/json dispatches on.
type textKind struct {
	word  string
	topic func(r *topicText)                            // written in each topic's block
	win   func(ln *line, w *window.Window, opt Options) // or once a window, after the topics
	read  func(b *builder, f []string) bool             // f: the fields after the word; false if malformed
}

// topicText is what a topic block's rows write from.
type topicText struct {
	ln   *line
	t    *window.Topic
	name string // escaped for the line grammar
	l    lines  // which of the topic's lines this window has
}

// topicKinds are a topic's lines in the order written. A kind written for
// both sides has a row per side; its first row reads it.
var topicKinds = []textKind{
	{word: "TOPIC", topic: writeTopicLine, read: named((*builder).topicLine)},
	{word: "PUB", topic: writePubLine, read: named((*builder).pubLine)},
	{word: "JITTER", topic: jitterOf("pub"), read: named((*builder).jitterLine)},
	{word: "PERIOD", topic: periodOf("pub"), read: named((*builder).periodLine)},
	{word: "RECV", topic: writeRecvLine, read: named((*builder).recvLine)},
	{word: "JITTER", topic: jitterOf("recv")},
	{word: "PERIOD", topic: periodOf("recv")},
	{word: "LATENCY", topic: writeLatencyLine, read: named((*builder).latencyLine)},
	{word: "LOSS", topic: writeLossLine, read: named((*builder).lossLine)},
	{word: "BYTES", topic: bytesOf("pub"), read: named((*builder).bytesLine)},
	{word: "BYTES", topic: bytesOf("recv")},
	{word: "EP", topic: writeEndpointLines, read: named((*builder).endpointLine)},
}

// windowKinds are the window's other lines, in the order written.
var windowKinds = []textKind{
	{word: "TIMER", win: writeTimerLines, read: named((*builder).timerLine)},
	{word: "CALLBACK", win: writeCallbackLines, read: named((*builder).callbackLine)},
	{word: "BUSY", win: writeBusyLines, read: named((*builder).busyLine)},
	{word: "THREAD", win: writeThreadLines, read: (*builder).threadLine},
	{word: "CALL", win: writeCallLines, read: (*builder).callLine},                // service calls (ABI 1.6)
	{word: "LINK", win: writeLinkLines, read: (*builder).linkLine},                // latency links (ABI 1.9): paths.go
	{word: "PATH", win: writePathLines, read: (*builder).pathLine},                // end-to-end paths
	{word: "UNMATCHED", win: writeUnmatchedLines, read: (*builder).unmatchedLine}, // why nobody meets (ABI 1.5)
	{word: "NODE", win: writeNodeLines, read: named((*builder).nodeLine)},
	{word: "PROC", win: writeProcLines, read: (*builder).procLine},
	{word: "FULL", win: writeFullLines, read: (*builder).fullLine},
	// Verdicts are judged again from the numbers when read: their lines are left aside.
	{word: "WARN", win: writeWarnLines, read: skipLine}, // upstream's grammar; WarnLines writes it with ALERT
	{word: "ALERT", read: skipLine},
	{word: "LOAN", read: skipLine}, // upstream's loaned-message lines: not modelled
}

// textReaders is every kind's reader, by word.
var textReaders = readersOf(topicKinds, windowKinds)

func readersOf(tables ...[]textKind) map[string]func(*builder, []string) bool {
	m := map[string]func(*builder, []string) bool{}
	for _, table := range tables {
		for _, k := range table {
			if k.read == nil {
				continue
			}
			if m[k.word] != nil {
				panic(fmt.Sprintf("logfmt: two readers of %s lines", k.word))
			}
			m[k.word] = k.read
		}
	}
	return m
}

// named adapts a reader of a line whose first field is a name (a topic's
// or a node's), escaped as textName writes it.
func named(read func(b *builder, name string, f []string) bool) func(*builder, []string) bool {
	return func(b *builder, f []string) bool {
		if len(f) == 0 {
			return false
		}
		name, ok := unescapeName(f[0])
		return ok && read(b, name, f[1:])
	}
}

func skipLine(*builder, []string) bool { return true }

// textLine applies one line of a text block; false if it is malformed.
func (b *builder) textLine(s string) bool {
	f := strings.Fields(s)
	if len(f) == 0 {
		return false
	}
	read := textReaders[f[0]]
	if read == nil {
		return true // a line kind from a newer writer
	}
	return read(b, f[1:])
}
