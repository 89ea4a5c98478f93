package spec

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// PathRule names an end-to-end path (issue 47): the topics it goes through,
// first (a sensor's) to last (an actuator's), and a bound on its latency.
// Checked only where the probes link callbacks (ROS_PULSE_LINKS=1, which
// `pulse run` sets when a spec names a path).
type PathRule struct {
	Name  string
	Via   []string
	MaxMs float64 // the bound on the path's p99 latency, ms; 0: none (reported, not judged)
	Line  int
}

// NeedsLinks reports whether the spec names a path: the probes must link callbacks.
func (s *Spec) NeedsLinks() bool { return len(s.Paths) > 0 }

// MaxPathTopics bounds a path's via list.
const MaxPathTopics = 64

func (s *Spec) parsePaths(n *yaml.Node) error {
	paths, err := mapping(n, "paths")
	if err != nil {
		return err
	}
	for _, p := range paths {
		name := p[0].Value
		if name == "" || len(name) > 128 || name == "-" {
			return errAt(p[0], "paths: a path's name must be 1 to 128 characters, and not \"-\"")
		}
		r := PathRule{Name: name, Line: p[1].Line}
		pairs, err := mapping(p[1], "path "+name)
		if err != nil {
			return err
		}
		for _, kv := range pairs {
			k, v := kv[0], kv[1]
			switch k.Value {
			case "via":
				if r.Via, err = viaTopics(name, v); err != nil {
					return err
				}
			case "max_ms":
				if r.MaxMs, err = number(k, v); err == nil && r.MaxMs == 0 {
					err = errAt(v, "max_ms must be greater than 0")
				}
				if err != nil {
					return err
				}
			default:
				return errAt(k, "paths %s: unknown key %q (expected via, max_ms)", name, k.Value)
			}
		}
		if len(r.Via) < 2 {
			return errAt(p[1], "paths %s: via must list at least two topics, first to last", name)
		}
		s.Paths = append(s.Paths, r)
	}
	return nil
}

// viaTopics reads a path's topic list: ROS names, each once.
func viaTopics(name string, v *yaml.Node) ([]string, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, errAt(v, "paths %s: via must be a list of topics", name)
	}
	if len(v.Content) > MaxPathTopics {
		return nil, errAt(v, "paths %s: via lists %d topics, at most %d", name, len(v.Content), MaxPathTopics)
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range v.Content {
		if t.Kind != yaml.ScalarNode || !validName(t.Value) {
			return nil, errAt(t, "paths %s: %q is not a topic name (absolute, e.g. /sensing/points)", name, t.Value)
		}
		if seen[t.Value] {
			return nil, errAt(t, "paths %s: %s is listed twice (a path goes through a topic once)", name, t.Value)
		}
		seen[t.Value] = true
		out = append(out, t.Value)
	}
	return out, nil
}

// pathSummary is the Summary part for paths ("", or ", 2 paths").
func (s *Spec) pathSummary() string {
	if len(s.Paths) == 0 {
		return ""
	}
	return fmt.Sprintf(", %d paths", len(s.Paths))
}
