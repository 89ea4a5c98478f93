package main

import (
	"encoding/json"
	"io"
	"sort"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The ros2cli extension (ros/ros2pulse, `ros2 pulse <verb>`) asks the pulse
// binary it runs for its verbs and their flags, so that `ros2 pulse top -h`
// and argcomplete show exactly what that binary takes (design note 0034).

// ros2cliVerb is one pulse subcommand as the extension's argparse sees it.
type ros2cliVerb struct {
	Short string        `json:"short"`
	Usage string        `json:"usage"` // cobra's Use: "check [spec.yaml]"
	Flags []ros2cliFlag `json:"flags"`
	Verbs []string      `json:"verbs,omitempty"` // its own subcommands (bench hotpath …): passed through as they are
	// Passthrough: pulse does not parse its flags (bridge hands them to
	// pulse-bridge); they are passed through unchecked.
	Passthrough bool `json:"passthrough,omitempty"`
}

// ros2cliFlag is one flag: Value false for a switch (--strict), true for a
// flag that takes one (--window 2s); Repeat when it may be given again.
type ros2cliFlag struct {
	Name      string `json:"name"`
	Shorthand string `json:"shorthand,omitempty"`
	Usage     string `json:"usage"`
	Default   string `json:"default,omitempty"`
	Value     bool   `json:"value"`
	Repeat    bool   `json:"repeat,omitempty"`
}

// writeROS2CLI writes every visible subcommand of root, with its flags, as JSON.
func writeROS2CLI(root *cobra.Command, out io.Writer) error {
	verbs := map[string]ros2cliVerb{}
	for _, c := range root.Commands() {
		if c.Hidden || !c.IsAvailableCommand() || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		v := ros2cliVerb{Short: c.Short, Usage: c.Use, Flags: []ros2cliFlag{}, Passthrough: c.DisableFlagParsing}
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) { v.Flags = append(v.Flags, flagOf(f)) })
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && f.Name != "help" {
				v.Flags = append(v.Flags, flagOf(f))
			}
		})
		sort.Slice(v.Flags, func(i, j int) bool { return v.Flags[i].Name < v.Flags[j].Name })
		for _, sub := range c.Commands() {
			if !sub.Hidden && sub.IsAvailableCommand() {
				v.Verbs = append(v.Verbs, sub.Name())
			}
		}
		verbs[c.Name()] = v
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", " ")
	return enc.Encode(struct {
		Version string                 `json:"version"`
		Verbs   map[string]ros2cliVerb `json:"verbs"`
	}{version, verbs})
}

func flagOf(f *pflag.Flag) ros2cliFlag {
	t := f.Value.Type()
	repeat := t == "stringSlice" || t == "stringArray" || t == "intSlice" || t == "count" || t == "stringToString"
	def := f.DefValue
	if def == "[]" || def == "false" {
		def = ""
	}
	return ros2cliFlag{Name: f.Name, Shorthand: f.Shorthand, Usage: f.Usage, Default: def, Value: f.NoOptDefVal == "", Repeat: repeat}
}
