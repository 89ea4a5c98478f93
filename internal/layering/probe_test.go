package layering

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// probeFile is a row of docs/ARCHITECTURE.md's table of probe files: its
// place in the table (a family calls only families below it) and its part.
type probeFile struct {
	order int
	core  bool
}

func probeFiles(t *testing.T, root string) map[string]probeFile {
	t.Helper()
	out := map[string]probeFile{}
	for _, m := range architectureRows(t, root, regexp.MustCompile("^\\| `([a-z_]+)\\.c` \\| (core|family) \\|")) {
		out[m[1]] = probeFile{order: len(out), core: m[2] == "core"}
	}
	if len(out) == 0 {
		t.Fatal("docs/ARCHITECTURE.md has no table of probe files")
	}
	return out
}

// symbols compiles each probe file as the Makefile does and returns, per
// file, the symbols it defines and the ones it refers to.
func symbols(t *testing.T, root string, files []string) (defines map[string]string, uses map[string][]string) {
	t.Helper()
	dir := t.TempDir()
	defines, uses = map[string]string{}, map[string][]string{}
	for _, name := range files {
		obj := filepath.Join(dir, name+".o")
		cc := exec.Command("gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-fPIC", "-fvisibility=hidden",
			"-ftls-model=initial-exec", "-Iprobe/include", "-c", "probe/src/"+name+".c", "-o", obj)
		cc.Dir = root
		if out, err := cc.CombinedOutput(); err != nil {
			t.Fatalf("compiling %s.c: %v\n%s", name, err, out)
		}
		out, err := exec.Command("nm", obj).Output()
		if err != nil {
			t.Fatalf("nm %s: %v", obj, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) == 2 && f[0] == "U":
				uses[name] = append(uses[name], f[1])
			case len(f) == 3 && strings.ContainsAny(f[1], "TDBRV"): // global text, data, bss, TLS (B), read-only
				defines[f[2]] = name
			}
		}
	}
	return defines, uses
}

// crossings lists every call against the rule: the core refers to a family,
// or a family to one above it (or to itself through another).
func crossings(files map[string]probeFile, defines map[string]string, uses map[string][]string) []string {
	var out []string
	for user, syms := range uses {
		for _, sym := range syms {
			owner, ok := defines[sym]
			if !ok || owner == user {
				continue
			}
			u, o := files[user], files[owner]
			switch {
			case u.core && !o.core:
				out = append(out, fmt.Sprintf("core file %s.c calls %s of family %s.c", user, sym, owner))
			case !u.core && !o.core && o.order <= u.order:
				out = append(out, fmt.Sprintf("family %s.c calls %s of %s.c, which is not below it", user, sym, owner))
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestProbeCoreCallsNoFamily(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc: the probe's layering is checked where it is built")
	}
	root, _ := filepath.Abs("../..")
	files := probeFiles(t, root)
	sources, _ := filepath.Glob(filepath.Join(root, "probe/src/*.c"))
	var names []string
	for _, s := range sources {
		name := strings.TrimSuffix(filepath.Base(s), ".c")
		if name == "null_shim" { // another library
			continue
		}
		if _, ok := files[name]; !ok {
			t.Errorf("probe/src/%s.c is in no row of docs/ARCHITECTURE.md's table of probe files", name)
		}
		names = append(names, name)
	}
	defines, uses := symbols(t, root, names)
	if len(defines) < 20 {
		t.Fatalf("only %d symbols defined across the probe: nm's output was not read", len(defines))
	}
	for _, c := range crossings(files, defines, uses) {
		t.Error(c)
	}
}

// The rule's own test: the core calling a family, and a family calling one
// above it, are caught; a family calling the core or one below is not.
func TestProbeCrossingsAreCaught(t *testing.T) {
	files := map[string]probeFile{"core": {0, true}, "topics": {1, false}, "links": {2, false}}
	defines := map[string]string{"rp_lanes": "core", "rp_count": "topics", "rp_link": "links"}
	uses := map[string][]string{"core": {"rp_count"}, "topics": {"rp_lanes", "rp_link"}, "links": {"rp_count", "memcpy"}}
	got := crossings(files, defines, uses)
	want := []string{"core file core.c calls rp_count of family topics.c", "family links.c calls rp_count of topics.c, which is not below it"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%q, want %q", got, want)
	}
}
