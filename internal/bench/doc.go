// Command bench measures mooncdc against the limit of its source, on a
// throwaway Postgres and a kfake broker process (`make bench` runs it).
//
// It loads N single-row inserts in transactions of -tx rows into a
// published table, with the pgoutput slots of both readers made before the
// load, so both decode exactly the same WAL, then times
//
//   - the limit: pg_recvlogical streaming slot bench_limit_1 into /dev/null
//     up to the end LSN (the end of the load's last commit), with the
//     plugin options mooncdc uses (proto_version, publication_names,
//     messages);
//   - mooncdc: `mooncdc run` (bin/mooncdc, or the connector in this
//     process with -inprocess), with snapshot.mode never (the table is not
//     copied first), from its start until its slot bench_mooncdc
//     is confirmed up to the end LSN. mooncdc confirms only what Kafka has
//     acked, so that is "every record acked", start-up included.
//
// and prints both rates, their ratio (the goal is >= 0.5), mooncdc's CPU
// time and peak RSS, and the CPU time of the walsenders and the broker. It
// checks that the data topic holds at least N records and exits 1 if not,
// or if anything fails.
//
// Reading the figures:
//   - mooncdc sends its standby status once a second, so the confirmed
//     position, and with it mooncdc's time, moves in steps of up to a
//     second. The report also gives the time until all transactions were
//     acked, from mooncdc's metrics (polled every 100ms).
//   - pg_recvlogical drains the socket message by message, so its walsender
//     makes a send(2) per change and is the bottleneck of the limit run; a
//     slower reader lets the walsender batch. The limit is what a minimal
//     client reaches, not a bound on decoding.
//   - The machine's other load is measured (/proc/stat) and reported; the
//     figures of a busy machine are flagged.
//
// With -inprocess -cpuprofile FILE the pipeline runs in this process under
// the CPU profiler, from its start to the end LSN, and the top of the
// profile is printed.
//
// Then, in the same run (snapshot.go; -stream=false runs it alone,
// -snapshot=false skips it), the snapshot: a table public.snapbench of
// -snapshot-rows rows (1,000,000; ≈ 100 B each in COPY text) loaded with
// one INSERT … SELECT and vacuumed and analyzed (hint bits set, reltuples
// known, so mooncdc splits the copy into ctid ranges), and timed
//
//   - the limit: `COPY public.snapbench TO STDOUT` on one connection, read
//     with pgx (PgConn.CopyTo) into a byte counter that discards the data;
//     the fastest of -snapshot-limit-runs runs. One psql run into /dev/null
//     is shown for reference;
//   - mooncdc: `mooncdc run` with snapshot.mode initial_only and tables
//     [public.snapbench] into a fresh kfake broker, from its start until it
//     exits by itself, which it does once the table is copied, every record
//     acked and the table handed over;
//   - the Kafka limit (kafkalimit.go): franz-go alone, in this process,
//     producing N records of the shape of mooncdc's (key {"id":…}, value
//     mooncdc's first record with each row's id, payload and n, and its
//     three mooncdc.* headers with the row's number) to a topic
//     of one partition on a fresh kfake broker started the same way (after
//     mooncdc's is stopped), with mooncdc's producer options (idempotent,
//     acks all, linger 5ms, its buffer bounds, -compression) and at most
//     kafka.max_inflight_bytes/snapshot.workers bytes unacked, timed from
//     the first Produce until every promise has returned OK.
//
// It reports rows/s and MiB/s (on the COPY output's bytes, for all), the
// ratios to both limits, mooncdc's peak RSS (VmHWM of the child, sampled: childRunner) and
// the goal: ratio vs COPY >= 0.5 and peak RSS < 200 MiB (the goal line
// also gives the ratio vs the Kafka limit). Then the Kafka limit's goal
// (issue 17.5): mooncdc ≥ 0.9 of it on the median of -snapshot-pairs
// pairs (3), each a mooncdc snapshot then franz-go alone back to back on
// fresh brokers, the first pair the run above: one ratio moves by ±0.15
// with the machine's load. It fails (exit 1) unless mooncdc exited 0,
// the data topic holds at least N records and the offsets topic has the
// table ready (or catchup). With -inprocess -snapshot-cpuprofile FILE the
// snapshot runs in this process under the CPU profiler, start to exit.
//
// The re-snapshot part (resnapshot.go; -resnapshot-rows N, 1,000,000, 0
// skips it; -resnapshot-load, 1,000 changes/s): a table of N rows streamed
// by the mooncdc binary (JSON, at-least-once) under a write load of
// updates and inserts for the whole measurement, re-snapshotted in one run
// by `mooncdc resnapshot` (blocking: the table's changes wait for the
// handover) and then `mooncdc resnapshot --incremental` (they stream on).
// For each: rows/s (the table's rows when asked, over the time from the
// command to done in the offsets topic), the p50/p99/max latency of the
// table's changes committed meanwhile (commit time in the record to the
// record fetched, as the latency benchmark measures it), the child's peak
// RSS during it (VmHWM reset through /proc/PID/clear_refs), the machine's
// CPU busy; then the ratio incremental/blocking rows/s and the goal line
// (issue 29: ≥ 0.8). It fails unless every id of 1..N is in an `r` record
// of each re-snapshot or was changed by the stream while it ran.
//
// Place in the pipeline: none; it measures the pipeline from outside. It
// runs bin/mooncdc as a child process (or connector.Pipeline in this
// process with -inprocess) against a throwaway Postgres (internal/pgtest)
// and a kfakeserver broker process, and nothing imports it.
package main
