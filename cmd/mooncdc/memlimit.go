package main

import (
	"runtime/debug"
	"strings"

	"github.com/mooncdc/mooncdc/connector/config"
)

// The process's memory bound: peak RSS at most kafka.max_inflight_bytes +
// rssHeadroom. The records in flight are bounded by the tracker (each
// counted with its Go overhead); what the bound leaves to the Go runtime
// is its heap past the records (the relation caches, the client buffers,
// the garbage of one GC cycle), less what RSS holds outside the runtime's
// accounting: the binary's text and data pages, which rssOutsideGo
// covers (about 25 MiB measured for bin/mooncdc: VmRSS less the
// runtime's Sys less HeapReleased, in the frozen-broker benchmark).
const (
	rssHeadroom  = 64 << 20
	rssOutsideGo = 32 << 20
)

// memoryLimit is the Go runtime's soft memory limit for a pipeline with
// the given kafka.max_inflight_bytes: without it the garbage collector
// lets the heap grow to twice what is live (GOGC=100), which made a
// process with 64 MiB in flight reach 293 MiB RSS with the broker frozen.
func memoryLimit(maxInflightBytes int64) int64 {
	return maxInflightBytes + rssHeadroom - rssOutsideGo
}

// setMemoryLimit sets the soft memory limit for cfg unless GOMEMLIMIT is
// set in environ (the operator's choice wins) or the embedded development
// Kafka runs in this process (its records live in the heap, unbounded). It
// returns a function that restores the previous limit.
func setMemoryLimit(cfg config.Config, environ []string) (restore func()) {
	if len(cfg.Kafka.Brokers) == 0 {
		return func() {}
	}
	for _, kv := range environ {
		if strings.HasPrefix(kv, "GOMEMLIMIT=") {
			return func() {}
		}
	}
	prev := debug.SetMemoryLimit(memoryLimit(cfg.Kafka.MaxInflightBytes))
	return func() { debug.SetMemoryLimit(prev) }
}
