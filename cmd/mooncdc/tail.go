package main

import (
	"context"
	"io"
)

// tailCommand is written by a helper session; replaced before the commit.
func tailCommand(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) int {
	panic("mooncdc tail: not written yet")
}

func tailUsage() string { return "" }
