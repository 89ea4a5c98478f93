package layering

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "ros2_pulse/"

// architectureRows returns the submatches of row for every line of
// docs/ARCHITECTURE.md it matches, in order: the tests read the document, so
// the picture a newcomer reads and the rules the code keeps are one text.
func architectureRows(t *testing.T, root string, row *regexp.Regexp) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs/ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, line := range strings.Split(string(b), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// levels reads the table of levels from docs/ARCHITECTURE.md: rows
// "| N | name | `pkg`, `pkg` | ... |".
func levels(t *testing.T, root string) map[string]int {
	t.Helper()
	pkg := regexp.MustCompile("`([a-z0-9_/-]+)`")
	out := map[string]int{}
	for _, m := range architectureRows(t, root, regexp.MustCompile(`^\|\s*(\d+)\s*\|[^|]*\|([^|]*)\|`)) {
		n, _ := strconv.Atoi(m[1])
		for _, p := range pkg.FindAllStringSubmatch(m[2], -1) {
			if old, dup := out[p[1]]; dup {
				t.Errorf("docs/ARCHITECTURE.md puts %s on levels %d and %d", p[1], old, n)
			}
			out[p[1]] = n
		}
	}
	if len(out) == 0 {
		t.Fatal("docs/ARCHITECTURE.md has no table of levels")
	}
	return out
}

type goPackage struct {
	ImportPath string
	Imports    []string
}

// packages lists the module's packages and their own (non-test) imports,
// with every build tag the project uses, so no file escapes the rule.
func packages(t *testing.T, root string) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-tags", "cyclonedds,fleet", "-json=ImportPath,Imports", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// upward lists every import of a module package that does not go to a lower
// level, and every package on no level.
func upward(level map[string]int, pkgs []goPackage) []string {
	var out []string
	for _, p := range pkgs {
		name := strings.TrimPrefix(p.ImportPath, module)
		mine, ok := level[name]
		if !ok {
			out = append(out, name+" is on no level of docs/ARCHITECTURE.md: give it one")
			continue
		}
		for _, imp := range p.Imports {
			dep, ours := strings.CutPrefix(imp, module)
			if l, ok := level[dep]; ours && ok && l >= mine {
				out = append(out, fmt.Sprintf("%s (level %d) imports %s (level %d): a package imports only lower levels", name, mine, dep, l))
			}
		}
	}
	return out
}

func TestGoImportsGoDown(t *testing.T) {
	root, _ := filepath.Abs("../..")
	level := levels(t, root)
	pkgs := packages(t, root)
	for _, v := range upward(level, pkgs) {
		t.Error(v)
	}
	listed := map[string]bool{}
	for _, p := range pkgs {
		listed[strings.TrimPrefix(p.ImportPath, module)] = true
	}
	for name := range level {
		if !listed[name] {
			t.Errorf("docs/ARCHITECTURE.md names %s, which is no package", name)
		}
	}
}

// The rule's own test: a view importing another view, a model importing a
// view, and a package the table forgot are each caught.
func TestUpwardImportsAreCaught(t *testing.T) {
	level := map[string]int{"internal/segment": 0, "internal/window": 1, "internal/top": 6, "internal/web": 6}
	pkgs := []goPackage{
		{ImportPath: module + "internal/window", Imports: []string{module + "internal/segment", "fmt"}},
		{ImportPath: module + "internal/top", Imports: []string{module + "internal/web"}},
		{ImportPath: module + "internal/segment", Imports: []string{module + "internal/window"}},
		{ImportPath: module + "internal/newthing"},
	}
	got := upward(level, pkgs)
	if len(got) != 3 || !strings.Contains(got[0], "internal/top (level 6) imports internal/web") ||
		!strings.Contains(got[1], "internal/segment (level 0) imports internal/window") || !strings.Contains(got[2], "internal/newthing is on no level") {
		t.Errorf("%q", got)
	}
}
