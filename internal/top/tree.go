package top

import (
	"maps"
	"math"
	"slices"
	"strings"
)

// At robot size (issue 46) the tables fold into a namespace tree: a
// namespace is one row, with its topics' summed rates and worst status, or
// its nodes' count and worst state, until opened (enter). The namespaces
// are the nodes' (as pulse web's): a topic belongs to the deepest of them
// its name starts with, so a node's ~/debug topics sit with it.

// treeAbove is the number of topics above which top starts as a tree.
const treeAbove = 80

// spaces is the set of namespaces the nodes of the frame live in, at every depth.
func spaces(nodes []nodeRow) map[string]bool {
	out := map[string]bool{}
	for _, n := range nodes {
		for _, ns := range prefixes(n.name) {
			out[ns] = true
		}
	}
	return out
}

// prefixes are the namespaces that lead to a name, outermost first: "/a/b/c" -> /a, /a/b.
func prefixes(name string) []string {
	var out []string
	for i := 1; i < len(name); i++ {
		if name[i] == '/' {
			out = append(out, name[:i])
		}
	}
	return out
}

// chainOf is the namespaces of name that are in spaces, outermost first.
func chainOf(name string, sp map[string]bool) []string {
	var out []string
	for _, ns := range prefixes(name) {
		if sp[ns] {
			out = append(out, ns)
		}
	}
	return out
}

// treeNode is one namespace of the fold: its rows and its sub-namespaces.
type treeNode struct {
	name string
	rows []int // indices into the rows folded, in their sorted order
	subs map[string]*treeNode
}

// foldItem is a row in display order, or a namespace's header.
type foldItem struct {
	row   int    // index of a row, or -1 for a namespace header
	ns    string // the header's namespace, or the row's innermost one ("" at the root)
	depth int
	open  bool
	under []int // a header: every row below it, at any depth
}

// fold arranges n rows (named by name(i), already sorted) as a tree and
// returns them in display order: each namespace's header (row -1, with its
// name and depth) then, when open, its own rows and its sub-namespaces by
// name. Root rows come first and are never folded.
func fold(n int, name func(int) string, sp map[string]bool, open func(string) bool) []foldItem {
	root := &treeNode{subs: map[string]*treeNode{}}
	for i := 0; i < n; i++ {
		t := root
		for _, ns := range chainOf(name(i), sp) {
			sub := t.subs[ns]
			if sub == nil {
				sub = &treeNode{name: ns, subs: map[string]*treeNode{}}
				t.subs[ns] = sub
			}
			t = sub
		}
		t.rows = append(t.rows, i)
	}
	var out []foldItem
	var all func(t *treeNode) []int
	all = func(t *treeNode) []int {
		rows := append([]int(nil), t.rows...)
		for _, s := range t.subs {
			rows = append(rows, all(s)...)
		}
		return rows
	}
	var walk func(t *treeNode, depth int)
	walk = func(t *treeNode, depth int) {
		for _, r := range t.rows {
			out = append(out, foldItem{row: r, ns: t.name, depth: depth})
		}
		for _, k := range slices.Sorted(maps.Keys(t.subs)) {
			s := t.subs[k]
			o := open(k)
			out = append(out, foldItem{row: -1, ns: k, depth: depth, open: o, under: all(s)})
			if o {
				walk(s, depth+1)
			}
		}
	}
	walk(root, 0)
	return out
}

// relative is name as shown under namespace ns: without it.
func relative(name, ns string) string {
	if ns != "" && strings.HasPrefix(name, ns+"/") {
		return name[len(ns)+1:]
	}
	return name
}

// foldRows folds rows into the tree in display order: a row keeps its
// fields, placed by its treeFields; a namespace's row is made by header.
func foldRows[R any](rows []R, name func(*R) string, place func(*R) *treeFields, sp map[string]bool, open func(string) bool,
	header func(it foldItem, t treeFields) R) []R {
	items := fold(len(rows), func(i int) string { return name(&rows[i]) }, sp, open)
	out := make([]R, 0, len(items))
	for _, it := range items {
		if it.row < 0 {
			out = append(out, header(it, treeFields{group: it.ns, open: it.open, depth: it.depth, label: it.ns, count: len(it.under)}))
			continue
		}
		r := rows[it.row]
		*place(&r) = treeFields{label: relative(name(&r), it.ns), depth: it.depth}
		out = append(out, r)
	}
	return out
}

// foldTopics folds the topic rows into the tree: a namespace's row sums its
// topics' rates and takes their worst status.
func foldTopics(rows []topicRow, sp map[string]bool, open func(string) bool) []topicRow {
	return foldRows(rows, func(r *topicRow) string { return r.name }, func(r *topicRow) *treeFields { return &r.treeFields }, sp, open,
		func(it foldItem, t treeFields) topicRow {
			h := topicRow{name: "ns:" + it.ns, status: NoData, intra: math.NaN(), lossPct: math.NaN(), gapMs: math.NaN(), silentMs: math.NaN(), bytesPerS: math.NaN(), treeFields: t}
			for _, i := range it.under {
				r := &rows[i]
				if !math.IsNaN(r.pubHz) {
					h.pubHz += r.pubHz
				}
				if !math.IsNaN(r.recvHz) {
					h.recvHz += r.recvHz
				}
				h.pubs += r.pubs
				h.subs += r.subs
				h.status = min(h.status, r.status)
				if r.status == Stalled {
					h.stalled++
				}
			}
			return h
		})
}

// foldNodes folds the node rows into the tree: a namespace's row counts its
// nodes and takes their worst state.
func foldNodes(rows []nodeRow, sp map[string]bool, open func(string) bool) []nodeRow {
	return foldRows(rows, func(r *nodeRow) string { return r.name }, func(r *nodeRow) *treeFields { return &r.treeFields }, sp, open,
		func(it foldItem, t treeFields) nodeRow {
			h := nodeRow{name: "ns:" + it.ns, state: "alive", cpuPct: math.NaN(), busyPct: math.NaN(), costMs: math.NaN(), execPct: math.NaN(), treeFields: t}
			for _, i := range it.under {
				switch rows[i].state {
				case "exited":
					h.exited++
				case "quiet":
					h.quiet++
				}
			}
			switch {
			case h.exited > 0:
				h.state = "exited"
			case h.quiet > 0:
				h.state = "quiet"
			}
			return h
		})
}
