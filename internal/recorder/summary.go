package recorder

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"

	"ros2_pulse/internal/window"
)

// Summary accumulates windows into per-topic totals for the end of a run.
// Mean rates come from complete windows only: the final window of a run is
// a sliver whose rate is a one-sample estimate (upstream pitfall 19).
type Summary struct {
	Period  float64 // seconds; windows shorter than 90 % of it are partial
	Seconds float64 // total measured time
	Windows int
	topics  map[string]*TopicTotal
	procs   map[int]window.Proc
}

// TopicTotal is one topic over a whole run.
type TopicTotal struct {
	Name                             string
	PubInter, PubIntra               uint64 // messages, all windows
	RecvInter, RecvIntra             uint64
	meanPubInter, meanPubIntra       float64 // message counts over complete windows
	meanRecvInter, meanRecvIntra     float64
	exposure                         float64
	MeanPubInterHz, MeanPubIntraHz   float64
	MeanRecvInterHz, MeanRecvIntraHz float64
	PubHidden                        bool // some publishes were invisible on the distro (Humble intra): no publish figure
}

// Add folds one window in.
func (s *Summary) Add(w *window.Window) {
	if s.topics == nil {
		s.topics, s.procs = map[string]*TopicTotal{}, map[int]window.Proc{}
	}
	s.Windows++
	s.Seconds += w.Seconds
	complete := w.Seconds >= 0.9*s.Period
	for i := range w.Topics {
		t := &w.Topics[i]
		tt := s.topics[t.Name]
		if tt == nil {
			tt = &TopicTotal{Name: t.Name}
			s.topics[t.Name] = tt
		}
		tt.PubHidden = tt.PubHidden || t.PubHidden
		var pi, pa, ri, ra uint64
		for _, p := range t.Pubs {
			pi, pa = pi+p.Delta[0], pa+p.Delta[1]
		}
		for _, r := range t.Subs {
			ri, ra = ri+r.Delta[0], ra+r.Delta[1]
		}
		tt.PubInter, tt.PubIntra, tt.RecvInter, tt.RecvIntra = tt.PubInter+pi, tt.PubIntra+pa, tt.RecvInter+ri, tt.RecvIntra+ra
		if complete {
			tt.meanPubInter += float64(pi)
			tt.meanPubIntra += float64(pa)
			tt.meanRecvInter += float64(ri)
			tt.meanRecvIntra += float64(ra)
			tt.exposure += t.Exposure
		}
		if tt.exposure > 0 {
			tt.MeanPubInterHz, tt.MeanPubIntraHz = tt.meanPubInter/tt.exposure, tt.meanPubIntra/tt.exposure
			tt.MeanRecvInterHz, tt.MeanRecvIntraHz = tt.meanRecvInter/tt.exposure, tt.meanRecvIntra/tt.exposure
		}
	}
	for _, p := range w.Procs {
		s.procs[p.Pid] = p
	}
}

// Topics returns the totals sorted by name.
func (s *Summary) Topics() []TopicTotal {
	out := make([]TopicTotal, 0, len(s.topics))
	for _, t := range s.topics {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Print writes the end-of-run table.
func (s *Summary) Print(out io.Writer) {
	fmt.Fprintf(out, "\npulse summary: %d windows, %.1f s measured\n", s.Windows, s.Seconds)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPUB Hz\t(inter\tintra)\tRECV Hz\t(inter\tintra)\tPUBLISHED\tDELIVERED")
	hidden := false
	for _, t := range s.Topics() {
		pub := fmt.Sprintf("%.2f\t%.2f\t%.2f", max(t.MeanPubInterHz, t.MeanPubIntraHz), t.MeanPubInterHz, t.MeanPubIntraHz)
		published := strconv.FormatUint(max(t.PubInter, t.PubIntra), 10)
		if t.PubHidden { // the inter-process part is exact; the rest is unseen
			pub, published, hidden = fmt.Sprintf("-\t%.2f\t-", t.MeanPubInterHz), "-", true
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%.2f\t%s\t%d\n", t.Name, pub,
			t.MeanRecvInterHz+t.MeanRecvIntraHz, t.MeanRecvInterHz, t.MeanRecvIntraHz, published, t.RecvInter+t.RecvIntra)
	}
	tw.Flush()
	if hidden {
		fmt.Fprintln(out, "-: intra-process publishes are not visible on Humble (no rclcpp_intra_publish tracepoint); see pulse doctor")
	}
	pids := make([]int, 0, len(s.procs))
	for pid := range s.procs {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	for _, pid := range pids {
		p := s.procs[pid]
		fmt.Fprintf(out, "process %d (%s) %s, nodes: %s\n", pid, p.Exe, p.State(), p.NodeNames())
	}
}
