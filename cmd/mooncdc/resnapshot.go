package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/offsets"
)

// resnapshotTimeout bounds the whole command: reading the offsets topic and
// writing the requests. Load retries an unreachable broker until then.
var resnapshotTimeout = time.Minute

// resnapshotCommand is "mooncdc resnapshot [flags] TABLE…": it sets the
// named tables back to init in the offsets topic, with a new resnapshot
// request time, so that the running pipeline (or the next start) copies
// them again. It writes nothing unless every TABLE names known tables.
func resnapshotCommand(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) int {
	args, incremental := cutIncrementalFlag(args)
	cf, err := parseConfigFlags("resnapshot", args, true)
	if code, stop := configFailed(err, resnapshotUsage(), stdout, stderr); stop {
		return code
	}
	if len(cf.args) == 0 {
		fmt.Fprintf(stderr, "mooncdc resnapshot: name at least one table, e.g. public.orders\n\n%s", resnapshotUsage())
		return connector.ExitConfig
	}
	var patterns []config.TablePattern
	var perrs []error
	for _, a := range cf.args {
		p, err := config.ParseTablePattern(a)
		if err != nil {
			perrs = append(perrs, err)
			continue
		}
		patterns = append(patterns, p)
	}
	if len(perrs) > 0 {
		fmt.Fprintf(stderr, "mooncdc resnapshot: %v\nWrite each TABLE as schema.table, e.g. public.orders or public.* ('mooncdc help resnapshot').\n", errors.Join(perrs...))
		return connector.ExitConfig
	}

	cfg, err := cf.load(environ, validateForResnapshot)
	if code, stop := configFailed(err, "", stdout, stderr); stop {
		return code
	}
	if cfg.EmbeddedKafka() {
		fmt.Fprintf(stderr, "mooncdc resnapshot: kafka.brokers is empty, but the embedded development Kafka lives inside 'mooncdc run': "+
			"run resnapshot against the Kafka that run uses, e.g. --brokers %s while the embedded one is running (or set kafka.brokers / %s)\n",
			EmbeddedKafkaAddr, config.EnvVar("kafka.brokers"))
		return connector.ExitConfig
	}

	ctx, cancel := context.WithTimeout(ctx, resnapshotTimeout)
	defer cancel()
	lines, err := resnapshot(ctx, cfg, patterns, time.Now(), incremental)
	if err != nil {
		fmt.Fprintf(stderr, "mooncdc resnapshot: %v\n", err)
		return connector.ExitRuntime
	}
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	return connector.ExitOK
}

// validateForResnapshot is Config.Validate without requiring postgres.url:
// resnapshot talks only to Kafka, so a config file or environment made for
// it alone need not name the database. A postgres.url that is set must
// still be valid (it is the same config as run's).
func validateForResnapshot(cfg config.Config) error {
	if cfg.Postgres.URL == "" {
		cfg.Postgres.URL = "postgres://localhost/unused"
	}
	return cfg.Validate()
}

