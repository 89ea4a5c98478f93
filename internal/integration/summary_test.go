package integration

import (
	"math"
	"testing"
	"time"

	"ros2_pulse/internal/recorder"
	"ros2_pulse/internal/simtruth"
)

// The run summary's publish rate is over the time the publisher existed,
// judged against what the graph did: a talker killed 3 s into a 6 s run,
// whose listener lives on, read about half its rate before (issue 23, item 2).
func TestSummaryRateOverThePublishersLife(t *testing.T) {
	const period = 500 * time.Millisecond
	g := sim(t, "testdata/short_talker.graph", "jazzy", 6*time.Second)
	ws, _ := judgeRun(t, g, period, []string{"/chatter"}, 1) // the talker dies by SIGKILL: one message may be in flight
	s := recorder.Summary{Period: period.Seconds()}
	for _, w := range ws {
		s.Add(w)
	}
	var published uint64
	for k, c := range g.truth().Counts {
		if k.Kind == "pub" && k.Topic == "/chatter" {
			published += c[simtruth.PubInter]
		}
	}
	// The talker lived from the graph's start to its kill at 3 s: what it
	// published over that time, within max(2 %, one message per window).
	did := float64(published) / 3
	for _, tt := range s.Topics() {
		if tt.Name != "/chatter" {
			continue
		}
		if published == 0 || math.Abs(tt.MeanPubInterHz-did) > math.Max(0.02*did, 1/period.Seconds()) {
			t.Errorf("summary: /chatter published at %.2f Hz; the talker published %d messages in its 3 s, %.2f Hz", tt.MeanPubInterHz, published, did)
		}
		return
	}
	t.Errorf("no /chatter in the summary")
}
