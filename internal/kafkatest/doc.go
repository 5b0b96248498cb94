// Package kafkatest gives tests a real Kafka wire-protocol server without
// Docker: franz-go's kfake, which implements produce, fetch, transactions
// (read_committed, aborts, fencing), compaction and on-disk persistence.
//
// Two shapes:
//
//   - [New] runs a one-broker cluster inside the test process on
//     127.0.0.1:<free port>. Fast; use it by default.
//   - [StartProcess] runs the broker as its own OS process (the kfakeserver
//     command in this folder) with a data directory, so a test can SIGKILL
//     it ([Process.Kill]) and start it again ([Process.Start]) on the same
//     address with the same data, the way a real broker crashes.
//
// [ReadAll] reads topics back read_committed for assertions.
//
// Invariants:
//   - Everything a helper starts is stopped by t.Cleanup; no helper leaks a
//     goroutine, client, process or file past the test that asked for it.
//   - A Process keeps its address across restarts, so clients that were
//     seeded with [Process.Addr] reconnect by themselves.
//   - What a Process acknowledged survives Kill: kfake writes each batch to
//     its segment file (a write(2), no fsync) before it answers the produce
//     request, and the page cache outlives the process. fsync (kfake's
//     SyncWrites) only matters for a machine crash, which tests do not
//     simulate, so it is off.
//   - Transactions open at a Kill are aborted when the Process starts again,
//     with abort markers, as Kafka's coordinator does. Plain kfake aborts
//     them without a marker, and then read_committed consumers also skip
//     the next transaction of the same transactional ID (see
//     kfakeserver/repair.go); kfakeserver writes the markers before it
//     serves.
package kafkatest
