// Package layering holds the test that keeps the code to the levels
// docs/ARCHITECTURE.md draws: every Go package imports only packages on lower
// levels (so views never reach into each other), and the probe's core never
// calls one of its hook families; and that the README stays a short quick
// start whose links, and the docs pages', lead somewhere. It has no code of
// its own.
package layering
