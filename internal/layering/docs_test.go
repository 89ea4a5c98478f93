package layering

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every relative link of the README and of docs/*.md names a file that
// exists: the README sends a newcomer to the reference pages, and a page
// moved or renamed must not leave a dead link behind.
func TestDocLinksResolve(t *testing.T) {
	root, _ := filepath.Abs("../..")
	pages, _ := filepath.Glob(filepath.Join(root, "docs/*.md"))
	pages = append(pages, filepath.Join(root, "README.md"))
	link := regexp.MustCompile(`\]\(([^)\s#]+)(#[^)]*)?\)`)
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), target)); err != nil {
				rel, _ := filepath.Rel(root, page)
				t.Errorf("%s links to %s, which does not exist", rel, target)
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d relative links found: the pattern no longer reads the pages", checked)
	}
}

// The README is a quick start a newcomer reads in ten minutes; the
// reference lives in docs/.
func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 300 {
		t.Errorf("README.md has %d lines; move reference material to docs/ (at most 300)", n)
	}
	for _, must := range []string{"make demo", "make test", "pulse run -- ros2 launch"} {
		if !strings.Contains(string(b), must) {
			t.Errorf("README.md no longer says %q", must)
		}
	}
}
