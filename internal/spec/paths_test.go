package spec

import (
	"slices"
	"strings"
	"testing"
)

func TestParsePaths(t *testing.T) {
	s, err := Parse([]byte(`paths:
  lidar_to_cmd: {via: [/sensing/points, /perception/objects, /control/command], max_ms: 150}
  camera:
    via: [/sensing/image, /perception/camera_objects]
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Paths) != 2 || !s.NeedsLinks() {
		t.Fatalf("%+v", s.Paths)
	}
	p := s.Paths[0]
	if p.Name != "lidar_to_cmd" || p.MaxMs != 150 || p.Line != 2 ||
		!slices.Equal(p.Via, []string{"/sensing/points", "/perception/objects", "/control/command"}) {
		t.Errorf("%+v", p)
	}
	if s.Paths[1].MaxMs != 0 || !strings.Contains(s.Summary(), "2 paths") {
		t.Errorf("%+v, %q", s.Paths[1], s.Summary())
	}
}

func TestParsePathErrors(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"paths:\n  p: {via: /a}\n", "line 2: paths p: via must be a list of topics"},
		{"paths:\n  p: {via: [/a]}\n", "via must list at least two topics"},
		{"paths:\n  p: {max_ms: 5}\n", "via must list at least two topics"},
		{"paths:\n  p: {via: [/a, b]}\n", `"b" is not a topic name`},
		{"paths:\n  p: {via: [/a, /b, /a]}\n", "/a is listed twice"},
		{"paths:\n  p: {via: [/a, /b], max_ms: 0}\n", "max_ms must be greater than 0"},
		{"paths:\n  p: {via: [/a, /b], max_ms: soon}\n", "max_ms must be a number"},
		{"paths:\n  p: {via: [/a, /b], within: 5}\n", `unknown key "within" (expected via, max_ms)`},
		{"paths:\n  \"-\": {via: [/a, /b]}\n", `not "-"`},
		{"paths: [/a, /b]\n", "paths must be a mapping"},
		{"paths:\n  p: {via: [/a, /b]}\n  p: {via: [/c, /d]}\n", `key "p" repeated`},
	} {
		_, err := Parse([]byte(c.spec))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.spec, err, c.want)
		}
	}
}
