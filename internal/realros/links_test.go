package realros

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"ros2_pulse/internal/paths"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// chainVia is the lane's pipeline: a lidar, a filter in its process, then a
// detector and a planner in a second, intra-process one (the detector hands
// its objects to the planner through rclcpp's ring buffer), and a base that
// takes the commands in the first process (so they also cross the
// middleware, as a robot's do).
var chainVia = []string{"/chain/points", "/chain/filtered", "/chain/objects", "/chain/cmd"}

// TestLatencyLinks (issue 47): an rclcpp chain of four nodes across two
// processes with one intra-process hop, links on. pulse links exactly each
// relay's input to its output, each link's age agrees with the node's own
// per-message latency (from its input's send to its publish), and the path
// named over the chain agrees with the planner's per-message age since the
// lidar sent it: p50 and p99 within 10 % or 0.5 ms, a max no message
// exceeded. Humble fires nothing for an intra-process publish or delivery:
// there the detector's and planner's links are not seen, and the path says
// which hop is not measured. A monitor's timer samples the commands (a
// sampled link, rule 3): its best and worst cases agree with the ages the
// monitor kept at each publish.
func TestLatencyLinks(t *testing.T) {
	l := setup(t)
	r := l.newRun(t, "ROS_PULSE_LINKS=1")
	second := r.node("chain_b", "cpp", "", "--intra", "--duration", "9",
		"--node", "/chain/detector", "--relay", "/chain/filtered,/chain/objects,3",
		"--node", "/chain/planner", "--relay", "/chain/objects,/chain/cmd,1")
	first := r.node("chain_a", "cpp", "", "--multi", "2", "--duration", "9",
		"--node", "/chain/lidar", "--pub", "/chain/points,20,1000,0,stamped",
		"--node", "/chain/filter", "--relay", "/chain/points,/chain/filtered,2",
		"--node", "/chain/base", "--sub", "/chain/cmd",
		"--node", "/chain/monitor", "--sample", "/chain/cmd,/chain/status,4")
	r.waitAll(60 * time.Second)
	truth := map[string]*Endpoint{} // node's relay publisher, by node
	var monitor *Endpoint           // the sampling timer's publisher
	for _, p := range []*proc{first, second} {
		tr := r.truth(p)
		for i := range tr.Endpoints {
			if e := &tr.Endpoints[i]; e.Kind == "publisher" && len(e.AgesNs) > 0 {
				truth[e.Node] = e
			} else if e.Kind == "publisher" && len(e.SampledBestNs) > 0 {
				monitor = e
			}
		}
	}
	if monitor == nil {
		t.Fatal("the monitor sampled nothing: the test proves nothing")
	}
	if len(truth) != 3 {
		t.Fatalf("relays with truth: %d, want the filter, detector and planner", len(truth))
	}
	w := window.Compute(nil, r.scan(), 0, 0, window.Options{})
	links := w.Links
	for i := range links {
		links[i].Alive = true // the run as one window: every hop that ever linked
	}
	want := []string{"/chain/filter /chain/points -> /chain/filtered", "/chain/monitor /chain/cmd -> /chain/status (sampled)"}
	if !l.humble() {
		want = append(want, "/chain/detector /chain/filtered -> /chain/objects", "/chain/planner /chain/objects -> /chain/cmd")
	}
	var got []string
	for _, k := range links {
		if k.N > 0 && k.Sampled {
			got = append(got, k.Node+" "+k.From+" -> "+k.To+" (sampled)")
			judgeSampled(t, &k, monitor)
		} else if k.N > 0 {
			got = append(got, k.Node+" "+k.From+" -> "+k.To)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("links found:\n  %v\nwant\n  %v", got, want)
	}
	for _, k := range links {
		e := truth[k.Node]
		if e == nil || k.N == 0 || k.Sampled {
			continue
		}
		if k.N != uint64(len(e.AgesNs)) || k.Rclpy {
			t.Errorf("%s: pulse linked %d publishes (rclpy %v); the node relayed %d", k.Node, k.N, k.Rclpy, len(e.AgesNs))
		}
		mean := meanMs(e.AgesNs)
		if math.Abs(k.Age.MeanMs-mean) > math.Max(0.1*mean, 0.5) {
			t.Errorf("%s: pulse's age %.3f ms mean, the node's own %.3f ms", k.Node, k.Age.MeanMs, mean)
		}
		table(t, "latency link: "+k.Node+" "+k.From+" -> "+k.To, fmt.Sprintf("%d, age mean %.3f ms", k.N, k.Age.MeanMs),
			fmt.Sprintf("%d, mean %.3f ms", len(e.AgesNs), mean))
	}
	ps := paths.Of(links, []spec.PathRule{{Name: "chain", Via: chainVia}})
	p := ps[0]
	if l.humble() {
		if want := "/chain/filtered -> /chain/objects"; p.Measured || p.Missing != want {
			t.Errorf("path: measured %v, missing %q; want not measured at %q", p.Measured, p.Missing, want)
		}
		table(t, "end-to-end path (intra-process hop)", "not measured: "+p.Missing, "(Humble fires nothing intra-process)")
		return
	}
	ages := sortedNs(truth["/chain/planner"].PathAgesNs)
	if !p.Measured || p.N != uint64(len(ages)) || len(ages) < 100 {
		t.Fatalf("path measured %v (missing %q) over %d messages; the planner relayed %d", p.Measured, p.Missing, p.N, len(ages))
	}
	for _, q := range []struct {
		name    string
		got, at float64
	}{{"p50", p.Best.P50Ms, 0.5}, {"p99", p.Best.P99Ms, 0.99}} {
		if want := quantileNs(ages, q.at); math.Abs(q.got-want) > math.Max(0.1*want, 0.5) {
			t.Errorf("path %s %.3f ms, the nodes' own %.3f ms", q.name, q.got, want)
		}
	}
	if top := quantileNs(ages, 1); p.Best.MaxMs < top {
		t.Errorf("path max %.3f ms is below the oldest message's %.3f ms", p.Best.MaxMs, top)
	}
	table(t, "end-to-end path (intra-process hop)", fmt.Sprintf("p50 %.2f p99 %.2f max %.2f ms", p.Best.P50Ms, p.Best.P99Ms, p.Best.MaxMs),
		fmt.Sprintf("p50 %.2f p99 %.2f max %.2f ms", quantileNs(ages, 0.5), quantileNs(ages, 0.99), quantileNs(ages, 1)))
}

// judgeSampled holds a sampled link to the monitor's own ages at each of
// its publishes: the same publishes, best case (its input's latest
// message) and worst case (the first since its previous publish) p50 and
// p99 within 10 % or 0.5 ms.
func judgeSampled(t *testing.T, k *window.Link, monitor *Endpoint) {
	t.Helper()
	if k.N != uint64(len(monitor.SampledBestNs)) {
		t.Errorf("sampled link: pulse linked %d publishes; the monitor sampled %d", k.N, len(monitor.SampledBestNs))
	}
	for _, c := range []struct {
		name  string
		got   window.Durations
		truth []int64
	}{{"best", k.Age, sortedNs(monitor.SampledBestNs)}, {"worst", k.Worst, sortedNs(monitor.SampledWorstNs)}} {
		for _, q := range []struct {
			name    string
			got, at float64
		}{{"p50", c.got.P50Ms, 0.5}, {"p99", c.got.P99Ms, 0.99}} {
			if want := quantileNs(c.truth, q.at); math.Abs(q.got-want) > math.Max(0.1*want, 0.5) {
				t.Errorf("sampled link %s %s %.3f ms, the monitor's own %.3f ms", c.name, q.name, q.got, want)
			}
		}
		table(t, "sampled link ("+c.name+" case): "+k.Node+" "+k.From+" -> "+k.To,
			fmt.Sprintf("%d, p50 %.2f p99 %.2f ms", k.N, c.got.P50Ms, c.got.P99Ms),
			fmt.Sprintf("%d, p50 %.2f p99 %.2f ms", len(c.truth), quantileNs(c.truth, 0.5), quantileNs(c.truth, 0.99)))
	}
}

func meanMs(ns []int64) float64 {
	var sum float64
	for _, v := range ns {
		sum += float64(v)
	}
	return sum / float64(max(len(ns), 1)) / 1e6
}

func sortedNs(ns []int64) []int64 {
	out := slices.Clone(ns)
	slices.Sort(out)
	return out
}

// quantileNs is the q quantile of sorted ns, in ms: the smallest value at
// least a share q of them do not exceed.
func quantileNs(sorted []int64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return float64(sorted[max(i, 0)]) / 1e6
}
