package logfmt

import (
	"reflect"
	"strings"
	"testing"

	"ros2_pulse/internal/paths"
	"ros2_pulse/internal/spec"
	"ros2_pulse/internal/window"
)

// linkWindow is a window of a three-topic chain: two links (one rclpy), a
// found path and a named one, a named path through a hop nobody links, and
// a timer's sampled link on to /cmd (a named path through it has a worst
// case beyond its best; no path is found through it).
func linkWindow() *window.Window {
	mk := func(node, from, to string, pid int, rclpy bool, age, own []window.Bucket, ageSum, ownSum float64) window.Link {
		l := window.Link{Pid: pid, Node: node, From: from, To: to, Rclpy: rclpy, Alive: true, AgeHist: age, OwnHist: own}
		for _, b := range age {
			l.N += b.N
		}
		l.Age, l.Own = window.HistStats(age, ageSum), window.HistStats(own, ownSum)
		return l
	}
	w := &window.Window{TsNs: 1764460800123456789, Seconds: 1, Nodes: []string{"/a", "/b"},
		Links: []window.Link{
			mk("/a", "/in", "/mid", 10, false, []window.Bucket{{B: 40, N: 8}, {B: 41, N: 2}}, []window.Bucket{{B: 30, N: 10}}, 31.5, 12),
			mk("/b odd\\name", "/mid", "/out", 11, true, []window.Bucket{{B: 48, N: 10}}, []window.Bucket{{B: 45, N: 10}}, 70, 55),
		}}
	timer := mk("/c", "/out", "/cmd", 12, false, []window.Bucket{{B: 50, N: 10}}, []window.Bucket{{B: 20, N: 10}}, 100, 3)
	timer.Sampled, timer.WorstHist = true, []window.Bucket{{B: 50, N: 4}, {B: 60, N: 6}}
	timer.Worst = window.HistStats(timer.WorstHist, 190)
	w.Links = append(w.Links, timer)
	paths.Fill(w, []spec.PathRule{{Name: "main", Via: []string{"/in", "/mid", "/out"}, MaxMs: 20},
		{Name: "side.path", Via: []string{"/in", "/nowhere"}}, {Name: "to_cmd", Via: []string{"/in", "/mid", "/out", "/cmd"}}})
	return w
}

// Links and paths read back, in both formats, to what was rendered: the
// links' histograms and sums, every path's numbers, names and gaps, and the
// hops rebuilt from the links.
func TestReadLinksAndPaths(t *testing.T) {
	w := linkWindow()
	if len(w.Paths) != 4 || !w.Paths[0].Measured || w.Paths[1].Measured || w.Paths[3].Name != "/in -> /out" {
		t.Fatalf("fixture paths %+v", w.Paths)
	}
	if p := w.Paths[2]; !p.Measured || !p.Hops[2].Sampled || p.Worst.P50Ms <= p.Best.P50Ms || p.Worst.MaxMs <= p.Best.MaxMs ||
		w.Paths[0].Worst != w.Paths[0].Best {
		t.Fatalf("a path through a sampled link: best %+v worst %+v; without one worst %+v = best %+v",
			p.Best, p.Worst, w.Paths[0].Worst, w.Paths[0].Best)
	}
	for _, f := range []Format{Text, JSONL} {
		res := read(t, Render(f, w, Options{}))
		if len(res.Windows) != 1 || res.Malformed != 0 {
			t.Fatalf("%s: %s", f, res)
		}
		got := res.Windows[0]
		if !reflect.DeepEqual(got.Links, w.Links) {
			t.Errorf("%s: links\n got %+v\nwant %+v", f, got.Links, w.Links)
		}
		if len(got.Paths) != len(w.Paths) {
			t.Fatalf("%s: %d paths, want %d", f, len(got.Paths), len(w.Paths))
		}
		for i := range w.Paths {
			g, want := got.Paths[i], w.Paths[i]
			if g.Name != want.Name || g.Named != want.Named || strings.Join(g.Topics, ",") != strings.Join(want.Topics, ",") ||
				g.Measured != want.Measured || g.Missing != want.Missing || g.N != want.N || g.MaxMs != want.MaxMs ||
				!near(g.Best, want.Best) || !near(g.Worst, want.Worst) || !reflect.DeepEqual(g.Hops, want.Hops) {
				t.Errorf("%s: path %d\n got %+v\nwant %+v", f, i, g, want)
			}
		}
	}
}

