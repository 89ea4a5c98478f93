package bench

import (
	"strconv"
	"strings"
	"testing"
)

// The farm is seed 000's: ~4,900 messages a second over 53 topics in three
// processes, every topic subscribed, the intra-process pairs in one process.
func TestFarmShape(t *testing.T) {
	procs := farmProcesses(ROSFarmOptions{Threads: 1})
	if len(procs) != 3 || procs[len(procs)-1][0] != "pubfarm" {
		t.Fatalf("processes %v: want three, the publishers last", procs)
	}
	rate := 0.0
	pubs, subs := map[string]string{}, map[string]string{}
	for _, p := range procs {
		for i := 1; i+1 < len(p); i++ {
			switch p[i] {
			case "--pub":
				f := strings.Split(p[i+1], ",")
				hz, err := strconv.ParseFloat(f[1], 64)
				if err != nil {
					t.Fatalf("%s: %v", p[i+1], err)
				}
				rate += hz
				pubs[f[0]] = p[0]
			case "--sub":
				subs[p[i+1]] = p[0]
			}
		}
	}
	if rate != 4900 || len(pubs) != 53 {
		t.Errorf("%d topics at %.0f messages a second, want 53 at 4900", len(pubs), rate)
	}
	for topic, pub := range pubs {
		sub, ok := subs[topic]
		switch {
		case !ok:
			t.Errorf("%s has no subscriber", topic)
		case strings.HasPrefix(topic, "/farm/intra_") != (sub == pub):
			t.Errorf("%s: published in %s, subscribed in %s", topic, pub, sub)
		}
	}
}

func TestPreloadObject(t *testing.T) {
	if got := preloadObject([]string{"ROS_PULSE_TIMING=0", "LD_PRELOAD=/x/lib/libros2_pulse.so"}); got != "libros2_pulse.so" {
		t.Errorf("preloadObject = %q", got)
	}
	if got := preloadObject(nil); got != "" {
		t.Errorf("no LD_PRELOAD: %q", got)
	}
}
