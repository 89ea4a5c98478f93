//go:build !cyclonedds

// Without the cyclonedds build tag pulse-bridge is only this message: the
// bridge needs CycloneDDS (Debian's cyclonedds-dev); `make bridge` builds it.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "pulse bridge: this build has no DDS support; install cyclonedds-dev and run `make bridge`")
	os.Exit(2)
}
