// Package probe exposes the probe's export contract to Go: the tracetools
// functions libros2_pulse.so interposes and the rcl functions it wraps (two
// publishes, two timer calls, ...) and Humble tracetools' two symbol helpers
// by their C++ names, read from the linker version script itself,
// so the list exists in exactly one place.
package probe

import (
	_ "embed"
	"regexp"
)

//go:embed exports.map
var exportsMap string

// Exports returns the symbols the probe exports, in version-script order.
func Exports() []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^\s*([a-z_]\w*);`).FindAllStringSubmatch(exportsMap, -1) {
		out = append(out, m[1])
	}
	return out
}