// near: latencies written to the µs.
func near(a, b window.Latency) bool {
	d := func(x, y float64) bool { return x-y < 0.0005 && y-x < 0.0005 }
	return d(a.MeanMs, b.MeanMs) && d(a.P50Ms, b.P50Ms) && d(a.P99Ms, b.P99Ms) && d(a.MaxMs, b.MaxMs)
}

// A malformed LINK or PATH line is skipped and counted, never half-read.
func TestReadLinksMalformed(t *testing.T) {
	good := string(Render(Text, linkWindow(), Options{}))
	for _, bad := range []string{
		"LINK /in to=/mid node=/a pid=x alive=1 rclpy=0 n=1 unaged=0 age_sum_ms=1 age_hist=40:1 own_sum_ms=1 own_hist=30:1",
		"LINK /in to=/mid node=/a pid=1 alive=1 rclpy=0 n=1 unaged=2 age_sum_ms=1 age_hist=40:1 own_sum_ms=1 own_hist=30:1",
		"LINK /in to=/mid node=/a pid=1 alive=1 rclpy=0 n=1 unaged=0 age_sum_ms=1 age_hist=999:1 own_sum_ms=1 own_hist=30:1",
		"LINK /in to=/mid node=/a pid=1 alive=1 rclpy=0 n=1 unaged=0 age_sum_ms=1 age_hist=40:1 own_sum_ms=1 own_hist=30:1 sampled=1 worst_sum_ms=1",
		"LINK /in to=/mid node=/a pid=1 alive=1 rclpy=0 n=1 unaged=0 age_sum_ms=1 age_hist=40:1 own_sum_ms=1 own_hist=30:1 sampled=1 worst_sum_ms=-1 worst_hist=40:1",
		"PATH name=x named=1 topics=in;out measured=1 missing=- n=1 bound_ms=0 best_mean_ms=1 best_p50_ms=1 best_p99_ms=1 best_max_ms=1 worst_mean_ms=1 worst_p50_ms=1 worst_p99_ms=1 worst_max_ms=1",
		"PATH name=x named=1 topics=/in measured=1 missing=- n=1 bound_ms=0 best_mean_ms=1 best_p50_ms=1 best_p99_ms=1 best_max_ms=1 worst_mean_ms=1 worst_p50_ms=1 worst_p99_ms=1 worst_max_ms=1",
		"PATH name=x named=1 topics=/in;/out measured=1 missing=- n=1",
		"PATH name= named=0 topics=/in;/out measured=1 missing=- n=1 bound_ms=0 best_mean_ms=1 best_p50_ms=1 best_p99_ms=1 best_max_ms=1 worst_mean_ms=1 worst_p50_ms=1 worst_p99_ms=1 worst_max_ms=1",
	} {
		data := strings.Replace(good, "NODE /a\n", bad+"\nNODE /a\n", 1)
		res := read(t, []byte(data))
		if res.Malformed != 1 || len(res.Windows) != 1 || len(res.Windows[0].Paths) != 4 {
			t.Errorf("%q: %s, %d paths", bad, res, len(res.Windows[0].Paths))
		}
	}
}

// A CALL line's node reads back as it was, however odd its name (it was
// escaped twice: a space came back as "\x20").
func TestCallNodeReadsBack(t *testing.T) {
	w := &window.Window{TsNs: 1, Seconds: 1, Calls: []window.Call{{Pid: 7, Node: "/odd node\\x", Name: "/svc", Alive: true, Started: 1}}}
	for _, f := range []Format{Text, JSONL} {
		res := read(t, Render(f, w, Options{}))
		if len(res.Windows) != 1 || len(res.Windows[0].Calls) != 1 || res.Windows[0].Calls[0].Node != "/odd node\\x" {
			t.Errorf("%s: %s, calls %+v", f, res, res.Windows)
		}
	}
}
