// Command demo is `make demo`: it shows mooncdc end to end on this machine.
//
// It starts a throwaway Postgres (internal/pgtest), creates a small shop
// schema with one big table (public.page_views, -rows rows), runs the
// mooncdc binary against it with the embedded development Kafka on
// 127.0.0.1:9092 and shows the snapshot's progress (the bars `mooncdc run`
// draws on a terminal, fed from mooncdc's /status endpoint). Then it writes
// a few seconds of inserts, updates and deletes and prints the changes as a
// plain Kafka consumer reads them, checks that the records replay into the
// tables' rows, and prints some records and a summary. With -avro the
// records are Avro, their schemas in a Schema Registry: the one at
// -registry, or an in-process stand-in (internal/srtest). Everything it
// starts is stopped, and its temporary directory removed, when it ends or
// is interrupted (Ctrl-C).
//
//	go run ./internal/demo -mooncdc bin/mooncdc [-load 5s] [-rows 1500000] [-avro [-registry URL]] [-keep]
//
// Place in the pipeline: none; it runs the mooncdc binary as a user would
// and reads what reached Kafka as a plain consumer. It shares
// internal/progress with `mooncdc run` for the bars, and nothing imports it.
package main
