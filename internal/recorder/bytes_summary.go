package recorder

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"ros2_pulse/internal/window"
)

// BytesTotal is a topic's bytes over a run, each side's (design note 0033):
// its publishers' sent and its subscriptions' received inter-process
// messages, as serialized.
type BytesTotal struct {
	Topic     string
	Pub, Recv window.Bytes // Total and Messages summed (window.Bytes.AddSide); How the run's worst; MaxSize the largest
	Seconds   float64      // the windows the topic had bytes in
}

// addBytes adds a window's topic sides to the run's.
func (s *Summary) addBytes(w *window.Window) {
	for i := range w.Topics {
		t := &w.Topics[i]
		if t.PubBytes.How == "" && t.RecvBytes.How == "" {
			continue
		}
		if s.bytes == nil {
			s.bytes = map[string]*BytesTotal{}
		}
		b := s.bytes[t.Name]
		if b == nil {
			b = &BytesTotal{Topic: t.Name}
			s.bytes[t.Name] = b
		}
		b.Seconds += w.Seconds
		b.Pub.AddSide(t.PubBytes) // its sums; PerS is not used: a rate is Total over Seconds
		b.Recv.AddSide(t.RecvBytes)
	}
}

// Bytes are the run's topics with bytes, by name.
func (s *Summary) Bytes() []BytesTotal {
	out := make([]BytesTotal, 0, len(s.bytes))
	for _, b := range s.bytes {
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Topic < out[j].Topic })
	return out
}

// printBytes writes each topic's bandwidth over the run, when its processes measured bytes.
func (s *Summary) printBytes(out io.Writer) {
	all := s.Bytes()
	if len(all) == 0 {
		return
	}
	fmt.Fprintln(out, "bandwidth (inter-process messages as serialized: 4-byte header and CDR body; ~ sampled sizes, - not measured)")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tSENT/s\tMEAN SIZE\tMAX SIZE\tRECEIVED/s")
	cell := func(b window.Bytes, v float64) string {
		switch b.How {
		case window.BytesExact:
			return window.HumanBytes(v)
		case window.BytesSampled:
			return "~" + window.HumanBytes(v)
		}
		return "-"
	}
	for _, b := range all {
		rate := func(x window.Bytes) float64 {
			if b.Seconds <= 0 {
				return 0
			}
			return x.Total / b.Seconds
		}
		mean := 0.0
		if b.Pub.Messages > 0 {
			mean = b.Pub.Total / float64(b.Pub.Messages)
		}
		maxSize := "-"
		if b.Pub.MaxSize > 0 {
			maxSize = window.HumanBytes(float64(b.Pub.MaxSize))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.Topic, cell(b.Pub, rate(b.Pub)), cell(b.Pub, mean), maxSize, cell(b.Recv, rate(b.Recv)))
	}
	tw.Flush()
}
