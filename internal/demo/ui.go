package main

import (
	"fmt"
	"io"
)

// ui prints the demo's progress: one line per step, details indented
// under it.
type ui struct{ w io.Writer }

func (u ui) printf(format string, args ...any) { fmt.Fprintf(u.w, format, args...) }

// step starts a step: "▸ name      text".
func (u ui) step(name, format string, args ...any) {
	u.printf("▸ %-9s %s\n", name, fmt.Sprintf(format, args...))
}

// detail prints a line under the current step.
func (u ui) detail(format string, args ...any) {
	u.printf("  %-9s %s\n", "", fmt.Sprintf(format, args...))
}
