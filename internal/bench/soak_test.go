package bench

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestHeapTraceReadsTheRuntimeLine(t *testing.T) {
	h := &heapTrace{}
	if gcs, live, _ := h.read(); gcs != 0 || !math.IsNaN(live) {
		t.Fatalf("before any GC: %d %v, want 0 NaN", gcs, live)
	}
	h.follow(strings.NewReader(
		"gc 1 @0.012s 1%: 0.010+0.5+0.003 ms clock, 0.02+0.1/0.2/0+0.006 ms cpu, 3->3->1 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P\n" +
			"pulse: skipping segment x\n" +
			"gc 2 @1.5s 0%: 0.01+0.4+0.002 ms clock, 0.03+0/0.3/0+0.005 ms cpu, 4->5->2 MB, 6 MB goal, 0 MB stacks, 0 MB globals, 2 P\n"))
	gcs, live, goal := h.read()
	if gcs != 2 || live != 2 || goal != 6 {
		t.Errorf("read gc %d live %v goal %v, want 2, 2, 6", gcs, live, goal)
	}
	if len(h.other) != 1 || h.other[0] != "pulse: skipping segment x" {
		t.Errorf("other lines %q, want the recorder's warning alone", h.other)
	}
}

func TestSummariseSoakFitsAfterWarmup(t *testing.T) {
	var s []SoakSample
	for i := 0; i <= 120; i++ { // 1 h at 30 s
		at := time.Duration(i) * 30 * time.Second
		flat := uint64(20 << 20)
		if at < 10*time.Minute {
			flat = uint64(10<<20) + uint64(i)<<20 // warm-up growth, not fitted
		}
		grow := uint64(20<<20) + uint64(at.Hours()*(4<<20)) // 4 MiB/h
		s = append(s, SoakSample{Period: time.Second, At: at, Anon: flat, RSS: flat, HeapLive: math.NaN()},
			SoakSample{Period: 100 * time.Millisecond, At: at, Anon: grow, RSS: grow, HeapLive: 3, HeapGoal: 4})
	}
	rows := SummariseSoak(s, []time.Duration{time.Second, 100 * time.Millisecond}, 10*time.Minute)
	if math.Abs(rows[0].SlopeMiBPerHour) > 1e-9 || rows[0].AnonWarm != 20 || rows[0].AnonEnd != 20 {
		t.Errorf("flat recorder: %+v", rows[0])
	}
	if math.Abs(rows[1].SlopeMiBPerHour-4) > 0.01 || rows[1].HeapLiveMax != 3 {
		t.Errorf("growing recorder: slope %.3f MiB/h heap %v, want 4 and 3", rows[1].SlopeMiBPerHour, rows[1].HeapLiveMax)
	}
	if rows[0].Samples != 101 {
		t.Errorf("%d samples after warm-up, want 101", rows[0].Samples)
	}
}
