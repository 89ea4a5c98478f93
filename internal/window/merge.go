package window

import (
	"math"
	"sort"
)

// Merge combines windows of the same moment from different sources (the
// per-process logs of upstream, or several machines' logs) into one, as
// upstream's pulse-check does: rates are summed per topic (the sources count
// different processes), gap maxima take the max of the maxima, nodes,
// timers, processes, services, calls, callbacks, threads, diagnoses, links
// and paths are the union (a client's server is judged on its own machine,
// as recorded).
// The first window gives the time.
func Merge(ws []*Window) *Window {
	if len(ws) == 1 {
		return ws[0]
	}
	out := &Window{TsNs: ws[0].TsNs, Seconds: ws[0].Seconds, Detail: true}
	topics := map[string]*Topic{}
	nodes := map[string]bool{}
	for _, w := range ws {
		out.Lean = out.Lean || w.Lean // some source's detail is not here: not judged as absent
		out.Detail = out.Detail && w.Detail
		for i := range w.Topics {
			src := &w.Topics[i]
			t := topics[src.Name]
			if t == nil {
				t = &Topic{Name: src.Name}
				topics[src.Name] = t
			}
			t.PubInter += src.PubInter
			t.PubIntra += src.PubIntra
			t.PubAny += src.PubAny
			t.RecvInter += src.RecvInter
			t.RecvIntra += src.RecvIntra
			t.PubCount += src.PubCount
			t.SubCount += src.SubCount
			t.PubInterSeen = t.PubInterSeen || src.PubInterSeen
			t.PubIntraSeen = t.PubIntraSeen || src.PubIntraSeen
			t.RecvSeen = t.RecvSeen || src.RecvSeen
			t.Pubs = append(t.Pubs, src.Pubs...)
			t.Subs = append(t.Subs, src.Subs...)
			t.Exposure = math.Max(t.Exposure, src.Exposure)
			mergeGap(&t.PubGap, &src.PubGap)
			mergeGap(&t.RecvGap, &src.RecvGap)
		}
		for _, n := range w.Nodes {
			if !nodes[n] {
				nodes[n] = true
				out.Nodes = append(out.Nodes, n)
			}
		}
		out.Timers = append(out.Timers, w.Timers...)
		out.Procs = append(out.Procs, w.Procs...)
		out.Services = append(out.Services, w.Services...)
		out.Calls = append(out.Calls, w.Calls...)
		out.Callbacks = append(out.Callbacks, w.Callbacks...)
		out.Busy = append(out.Busy, w.Busy...)
		out.Threads = append(out.Threads, w.Threads...)
		out.Unmatched = append(out.Unmatched, w.Unmatched...)
		out.Links = append(out.Links, w.Links...) // each machine's own processes
		out.Paths = append(out.Paths, w.Paths...)
	}
	for _, t := range topics {
		out.Topics = append(out.Topics, *t)
	}
	sort.Slice(out.Topics, func(i, j int) bool { return out.Topics[i].Name < out.Topics[j].Name })
	sort.SliceStable(out.Timers, func(i, j int) bool { return out.Timers[i].Node < out.Timers[j].Node })
	sort.SliceStable(out.Procs, func(i, j int) bool { return out.Procs[i].Pid < out.Procs[j].Pid })
	return out
}

// mergeGap keeps the worst of two sides' gaps. Period statistics of
// different endpoints do not combine from summaries; the larger sample wins.
func mergeGap(dst, src *GapStats) {
	if !src.HasData {
		return
	}
	if !dst.HasData || src.N > dst.N {
		maxMs, openMs := math.Max(dst.MaxMs, src.MaxMs), math.Max(dst.OpenMs, src.OpenMs)
		*dst = *src
		dst.MaxMs, dst.OpenMs = maxMs, openMs
		return
	}
	dst.MaxMs = math.Max(dst.MaxMs, src.MaxMs)
	dst.OpenMs = math.Max(dst.OpenMs, src.OpenMs)
}
