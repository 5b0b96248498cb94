package main

import (
	"context"
	"io"
)

// checkCommand is written by a helper session; replaced before the commit.
func checkCommand(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) int {
	panic("mooncdc check: not written yet")
}

func checkUsage() string { return "" }
