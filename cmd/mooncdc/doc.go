// Command mooncdc streams a Postgres publication into Kafka as
// Debezium-compatible records. It is the outermost layer of the pipeline
// (cmd → connector → schema, offsets): it reads the configuration (defaults <
// YAML file < MOONCDC_* environment < flags), builds the zap logger, turns
// SIGINT/SIGTERM into a context cancellation, runs connector.Pipeline and maps
// its error to the process exit code (connector.ExitCode: 0 clean stop,
// 1 runtime error, 2 invalid config, 3 unsafe resume, 4 fenced).
//
// The other commands use the same configuration: resnapshot (resnapshot.go)
// asks for tables to be copied again, check (check*.go) is the preflight,
// status (status.go) reports phases, progress and lag, tail (tail.go,
// decode.go) prints records decoded. import-debezium (import_debezium*.go)
// needs no config: it turns a Debezium connector config into mooncdc YAML.
// With --config DIR, run, check and status work on a worker group
// (workers.go, check_workers.go): every file of DIR is a pipeline, the
// files are loaded alike and checked together by
// group.CheckWorkerConfigs, and the group's name is --group, else
// worker_group.
//
// Everything except main itself lives in run, which takes its arguments,
// environment and output streams as parameters so that tests drive the
// command in-process.
package main