// resnapshot loads the offsets of cfg.Name, resolves patterns against the
// tables known there, and writes one init record per matched table with
// ResnapshotMs from now (kept strictly above any earlier request). It
// returns the lines to print, one per table. Nothing is written if a
// pattern matches no known table.
func resnapshot(ctx context.Context, cfg config.Config, patterns []config.TablePattern, now time.Time, incremental bool) ([]string, error) {
	base, err := cfg.KafkaOpts(cfg.Kafka.Brokers)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(base,
		kgo.ClientID("mooncdc-"+cfg.Name+"-resnapshot"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequiredAcks(kgo.AllISRAcks()), // with the default idempotent writes
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()

	topic := cfg.Kafka.OffsetsTopic
	st, err := offsets.Load(ctx, cl, topic, cfg.Name)
	if err != nil {
		return nil, fmt.Errorf("%w (is kafka.brokers %s the Kafka that 'mooncdc run' uses?)", err, strings.Join(cfg.Kafka.Brokers, ","))
	}

	tables, err := matchKnownTables(patterns, st.Tables, cfg.Name, topic)
	if err != nil {
		return nil, err
	}

	var lines []string
	for _, name := range tables {
		if incremental && st.Tables[name].Phase == offsets.PhaseReady {
			lines = append(lines, name+": incremental snapshot requested (the table streams on while its rows are read again; a running pipeline starts it at once, or the next start does)")
			continue
		}
		lines = append(lines, name+": init (re-copy requested; a running pipeline picks it up at once, or the next start does)")
	}
	// The requests' records: phases.ResnapshotRequest and
	// phases.IncrementalRequest (connector).
	request := connector.RequestResnapshot
	if incremental {
		request = connector.RequestIncrementalSnapshot
	}
	if err := request(ctx, cl, &cfg, tables, st.Tables, now); err != nil {
		return nil, fmt.Errorf("write to offsets topic %q: %w (nothing may have been written; run the command again)", topic, err)
	}
	return lines, nil
}

// cutIncrementalFlag removes --incremental (-incremental, =true/=false)
// from args, before "--", and reports whether it was set.
func cutIncrementalFlag(args []string) ([]string, bool) {
	var out []string
	on := false
	for i, a := range args {
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		switch strings.TrimLeft(a, "-") {
		case "incremental", "incremental=true":
			if strings.HasPrefix(a, "-") {
				on = true
				continue
			}
		case "incremental=false":
			if strings.HasPrefix(a, "-") {
				on = false
				continue
			}
		}
		out = append(out, a)
	}
	return out, on
}

// matchKnownTables returns the known tables (keys of known, "schema.table")
// that patterns select, in the order of the patterns (sorted within a
// wildcard), each once. A pattern that selects none is an error that lists
// the known tables.
func matchKnownTables(patterns []config.TablePattern, known map[string]offsets.Table, name, topic string) ([]string, error) {
	names := slices.Sorted(maps.Keys(known))
	var out []string
	seen := map[string]bool{}
	var missing []string
	for _, p := range patterns {
		found := false
		for _, k := range names {
			if !tableKeyMatches(p, k) {
				continue
			}
			found = true
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
		if !found {
			missing = append(missing, p.String())
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	what := fmt.Sprintf("%s is not a table", strings.Join(missing, ", "))
	if len(missing) > 1 {
		what = fmt.Sprintf("%s are not tables", strings.Join(missing, ", "))
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s known in the offsets of connector %q: topic %q holds no tables for it "+
			"(check name and kafka.offsets_topic against the config of 'mooncdc run', and that run has started once against these brokers); nothing written",
			what, name, topic)
	}
	return nil, fmt.Errorf("%s known in the offsets of connector %q (topic %q); known tables: %s; nothing written",
		what, name, topic, strings.Join(names, ", "))
}

// tableKeyMatches reports whether the offsets key "schema.table" (raw
// names joined by '.', as schema.Relation.QualifiedName writes them) is
// selected by p. Names may themselves contain dots, so every split at a
// dot is tried: an exact pattern then matches only the key that is its
// schema and table joined by '.', and a wildcard matches any reading. A
// key written in pattern syntax (TablePattern.String, quoted names) also
// matches its own pattern.
func tableKeyMatches(p config.TablePattern, key string) bool {
	for i := range len(key) {
		if key[i] == '.' && p.Match(key[:i], key[i+1:]) {
			return true
		}
	}
	return !p.HasWildcard() && key == p.String()
}

func resnapshotUsage() string {
	var b strings.Builder
	b.WriteString(`Usage: mooncdc resnapshot [--config FILE] [flags] TABLE...

Asks for a new copy (snapshot) of each TABLE: sets it back to the init phase
in the offsets topic, clearing its attempts and last error. A running
pipeline (it tails the offsets topic) picks the request up at once and copies
the table again while the other tables keep streaming; if none is running,
the next 'mooncdc run' does. Use it for a table that is errored after its
retries (once the cause is fixed) or whose Kafka topic must be rebuilt.

With --incremental, a table that streams (phase ready) is snapshotted
incrementally instead: it keeps streaming while its rows are read again in
chunks between watermarks, and resumes by chunk after a restart
(docs/incremental-snapshots.md). A table that is not ready is copied as
without the flag.

TABLE is schema.table (public.orders; unquoted names fold to lower case,
"My Schema"."Orders" keeps case), and wildcards (public.*, *.*) select among
the tables known in the offsets topic. Every TABLE must match a known table,
or nothing is written and the known tables are listed (exit 1).

It reads the config like run does, with the same flags (postgres.url is not
needed), and talks only to Kafka: kafka.brokers must be set. The embedded
development Kafka lives inside 'mooncdc run'; while it runs, use
--brokers 127.0.0.1:9092.

`)
	b.WriteString(configFlagsUsage())
	return b.String()
}
