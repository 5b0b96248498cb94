package main

import (
	"fmt"
	"os"
	"time"
)

// This file prints the benchmark's progress and figures.

var started = time.Now()

func step(msg string) {
	fmt.Printf("[%6.1fs] %s\n", time.Since(started).Seconds(), msg)
}

func printLog(name, out string) {
	if out == "" {
		return
	}
	fmt.Fprintf(os.Stderr, "---- %s output ----\n%s---- end of %s output ----\n", name, out, name)
}

func rate(n int, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return commas(int64(float64(n) / d.Seconds()))
}

func commas(v int64) string {
	s := fmt.Sprint(v)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	default:
		return d.Round(time.Millisecond)
	}
}
