package logfmt

import (
	"strconv"
	"strings"
)

// line appends a text line's fields without fmt: a robot's window is
// thousands of lines a second, and fmt's parsing of its formats was most of
// their cost. Numbers are written as hz, ms and pct write them.
type line struct {
	b   *strings.Builder
	num [48]byte
}

func (l *line) s(s string) *line { l.b.WriteString(s); return l }

func (l *line) hz(v float64) *line {
	l.b.Write(strconv.AppendFloat(l.num[:0], v, 'f', 6, 64))
	return l
}

// ms writes a duration in ms, or a percentage (both to 3 decimals).
func (l *line) ms(v float64) *line {
	l.b.Write(strconv.AppendFloat(l.num[:0], v, 'f', 3, 64))
	return l
}

func (l *line) i(v int) *line { l.b.Write(strconv.AppendInt(l.num[:0], int64(v), 10)); return l }

func (l *line) u(v uint64) *line { l.b.Write(strconv.AppendUint(l.num[:0], v, 10)); return l }

func (l *line) end() { l.b.WriteByte('\n') }
