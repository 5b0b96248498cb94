// Command kfakeserver runs a one-broker kfake cluster as its own OS process,
// so that tests can SIGKILL and restart Kafka. kafkatest.StartProcess builds
// and drives it; it is not meant to be run by hand, though it can be.
//
// It listens on -addr (port 0 picks a free one), persists to -data-dir, and
// prints one line, "listening on HOST:PORT", to stdout once the listener is
// bound. It shuts down cleanly (flushing kfake's state files) on SIGTERM or
// SIGINT, and with -exit-on-stdin-eof also when its stdin reaches EOF:
// kafkatest holds stdin open, so a test binary that dies without cleaning up
// does not leak a broker.
//
// Before it serves, it loads the data directory on a private port and writes
// abort markers for transactions a crash left open, which kfake itself does
// not do (see repair.go); so after a SIGKILL it recovers the way a Kafka
// broker and transaction coordinator do.
//
// Durability: every produced batch is written to the segment files with a
// write(2) before the produce response is sent, so it survives SIGKILL of
// this process (the data sits in the kernel's page cache). Only a crash of
// the machine can lose it, which -sync (fsync per batch) would also cover.
//
// Place in the pipeline: beside it, never in it. It is the Kafka side of the
// tests that must crash a broker (internal/kafkatest's StartProcess, the
// fault suite) and of `make bench`; mooncdc itself never starts it.
package main
