package main

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// `ros2 pulse <verb>` (ros/ros2pulse) has one entry point per verb, written
// in its setup.py, and one class per verb in its verbs.py: both list exactly
// the verbs the binary tells the extension about, so a verb added to pulse
// and not to the extension (or dropped from one) fails here. Every verb has
// its flags and its description.
func TestROS2CLIVerbs(t *testing.T) {
	out, err := pulseCmd(t, "gen-docs", "--ros2cli", "-").Output()
	if err != nil {
		t.Fatalf("pulse gen-docs --ros2cli -: %v", err)
	}
	var doc struct {
		Version string                 `json:"version"`
		Verbs   map[string]ros2cliVerb `json:"verbs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	var binary []string
	for name, v := range doc.Verbs {
		binary = append(binary, name)
		if v.Short == "" || v.Usage == "" || (name != "bench" && !v.Passthrough && len(v.Flags) == 0) || v.Passthrough != (name == "bridge") {
			t.Errorf("verb %s: %+v", name, v)
		}
	}
	sort.Strings(binary)
	if strings.Join(binary, " ") != "bench bridge check cpu demo doctor dump env export graph record run top web" {
		t.Errorf("the binary's verbs: %v", binary)
	}
	if f := doc.Verbs["check"].Flags; !hasFlag(f, "spec", true) || !hasFlag(f, "live", false) {
		t.Errorf("check's flags: %+v", f)
	}

	setup, err := os.ReadFile("../../ros/ros2pulse/setup.py")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)verbs = \[(.*?)\]`).FindSubmatch(setup)
	if m == nil {
		t.Fatalf("setup.py has no verbs list:\n%s", setup)
	}
	var entries []string
	for _, q := range regexp.MustCompile(`'([a-z-]+)'`).FindAllSubmatch(m[1], -1) {
		entries = append(entries, string(q[1]))
	}
	sort.Strings(entries)
	if strings.Join(entries, " ") != strings.Join(binary, " ") {
		t.Errorf("setup.py's verbs %v, the binary's %v", entries, binary)
	}

	classes, err := os.ReadFile("../../ros/ros2pulse/ros2pulse/verb/verbs.py")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range binary {
		class := "class " + strings.ToUpper(name[:1]) + name[1:] + "Verb(PulseVerb):"
		if !strings.Contains(string(classes), class) || !strings.Contains(string(classes), "VERB = '"+name+"'") {
			t.Errorf("verbs.py has no %q with VERB = '%s'", class, name)
		}
	}
}

func hasFlag(flags []ros2cliFlag, name string, value bool) bool {
	for _, f := range flags {
		if f.Name == name {
			return f.Value == value
		}
	}
	return false
}
