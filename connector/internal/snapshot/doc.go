// Package snapshot copies tables: the Snapshotter decides which tables to
// copy (snapshot.mode, new tables found by discovery, resnapshot requests
// and signals, retries of errored copies), hands them to a pool of copy
// workers and records what became of each; the copier copies one table
// (a temporary or persistent slot with an exported snapshot, COPY in
// ctid chunks over several connections, tombstones for the keys an
// earlier copy left, checkpoints of a resumable copy, a private catch-up
// on the copy's slot until the handover to the main worker). It also
// prefetches a snapshot run's schemas into the registry, sweeps the copy
// slots no copy needs, watches COPY connections for silence, and keeps the
// progress of the copies running (Copies, CopyProgress).
//
// Place in the pipeline: beside the main worker, sharing its phase rules
// (the handover), its delivery (each copy gets a sink of its own), its
// tracker's bound, its formats and registry. The copies' catch-up and
// resumed streams are emitters (emit) for one table. Run starts the
// workers and owns them; New starts nothing.
//
// It must not import connector (which wires it): of connector/ it imports
// config, pgsource, stream, internal/fault, internal/phases,
// internal/delivery, internal/record and internal/emit.
package snapshot
