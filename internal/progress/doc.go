// Package progress shows the table copies of a running pipeline: one
// progress bar per copy on a terminal, or a log line per copy every few
// seconds elsewhere.
//
// It sits beside the pipeline, not in it: it only reads
// connector.Pipeline.Copies (or the same list from a process's /status
// endpoint), so `mooncdc run` and the demo program share it. The bars are
// drawn by github.com/vbauerster/mpb; nothing here writes escape codes.
//
// Invariants:
//
//   - One goroutine, the one in [Reporter.Run], owns the bars: it polls the
//     copies, adds, updates and ends bars, and creates and shuts down the
//     mpb container. Log writers only read which container is current.
//   - While bars are on screen, everything written to [Reporter.Writer]
//     goes through the container, which prints it above the bars; between
//     copies it goes straight to the output, so a crash loses no log line.
//   - The container is shut down, its last frame flushed, with the writers
//     held off, so a log line is never printed into the middle of a frame.
//   - Run returns only after its bars are ended and flushed.
package progress
