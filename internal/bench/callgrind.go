package bench

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// Profile is what a callgrind output file says of each function as a
// callee: the instructions spent in it and below it, summed over every call
// site, and of every call edge; its first event (Ir) only.
type Profile struct {
	Total  uint64                // the program's instructions (its summary or totals line)
	Events []string              // the file's event names, Ir first
	Funcs  map[Func]*FuncCost    // by object and function
	Edges  map[[2]Func]*FuncCost // caller -> callee: calls and inclusive cost of those calls
	Self   map[string]uint64     // instructions executed in each object (its base name)
	// Every event of the summary line and each object's own share of each
	// (with --cache-sim=yes: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw)
	TotalEvents []uint64
	SelfEvents  map[string][]uint64
}

// Func names a function by its object's base name and its symbol.
type Func struct{ Object, Name string }

// FuncCost is a call count and the inclusive instructions of those calls.
type FuncCost struct{ Calls, Incl uint64 }

// maxProfileLine bounds one line of a callgrind file (C++ symbols run long).
const maxProfileLine = 1 << 20

// ParseCallgrind reads a callgrind output file (format version 1, with or
// without name compression). Anything it cannot read is an error naming
// the line.
func ParseCallgrind(r io.Reader) (*Profile, error) {
	p := &Profile{Funcs: map[Func]*FuncCost{}, Edges: map[[2]Func]*FuncCost{}, Self: map[string]uint64{},
		SelfEvents: map[string][]uint64{}}
	names := map[string]map[string]string{"ob": {}, "fn": {}}
	// "(id) name" defines id, "(id)" refers to it, a bare name is itself
	name := func(kind, v string) (string, error) {
		if !strings.HasPrefix(v, "(") {
			return v, nil
		}
		end := strings.IndexByte(v, ')')
		if end < 0 {
			return "", fmt.Errorf("unclosed name id %q", v)
		}
		id, rest := v[1:end], strings.TrimSpace(v[end+1:])
		if rest != "" {
			names[kind][id] = rest
			return rest, nil
		}
		n, ok := names[kind][id]
		if !ok {
			return "", fmt.Errorf("name id (%s) used before it is defined", id)
		}
		return n, nil
	}
	var ob, cob, fn, cfn string
	var calls uint64
	inCall := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxProfileLine)
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		fail := func(err error) (*Profile, error) { return nil, fmt.Errorf("callgrind line %d: %v", ln, err) }
		key, val, isKey := strings.Cut(line, "=")
		if isKey && !strings.ContainsAny(key, " \t") && key != "" {
			var err error
			switch key {
			case "ob":
				ob, err = name("ob", val)
				ob = filepath.Base(ob)
			case "cob":
				cob, err = name("ob", val)
				cob = filepath.Base(cob)
			case "fn":
				fn, err = name("fn", val)
				cob = ""
			case "cfn":
				cfn, err = name("fn", val)
			case "calls":
				f := strings.Fields(val)
				if len(f) == 0 {
					return fail(fmt.Errorf("calls= with no count"))
				}
				calls, err = strconv.ParseUint(f[0], 10, 64)
				inCall = true
			}
			if err != nil {
				return fail(err)
			}
			continue
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "events:"):
			p.Events = f[1:]
		case strings.HasPrefix(line, "summary:") || strings.HasPrefix(line, "totals:"):
			if len(f) < 2 {
				return fail(fmt.Errorf("%s with no count", f[0]))
			}
			all, err := parseCosts(f[1:])
			if err != nil {
				return fail(err)
			}
			p.Total, p.TotalEvents = all[0], all
		case isCostLine(line):
			if len(f) < 2 { // a position with no cost: nothing spent
				inCall = false
				continue
			}
			cost, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return fail(err)
			}
			if fn == "" {
				return fail(fmt.Errorf("a cost before any fn="))
			}
			caller := Func{ob, fn}
			if inCall {
				callee := Func{ob, cfn}
				if cob != "" {
					callee.Object = cob
				}
				add(p.Funcs, callee, calls, cost)
				e := p.Edges[[2]Func{caller, callee}]
				if e == nil {
					e = &FuncCost{}
					p.Edges[[2]Func{caller, callee}] = e
				}
				e.Calls += calls
				e.Incl += cost
				inCall, cob = false, ""
			} else {
				p.Self[ob] += cost
				all, err := parseCosts(f[1:])
				if err != nil {
					return fail(err)
				}
				se := p.SelfEvents[ob]
				for len(se) < len(all) {
					se = append(se, 0)
				}
				for i, c := range all {
					se[i] += c
				}
				p.SelfEvents[ob] = se
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(p.Events) == 0 || p.Events[0] != "Ir" {
		return nil, fmt.Errorf("not a callgrind profile of instructions (events %v)", p.Events)
	}
	return p, nil
}

// parseCosts reads a cost line's (or the summary's) numbers; at most 64.
func parseCosts(f []string) ([]uint64, error) {
	if len(f) > 64 {
		return nil, fmt.Errorf("%d costs on one line", len(f))
	}
	out := make([]uint64, len(f))
	for i, s := range f {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// Event is the summary's count of the named event, and the named object's own
// (obj "": the whole program's); false when the profile has no such event.
func (p *Profile) Event(name, obj string) (uint64, bool) {
	for i, e := range p.Events {
		if e != name {
			continue
		}
		src := p.TotalEvents
		if obj != "" {
			src = p.SelfEvents[obj]
		}
		if i < len(src) {
			return src[i], true
		}
		return 0, obj != ""
	}
	return 0, false
}

func add(m map[Func]*FuncCost, f Func, calls, cost uint64) {
	c := m[f]
	if c == nil {
		c = &FuncCost{}
		m[f] = c
	}
	c.Calls += calls
	c.Incl += cost
}

// isCostLine: a position (a number, or +N, -N, * relative to the last) then costs.
func isCostLine(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	return c >= '0' && c <= '9' || c == '+' || c == '-' || c == '*'
}

// Own is what a wrapper in object obj spends of its own per call: its
// inclusive instructions less those of the function it wraps (the same
// symbol in another object, called from obj: forwarding's target), and
// the number of calls. Zero calls: it never ran.
func (p *Profile) Own(obj, fn string) (perCall float64, calls uint64) {
	c := p.Funcs[Func{obj, fn}]
	if c == nil || c.Calls == 0 {
		return 0, 0
	}
	var wrapped uint64
	for e, cost := range p.Edges {
		if e[0].Object == obj && e[1].Name == fn && e[1].Object != obj {
			wrapped += cost.Incl
		}
	}
	if wrapped > c.Incl {
		wrapped = c.Incl
	}
	return float64(c.Incl-wrapped) / float64(c.Calls), c.Calls
}
