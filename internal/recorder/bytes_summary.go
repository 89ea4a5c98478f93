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
	Pubs      []PubBytes   // each publisher's share of Pub, by node and pid
}

// PubBytes is one publisher's bytes over a run.
type PubBytes struct {
	Node  string
	Pid   int
	Bytes window.Bytes
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
		for j := range t.Pubs {
			b.addPub(&t.Pubs[j])
		}
	}
}

// addPub adds a publisher's window to its run.
func (b *BytesTotal) addPub(e *window.EndpointRate) {
	if e.Bytes.How == "" {
		return
	}
	for k := range b.Pubs {
		if p := &b.Pubs[k]; p.Node == e.Node && p.Pid == e.Pid {
			p.Bytes.AddSide(e.Bytes)
			return
		}
	}
	p := PubBytes{Node: e.Node, Pid: e.Pid}
	p.Bytes.AddSide(e.Bytes)
	b.Pubs = append(b.Pubs, p)
}

// Bytes are the run's topics with bytes, by name, each one's publishers by node and pid.
func (s *Summary) Bytes() []BytesTotal {
	out := make([]BytesTotal, 0, len(s.bytes))
	for _, b := range s.bytes {
		sort.Slice(b.Pubs, func(i, j int) bool {
			p, q := b.Pubs[i], b.Pubs[j]
			return p.Node < q.Node || p.Node == q.Node && p.Pid < q.Pid
		})
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
		sent := func(pub window.Bytes) string {
			maxSize := "-"
			if pub.MaxSize > 0 {
				maxSize = window.HumanBytes(float64(pub.MaxSize))
			}
			return cell(pub, rate(pub)) + "\t" + cell(pub, pub.MeanSize) + "\t" + maxSize
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", b.Topic, sent(b.Pub), cell(b.Recv, rate(b.Recv)))
		if len(b.Pubs) > 1 { // which publisher sends what; a lone publisher's is the topic's row
			for _, p := range b.Pubs {
				fmt.Fprintf(tw, "  %s@%d\t%s\t\n", p.Node, p.Pid, sent(p.Bytes))
			}
		}
	}
	tw.Flush()
}
