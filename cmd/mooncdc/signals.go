package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector"
)

// notifyShutdown returns a context that the first SIGINT, SIGTERM or
// SIGHUP cancels, which asks the pipeline for a clean stop (SIGHUP too: a
// closed terminal or a supervisor's reload must not kill the process
// without one; mooncdc has no reload). A second signal calls
// exitFn(connector.ExitRuntime) at once: the operator gave up waiting, and
// nothing is lost by it, since a restart resumes from the durable LSN.
//
// The returned stop function restores the default signal handling; call it
// when the pipeline has returned. It is safe to call more than once.
func notifyShutdown(parent context.Context, log *zap.Logger, exitFn func(int)) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			log.Info("stopping: flushing to Kafka and confirming the durable LSN; signal again to exit at once",
				zap.String("signal", sig.String()))
			cancel()
		case <-done:
			return
		}
		select {
		case sig := <-sigs:
			log.Warn("second signal: exiting without a clean stop; the next start resumes from the durable LSN",
				zap.String("signal", sig.String()))
			_ = log.Sync()
			exitFn(connector.ExitRuntime)
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
			cancel()
		})
	}
}
