package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// genDocsCmd writes the man pages and shell completions the Debian packages
// ship (scripts/package.sh), from the commands themselves so they cannot
// drift. Hidden: it is for packagers.
func genDocsCmd(root *cobra.Command) *cobra.Command {
	var manDir, compDir, ros2cli string
	c := &cobra.Command{
		Use:    "gen-docs [--man DIR] [--completions DIR] [--ros2cli FILE]",
		Short:  "Write man pages (section 1), bash, zsh and fish completions, and the verbs for ros2 pulse",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if manDir == "" && compDir == "" && ros2cli == "" {
				return fmt.Errorf("give --man DIR, --completions DIR, --ros2cli FILE or several")
			}
			if ros2cli == "-" { // ros/ros2pulse asks the binary it runs
				return writeROS2CLI(root, cmd.OutOrStdout())
			} else if ros2cli != "" {
				f, err := os.Create(ros2cli)
				if err != nil {
					return err
				}
				err = writeROS2CLI(root, f)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return fmt.Errorf("ros2cli verbs: %w", err)
				}
			}
			if manDir != "" {
				escapeAngles(root)
				// cobra dates the pages from SOURCE_DATE_EPOCH when set: reproducible packages.
				hdr := &doc.GenManHeader{Title: "PULSE", Section: "1", Source: "ros2_pulse " + version, Manual: "ros2_pulse manual"}
				if err := doc.GenManTree(root, hdr, manDir); err != nil {
					return fmt.Errorf("man pages: %w", err)
				}
			}
			if compDir != "" {
				for name, gen := range map[string]func(*os.File) error{
					"pulse.bash": func(f *os.File) error { return root.GenBashCompletionV2(f, true) },
					"_pulse":     func(f *os.File) error { return root.GenZshCompletion(f) },
					"pulse.fish": func(f *os.File) error { return root.GenFishCompletion(f, true) },
				} {
					f, err := os.Create(filepath.Join(compDir, name))
					if err != nil {
						return err
					}
					err = gen(f)
					if cerr := f.Close(); err == nil {
						err = cerr
					}
					if err != nil {
						return fmt.Errorf("completion %s: %w", name, err)
					}
				}
			}
			return nil
		},
	}
	c.Flags().StringVar(&manDir, "man", "", "directory to write pulse.1 and one page per subcommand into")
	c.Flags().StringVar(&compDir, "completions", "", "directory to write pulse.bash, _pulse and pulse.fish into")
	c.Flags().StringVar(&ros2cli, "ros2cli", "", "file to write the verbs and flags of `ros2 pulse` into as JSON (- for stdout)")
	return c
}

// escapeAngles escapes < and > in help texts: the man pages go
// through markdown, which would take "<uid>" for an HTML tag and drop it.
func escapeAngles(c *cobra.Command) {
	esc := strings.NewReplacer("<", `\<`, ">", `\>`)
	c.Short, c.Long, c.Example = esc.Replace(c.Short), esc.Replace(c.Long), esc.Replace(c.Example)
	for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
		fs.VisitAll(func(f *pflag.Flag) { f.Usage = esc.Replace(f.Usage) })
	}
	for _, sub := range c.Commands() {
		escapeAngles(sub)
	}
}
