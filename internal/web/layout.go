package web

import (
	"math"
	"sort"

	"ros2_pulse/internal/graph"
)

// Pos is where an entity is drawn, in the page's SVG units.
type Pos struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Layout spacing: columns left to right, rows top to bottom.
const (
	colWidth  = 260.0
	rowHeight = 56.0
)

// layout places the graph's entities left to right, in the direction data
// flows (a publishing node, its topic, a subscribing node one column further
// on), and remembers every place it gave: an entity keeps its place for as
// long as the page runs, and a new one is put below the last of its column.
// So the picture never jumps when a node, topic or edge appears (design
// note 0021: laid out server-side, no script library to vendor).
type layout struct {
	pos    map[string]Pos  // by stable key: "n:<name>@<pid>", "t:<topic>", "s:<service>"
	bottom map[int]float64 // per column, the lowest row used
}

func newLayout() *layout { return &layout{pos: map[string]Pos{}, bottom: map[int]float64{}} }

// key is an entity's identity across windows (graph ids are renumbered by name).
func nodeKey(n *graph.Node) string       { return "n:" + n.Name + "@" + itoa(n.Pid) }
func topicKey(t *graph.Topic) string     { return "t:" + t.Name }
func serviceKey(s *graph.Service) string { return "s:" + s.Name }

// place returns each graph id's position, placing what is new.
func (l *layout) place(g *graph.Graph) map[string]Pos {
	keys := map[string]string{} // graph id -> stable key
	for i := range g.Nodes {
		keys[g.Nodes[i].ID] = nodeKey(&g.Nodes[i])
	}
	for i := range g.Topics {
		keys[g.Topics[i].ID] = topicKey(&g.Topics[i])
	}
	for i := range g.Services {
		keys[g.Services[i].ID] = serviceKey(&g.Services[i])
	}
	l.placeNew(g, keys)
	out := make(map[string]Pos, len(keys))
	for id, k := range keys {
		out[id] = l.pos[k]
	}
	return out
}

// placeNew gives each entity without a place the column of its longest
// incoming path (publishers at 0, their topics at 1, their subscribers at 2,
// ...), feedback loops cut where a depth-first walk from the sources meets
// them (a controller and its odometry feed each other), and the next row of
// that column.
func (l *layout) placeNew(g *graph.Graph, keys map[string]string) {
	out := map[string][]string{}
	in := map[string]int{}
	for _, e := range g.Edges {
		out[e.From] = append(out[e.From], e.To)
		in[e.To]++
	}
	byKey := func(ids []string) {
		sort.Slice(ids, func(i, j int) bool { return keys[ids[i]] < keys[ids[j]] })
	}
	var roots, rest []string
	for id := range keys {
		if in[id] == 0 {
			roots = append(roots, id)
		} else {
			rest = append(rest, id)
		}
	}
	byKey(roots)
	byKey(rest)
	// Depth-first from the sources (then anything left, a pure cycle): an
	// edge back to an entity still on the walk's path closes a loop and is
	// not followed; the rest is a DAG, laid out by longest path.
	const (
		unseen = iota
		onPath
		done
	)
	mark := map[string]int{}
	col := map[string]int{}
	var order []string // reverse postorder: a topological order of the DAG
	var visit func(id string)
	visit = func(id string) {
		mark[id] = onPath
		for _, to := range out[id] {
			if mark[to] == unseen {
				visit(to)
			}
		}
		mark[id] = done
		order = append(order, id)
	}
	for _, id := range append(roots, rest...) {
		if mark[id] == unseen {
			visit(id)
		}
	}
	pos := map[string]int{}
	for i, id := range order {
		pos[id] = i
	}
	for i := len(order) - 1; i >= 0; i-- { // sources first
		id := order[i]
		for _, to := range out[id] {
			if pos[to] < pos[id] && col[id]+1 > col[to] { // a forward edge of the DAG (not one closing a loop)
				col[to] = col[id] + 1
			}
		}
	}
	// New entities column by column, left to right, each column's in the
	// order of where their inputs are drawn (the mean row of the entities
	// feeding them: a barycentre sweep, which uncrosses most edges), then by
	// name; each below the last of its column.
	preds := map[string][]string{}
	for _, e := range g.Edges {
		preds[e.To] = append(preds[e.To], e.From)
	}
	byCol := map[int][]string{}
	var cols []int
	for id, k := range keys {
		if _, ok := l.pos[k]; ok {
			continue // a place once given is kept
		}
		if byCol[col[id]] == nil {
			cols = append(cols, col[id])
		}
		byCol[col[id]] = append(byCol[col[id]], id)
	}
	sort.Ints(cols)
	for _, c := range cols {
		ids := byCol[c]
		centre := map[string]float64{}
		for _, id := range ids {
			sum, n := 0.0, 0
			for _, from := range preds[id] {
				if p, ok := l.pos[keys[from]]; ok {
					sum, n = sum+p.Y, n+1
				}
			}
			centre[id] = math.Inf(1) // fed by nothing drawn: after the rest
			if n > 0 {
				centre[id] = sum / float64(n)
			}
		}
		sort.Slice(ids, func(i, j int) bool {
			if a, b := centre[ids[i]], centre[ids[j]]; a != b {
				return a < b
			}
			return keys[ids[i]] < keys[ids[j]]
		})
		for _, id := range ids {
			y := l.bottom[c] + rowHeight
			l.bottom[c] = y
			l.pos[keys[id]] = Pos{X: 40 + float64(c)*colWidth, Y: y}
		}
	}
}
