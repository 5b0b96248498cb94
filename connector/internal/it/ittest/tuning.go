package ittest

import (
	"sync"
	"testing"

	"github.com/mooncdc/mooncdc/connector"
)

// tunings holds each tuned test's connector.Tuning (*testing.T → Tuning).
var tunings sync.Map

// Tune changes, with set, the settings (connector.Tuning: copy
// checkpoints, incremental snapshots' chunks) of every pipeline the test
// makes from now on through ittest (NewPipeline, StartStreaming, Start,
// RunToEnd), until the test ends; calls add up. The settings are the
// pipeline's own, so a tuned test runs in parallel with the others
// (NewEnv). A test that calls connector.New itself passes Options(t). A
// subtest is tuned by its own Tune. Call it from the test's goroutine.
func Tune(t *testing.T, set func(*connector.Tuning)) {
	t.Helper()
	var tu connector.Tuning
	if prev, ok := tunings.Load(t); ok {
		tu = prev.(connector.Tuning)
	} else {
		t.Cleanup(func() { tunings.Delete(t) })
	}
	set(&tu)
	tunings.Store(t, tu)
}

// Options are the connector.New options of the test's pipelines: its
// tuning (Tune), if any.
func Options(t *testing.T) []connector.Option {
	if tu, ok := tunings.Load(t); ok {
		return []connector.Option{connector.WithTuning(tu.(connector.Tuning))}
	}
	return nil
}
