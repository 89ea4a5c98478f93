package main

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"ros2_pulse/internal/simtruth"
)

// Views are judged against what the graph started by startGraph really did
// (its own counts, internal/simtruth), not its nominal rates: a loaded
// machine really skips timer periods. A view's window is matched to the
// graph's counts by its time stamps: truthSampler reads the counts every
// 10 ms with the wall-clock time of each read, so a window [start, stop]
// lies between the reads just inside and just outside its ends.

// stampSlack is how far a window's stamp may lie from the instant its scan
// read the counters (the scan's own length).
const stampSlack = 25 * time.Millisecond

type truthSample struct {
	from, to int64 // wall-clock ns just before and just after the read
	s        *simtruth.Snapshot
}

// truthSampler reads the graph's own counts every 10 ms until the test ends.
type truthSampler struct {
	mu      sync.Mutex
	samples []truthSample
	stop    chan struct{}
	done    chan struct{}
}

func sampleTruth(t *testing.T, dir string) *truthSampler {
	t.Helper()
	ts := &truthSampler{stop: make(chan struct{}), done: make(chan struct{})}
	path := filepath.Join(dir, "truth")
	go func() {
		defer close(ts.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			from := time.Now().UnixNano()
			s, err := simtruth.Read(path)
			to := time.Now().UnixNano()
			if err == nil {
				ts.mu.Lock()
				ts.samples = append(ts.samples, truthSample{from, to, s})
				ts.mu.Unlock()
			}
			select {
			case <-ts.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(ts.close)
	return ts
}

func (ts *truthSampler) close() {
	select {
	case <-ts.stop:
	default:
		close(ts.stop)
		<-ts.done
	}
}

// around returns the counts read last before t and first after it, or nil
// where no read brackets t.
func (ts *truthSampler) around(t int64) (before, after *simtruth.Snapshot) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, s := range ts.samples {
		if s.to <= t {
			before = s.s
		}
		if s.from >= t && after == nil {
			after = s.s
		}
	}
	return before, after
}

// readTruth reads the counts of the graph whose truth files are in dir.
func readTruth(t *testing.T, dir string) *simtruth.Snapshot {
	t.Helper()
	s, err := simtruth.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// published is what the graph's publishers of each topic have published, a
// message once per publish whichever transport.
func published(s *simtruth.Snapshot) map[string]uint64 {
	out := map[string]uint64{}
	for k, c := range s.Counts {
		if k.Kind == "pub" {
			out[k.Topic] += max(c[simtruth.PubInter], c[simtruth.PubIntra])
		}
	}
	return out
}

// rates is each topic's publish rate as the graph really ran it between two
// wall-clock instants (the reads nearest inside them).
func (ts *truthSampler) rates(from, to time.Time) map[string]float64 {
	_, a := ts.around(from.UnixNano())
	b, _ := ts.around(to.UnixNano())
	out := map[string]float64{}
	if a == nil || b == nil {
		return out
	}
	before, secs := published(a), to.Sub(from).Seconds()
	for topic, n := range published(b) {
		out[topic] = float64(n-before[topic]) / secs
	}
	return out
}

// statisticsCount is what a view counted for a topic at one node in a
// window, as the graph counts it: a node's subscription where the topic has
// one here, else its publisher (the bridge's /statistics rule).
func statisticsCount(s *simtruth.Snapshot, topic, node string, sub bool) int64 {
	var n int64
	for k, c := range s.Counts {
		if k.Topic != topic || k.Node != node {
			continue
		}
		switch {
		case sub && k.Kind == "sub":
			n += int64(c[simtruth.SubInter] + c[simtruth.SubIntra])
		case !sub && k.Kind == "pub":
			n += int64(c[simtruth.PubInter] + c[simtruth.PubIntra])
		}
	}
	return n
}

// judgeStatistics judges every /statistics rate message of topics: its
// count lies between what the graph did between the reads just inside the
// window's ends and between the reads just outside them (each widened by
// stampSlack and by the one message in flight). Windows the reads do not
// cover are not judged; each topic needs at least minWindows judged ones.
func (ts *truthSampler) judgeStatistics(msgs []subMsg, topics []string, minWindows int) []string {
	want := map[string]bool{}
	for _, t := range topics {
		want[t] = true
	}
	var bad []string
	judged := map[string]int{}
	for _, m := range msgs {
		if m.Topic != "statistics" || m.Unit != "Hz" || !want[m.Metric] || len(m.Points) < 4 || m.Points[3][1] == nil {
			continue
		}
		start := m.Start[0]*1e9 + m.Start[1]
		stop := m.Stop[0]*1e9 + m.Stop[1]
		slack := int64(stampSlack)
		outS, _ := ts.around(start - slack)
		_, inS := ts.around(start + slack)
		inE, _ := ts.around(stop - slack)
		_, outE := ts.around(stop + slack)
		if outS == nil || inS == nil || inE == nil || outE == nil {
			continue
		}
		anySub := false
		for k := range outE.Counts {
			anySub = anySub || (k.Kind == "sub" && k.Topic == m.Metric)
		}
		c := func(s *simtruth.Snapshot) int64 { return statisticsCount(s, m.Metric, m.Source, anySub) }
		lo, hi := c(inE)-c(inS)-1, c(outE)-c(outS)+1
		got := int64(*m.Points[3][1])
		judged[m.Metric]++
		if got < lo || got > hi {
			bad = append(bad, fmt.Sprintf("/statistics %s at %s, window %.3f s ending %d: %d messages, the graph did %d..%d",
				m.Metric, m.Source, float64(stop-start)/1e9, stop, got, max(lo, 0), hi))
		}
	}
	sort.Strings(topics)
	for _, t := range topics {
		if judged[t] < minWindows {
			bad = append(bad, fmt.Sprintf("/statistics %s: %d windows judged against the graph, want %d", t, judged[t], minWindows))
		}
	}
	return bad
}

// graphRates runs during and returns each topic's rate as the graph started
// by startGraph(dir, ...) really ran it over that time, per side: "pub" (a
// message once per publish, whichever transport) and "recv" per receiving node
// ("recv /node"), keyed "TOPIC SIDE".
func graphRates(t *testing.T, dir string, during func()) map[string]float64 {
	t.Helper()
	before, t0 := readTruth(t, filepath.Join(dir, "truth")), time.Now()
	during()
	after, secs := readTruth(t, filepath.Join(dir, "truth")), time.Since(t0).Seconds()
	rates := map[string]float64{}
	for k, c := range after.Counts {
		b := before.Get(k)
		switch k.Kind {
		case "pub":
			rates[k.Topic+" pub"] += float64(max(c[simtruth.PubInter]-b[simtruth.PubInter], c[simtruth.PubIntra]-b[simtruth.PubIntra])) / secs
		case "sub":
			rates[k.Topic+" recv "+k.Node] += float64(c[simtruth.SubInter]+c[simtruth.SubIntra]-b[simtruth.SubInter]-b[simtruth.SubIntra]) / secs
		}
	}
	return rates
}

// rateAgrees judges a rate a view measured over one window of window seconds
// inside a span against the rate the graph really had over that span, where
// the view's window boundaries cannot be matched to the graph's counts: within
// max(2 %, one message per window), since each end of the window may hold one
// message more or less than the span's.
func rateAgrees(got, did, window float64) bool {
	return math.Abs(got-did) <= math.Max(0.02*did, 1/window)
}
