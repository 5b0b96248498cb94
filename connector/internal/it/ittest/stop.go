package ittest

import (
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// StopWithin cancels r and returns Run's error, failing unless it returned
// within limit.
func StopWithin(t *testing.T, r *Running, limit time.Duration) (took time.Duration, err error) {
	t.Helper()
	start := time.Now()
	r.Cancel()
	select {
	case err = <-r.Done:
		r.Done <- err
		return time.Since(start), err
	case <-time.After(limit):
		t.Fatalf("Run did not return within %s of the stop", limit)
		return 0, nil
	}
}

// ObserverLogger is a logger whose entries (info and above) the test
// reads.
func ObserverLogger() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zap.InfoLevel)
	return zap.New(core), logs
}
