package main

import (
	"context"
	"io"
)

// statusCommand is written by a helper session; replaced before the commit.
func statusCommand(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) int {
	panic("mooncdc status: not written yet")
}

func statusUsage() string { return "" }
