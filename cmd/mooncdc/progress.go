package main

import (
	"context"
	"io"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/progress"
)

// progressLogInterval is how often "copy progress" lines are logged when no
// bars are drawn, and progressInterval how often the bars are redrawn;
// variables so that tests can shorten them.
var (
	progressLogInterval = progress.DefaultLogInterval
	progressInterval    = progress.DefaultInterval
)

// newProgress returns the reporter of run's table copies on stderr: a bar
// per copy when stderr is a terminal and the log is meant for people
// (log.format console), else a "copy progress" log line per copy every
// progressLogInterval. The process's log must be written to its Writer, so
// that lines logged while bars are shown are printed above them.
func newProgress(c config.LogConfig, stderr io.Writer) *progress.Reporter {
	return progress.New(progress.Options{
		Out:         stderr,
		TTY:         c.Format == "console" && progress.IsTerminal(stderr),
		Interval:    progressInterval,
		LogInterval: progressLogInterval,
	})
}

// startProgress runs r on the copies src returns until ctx ends or the
// returned stop is called. stop blocks until the bars are ended and
// flushed; call it before logging the process's last lines.
func startProgress(ctx context.Context, r *progress.Reporter, src progress.Source, log *zap.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx, src, log)
	}()
	return func() {
		cancel()
		<-done
	}
}
