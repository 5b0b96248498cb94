// Package faults is the fault suite of issue 5: it runs the real mooncdc
// binary as a child process against a throwaway Postgres (pgtest) and a
// kfake broker running as its own process (kafkatest.StartProcess), while a
// load generator writes a known mix of inserts, updates and deletes to three
// tables, injects faults (kill -9 of mooncdc, Postgres restarts, broker
// crashes, and standby instances with ha.enabled: a second one waiting
// while the first runs, the active one of two and of three killed and each
// takeover timed, and the active one partitioned away: its links to Postgres
// and the broker black-holed by a proxy of the suite, then healed; and, in the resume
// scenario, a big table whose copy is killed again and again and must resume by chunk each
// time; in the incremental scenario, an incremental snapshot of the big table asked for
// with `mooncdc resnapshot --incremental` under the load, mooncdc killed three times during
// it, each restart resuming it by chunk), and checks what reached Kafka against what was
// written:
// nothing lost, nothing reordered per key, and, in exactly-once mode,
// nothing duplicated; the tables rebuilt from their topics equal Postgres.
//
// The tests sit behind the build tag "faults", so `go test ./...` does not
// run them:
//
//	make test-faults
//	go test -tags faults -timeout 20m -v ./internal/faults/
//
// Environment:
//
//	FAULTS_MODES    delivery modes to run, comma-separated (default "at-least-once,exactly-once")
//	FAULTS_SEED     random seed (default: the clock); every scenario prints it
//	FAULTS_TPS      load generator transactions per second (default 150)
//	FAULTS_PG_RATE  bytes per second from Postgres to mooncdc (default 5000000): mooncdc reaches
//	                Postgres through a throttling proxy so that the big table's copy lasts
//	                seconds (unthrottled, its 200k rows take 0.4 s)
//	FAULTS_PARTITIONS
//	                partitions of the active instance in the partition scenario (default 1)
//	FAULTS_RESUME_ROWS
//	                rows of the big table in the resume scenario (default 1000000; the
//	                issue's 5000000 works, slower: about 6.5 min per mode and 4 GB for the check)
//	FAULTS_KEEP     set: keep each scenario's directory (mooncdc logs, config, broker data)
//
// Run one scenario or mode with -run, e.g. -run 'TestFaults/kill9/at-least-once'.
//
// Every scenario prints one summary line, e.g.
//
//	scenario=kill9 mode=at-least-once kills=20 lost=0 duplicated=137 reordered=0
//
// where kills counts the faults injected (kills, restarts, second instances).
package faults
