package connector

import "github.com/mooncdc/mooncdc/connector/internal/snapshot"

// Tuning is what a test changes in one pipeline's copies and incremental
// snapshots to make a case happen soon: how often a resumable copy
// checkpoints, the chunk size of incremental snapshots, a pause before
// each of their chunks, the server they read on (the fields are
// documented in connector/internal/snapshot/tuning.go). The zero value is
// production's behaviour. It is a pipeline's own, not the package's, so
// the tests that tune run in parallel with the others.
type Tuning = snapshot.Tuning

// WithTuning gives the pipeline tu. For tests; a user's pipeline runs
// with the zero Tuning (New without this option).
func WithTuning(tu Tuning) Option { return func(p *Pipeline) { p.tuning = tu } }
