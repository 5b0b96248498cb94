// Package fault decides, in one place, what an error means: Classify for
// the pipeline (retry with backoff from the durable LSN, stop with the
// message, or an unsafe resume), TableFault for a table (park it, go on
// with the others), and Retry and Backoff for the loops that retry.
//
// Errors say what they are where they are made, by marker methods this
// package reads through interfaces (Fatal, Retryable, UnsafeResume,
// TableLocal), so no stage has to import another's error types to
// classify one, and this package imports no stage: only config (the TLS
// certificate check), stream's two error types, schema's ValueError and
// the drivers' errors. A new error type that must not be retried says so
// with a marker where it is declared, not with a case here.
//
// Its users: connector (the pipeline's retry loop and a table's parking),
// connector/pgsource and connector/group (Retry and Sleep). It must not
// import connector, pgsource, group or any stage; nothing it does touches
// the network or a pipeline's state.
package fault
