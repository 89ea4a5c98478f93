package diagnose

import (
	"path"
	"slices"
	"sort"
	"strings"

	"ros2_pulse/internal/window"
)

// nearCache keeps Near's answers for one set of candidate names. A memo
// diagnoses again whenever a subscription hears its first message, which
// changes no name: the names are searched again only when the set changes
// (issue 46: at robot size a diagnosis was ~50 ms, nearly all of it Near,
// and a slow graph's first messages arrive window after window).
type nearCache struct {
	names []string            // the candidates, sorted
	near  map[string][]string // topic -> Near(topic, names)
}

// use makes candidates (in any order) the names the cache answers for,
// keeping its answers if they are the names it holds.
func (c *nearCache) use(candidates []string) {
	if c.near != nil && sameNames(c.names, candidates) {
		return
	}
	c.names = append(c.names[:0], candidates...)
	sort.Strings(c.names)
	c.near = map[string][]string{}
}

// of is Near(topic, the names last given to use).
func (c *nearCache) of(topic string) []string {
	near, ok := c.near[topic]
	if !ok {
		near = Near(topic, c.names)
		c.near[topic] = near
	}
	return near
}

// sameNames says whether the unsorted names are the sorted ones.
func sameNames(sorted, names []string) bool {
	if len(sorted) != len(names) {
		return false
	}
	for _, n := range names {
		if _, found := slices.BinarySearch(sorted, n); !found {
			return false
		}
	}
	return true
}

// Near returns the names among candidates one namespace, remap or typo away
// from topic: the same last segment in another namespace, one name ending
// the other at a '/', or an edit distance of at most 2 (names of 5 bytes or
// more). Nearest first.
func Near(topic string, candidates []string) []string {
	type hit struct {
		name string
		d    int
	}
	var hits []hit
	base := path.Base(topic)
	for _, c := range candidates {
		if c == topic || window.IsBuiltin(c) {
			continue
		}
		switch {
		case path.Base(c) == base, strings.HasSuffix(c, topic) && strings.HasSuffix(c[:len(c)-len(topic)+1], "/"),
			strings.HasSuffix(topic, c) && strings.HasSuffix(topic[:len(topic)-len(c)+1], "/"):
		case len(topic) >= 5 && len(c) >= 5 && withinEdits(topic, c, 2):
		default:
			continue
		}
		hits = append(hits, hit{c, levenshtein(topic, c)})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].d != hits[j].d {
			return hits[i].d < hits[j].d
		}
		return hits[i].name < hits[j].name
	})
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.name
	}
	return out
}

// editRows is two rows of an edit-distance table: on the stack for names
// of up to 127 bytes, so the ~360,000 pairs of a robot's diagnosis
// allocate nothing.
func editRows(n int, prevBuf, curBuf *[128]int) (prev, cur []int) {
	if n <= len(prevBuf) {
		return prevBuf[:n], curBuf[:n]
	}
	return make([]int, n), make([]int, n)
}

// withinEdits reports whether a and b are at most k edits apart, looking
// only at the cells within k of the diagonal and stopping once a whole row
// is over k: a robot's ~600 topic names make ~360,000 pairs a diagnosis,
// nearly all of them far apart (issue 46: the full distance of every pair
// was 60 % of pulse web's CPU on the robot graph).
func withinEdits(a, b string, k int) bool {
	if len(a)-len(b) > k || len(b)-len(a) > k {
		return false
	}
	const far = 1 << 30
	var prevBuf, curBuf [128]int
	prev, cur := editRows(len(b)+1, &prevBuf, &curBuf)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-k), min(len(b), i+k)
		best := far
		if lo == 1 {
			cur[0], best = i, i
		} else {
			cur[lo-1] = far // left of the band
		}
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			up := far
			if j <= i-1+k { // prev[j] lies in the previous row's band
				up = prev[j]
			}
			cur[j] = min(up+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if hi < len(b) {
			cur[hi+1] = far
		}
		if best > k {
			return false
		}
		prev, cur = cur, prev
	}
	return prev[len(b)] <= k
}

func levenshtein(a, b string) int {
	var prevBuf, curBuf [128]int
	prev, cur := editRows(len(b)+1, &prevBuf, &curBuf)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
