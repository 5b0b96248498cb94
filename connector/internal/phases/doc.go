// Package phases holds each table's phase (State: init, copying,
// catch-up, ready, streaming, errored, as stored in the offsets topic)
// and the rules that change it (Rules): the handover of a copied table to
// the main worker at a position P, promotion, parking, resnapshot
// requests, renames. It decides the exactly-one-emitter rule: every change
// of a table after its snapshot is emitted by exactly one of its copy
// worker (commit LSN before P) or the main worker (at or after it), which
// the main worker asks per transaction through an immutable View.
//
// Place in the pipeline: beside it, consulted by the main worker, the
// copies and the delivery's checkpoints (connector and its stage
// packages); it does no I/O (a changed state is handed to the Store
// function the pipeline sets: the offsets topic's writer) and
// keeps its own lock (the pipeline mutex of the seed). It must import no
// package of connector, only offsets and schema, and hold nothing but the
// phases: no records, no connections, no metrics.
package phases
