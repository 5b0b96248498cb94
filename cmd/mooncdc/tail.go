package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
)

// tailStartTimeout bounds the first contact with Kafka: the topics'
// metadata and, when reading from the end, their end offsets.
var tailStartTimeout = 30 * time.Second

// tailOptions are the flags of tail beyond run's config flags.
type tailOptions struct {
	pretty        bool
	fromBeginning bool
	max           int // stop after this many records; 0: never
}

// tailCommand is "mooncdc tail [flags] TOPIC…": it prints the records of
// the topics as they arrive, decoded, one JSON object per line. It blocks
// until ctx is cancelled, SIGINT or SIGTERM arrives (exit 0), --max
// records are printed (exit 0) or Kafka fails for good (exit 1).
func tailCommand(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) int {
	opts, rest, err := splitTailFlags(args)
	if err != nil {
		fmt.Fprintf(stderr, "mooncdc tail: %v\nRun 'mooncdc help tail' for the flags.\n", err)
		return connector.ExitConfig
	}
	cf, err := parseConfigFlags("tail", rest, true)
	if code, stop := configFailed(err, tailUsage(), stdout, stderr); stop {
		return code
	}
	if len(cf.args) == 0 {
		fmt.Fprintf(stderr, "mooncdc tail: name at least one topic, e.g. shop.public.orders (<topic prefix>.<schema>.<table>)\n\n%s", tailUsage())
		return connector.ExitConfig
	}
	var bad []string
	for _, t := range cf.args {
		if !validTopic(t) {
			bad = append(bad, strconv.Quote(t))
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(stderr, "mooncdc tail: %s: not a Kafka topic name (1 to 249 letters, digits, '.', '_' or '-'); "+
			"a table's topic is <topic prefix>.<schema>.<table>, e.g. shop.public.orders\n", strings.Join(bad, ", "))
		return connector.ExitConfig
	}
	cfg, err := cf.load(environ, validateForTail)
	if code, stop := configFailed(err, "", stdout, stderr); stop {
		return code
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	var topics []string
	for _, t := range cf.args {
		if !slices.Contains(topics, t) {
			topics = append(topics, t)
		}
	}
	if err := tail(ctx, cfg, topics, opts, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "mooncdc tail: %v\n", err)
		return connector.ExitCode(err)
	}
	return connector.ExitOK
}

// splitTailFlags takes tail's own flags (--pretty, --from-beginning, --max
// N, with one or two dashes, =value allowed) out of args and returns the
// rest, for parseConfigFlags. The value of a config flag (--name --pretty)
// is skipped, and nothing after "--" is a flag.
func splitTailFlags(args []string) (tailOptions, []string, error) {
	takesValue := map[string]bool{"config": true}
	for _, f := range runFlags {
		takesValue[f.flag] = true
	}
	var o tailOptions
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			rest = append(rest, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		switch name {
		case "pretty", "from-beginning":
			on := true
			if hasValue {
				var err error
				if on, err = strconv.ParseBool(value); err != nil {
					return tailOptions{}, nil, fmt.Errorf("--%s=%s: want true or false", name, value)
				}
			}
			if name == "pretty" {
				o.pretty = on
			} else {
				o.fromBeginning = on
			}
		case "max":
			if !hasValue {
				if i+1 == len(args) {
					return tailOptions{}, nil, errors.New("--max: needs a number of records, e.g. --max 10")
				}
				i++
				value = args[i]
			}
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 {
				return tailOptions{}, nil, fmt.Errorf("--max %s: want a number of records, e.g. --max 10 (0: no limit)", value)
			}
			o.max = n
		default:
			rest = append(rest, a)
			if !hasValue && takesValue[name] && i+1 < len(args) {
				i++
				rest = append(rest, args[i])
			}
		}
	}
	return o, rest, nil
}

var topicRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,249}$`)

func validTopic(t string) bool { return topicRE.MatchString(t) && t != "." && t != ".." }

// validateForTail is Config.Validate without requiring name or
// postgres.url: tail talks only to Kafka and the Schema Registry, so a
// config made for it alone need not name the connector or the database.
// What is set must still be valid (it is the same config as run's).
func validateForTail(cfg config.Config) error {
	if cfg.Name == "" {
		cfg.Name = "tail"
		cfg.ApplyDefaults()
	}
	if cfg.Postgres.URL == "" {
		cfg.Postgres.URL = "postgres://localhost/unused"
	}
	return cfg.Validate()
}

// tail prints the records of topics to stdout until ctx ends or opts.max
// records are printed; notices go to stderr. It returns an error only when
// Kafka cannot be read at all: unreachable at the start, refusing the
// credentials, or stdout closed.
func tail(ctx context.Context, cfg config.Config, topics []string, opts tailOptions, stdout, stderr io.Writer) error {
	brokers := cfg.Kafka.Brokers
	if cfg.EmbeddedKafka() {
		brokers = []string{EmbeddedKafkaAddr}
	}
	base, err := cfg.KafkaOpts(brokers)
	if err != nil {
		return err
	}
	base = append(base, kgo.ClientID("mooncdc-tail"))

	var lookup schemaLookup
	if cfg.Format.SchemaRegistry.URL != "" {
		rc, err := connector.NewRegistryClient(cfg.Format.SchemaRegistry)
		if err != nil {
			return err
		}
		lookup = (&registrySchemas{ctx: ctx, cl: rc, known: map[int]schemaEntry{}}).lookup
	}

	start, err := startOffsets(ctx, base, topics, opts.fromBeginning)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting
		}
		where := "kafka.brokers " + strings.Join(brokers, ",")
		if cfg.EmbeddedKafka() {
			where = fmt.Sprintf("the embedded development Kafka on %s (kafka.brokers is empty; it runs only inside 'mooncdc run': start that, or set --brokers)", EmbeddedKafkaAddr)
		}
		return fmt.Errorf("read the topics' metadata from %s: %w", where, err)
	}
	if len(start.existing) > 0 {
		from := "from the end: new records only (--from-beginning for all)"
		if opts.fromBeginning {
			from = "from the beginning"
		}
		fmt.Fprintf(stderr, "mooncdc tail: reading %s %s\n", strings.Join(start.existing, ", "), from)
	}
	for _, t := range start.missing {
		fmt.Fprintf(stderr, "mooncdc tail: topic %s does not exist yet; waiting for it (once created, it is read from its first record)\n", t)
	}

	cl, err := kgo.NewClient(append(base, start.opts...)...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()

	warned := map[string]bool{} // topics with a record reported as not decoded
	reported := map[string]bool{}
	printed := 0
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var fatal error
		fetches.EachError(func(topic string, partition int32, err error) {
			switch {
			case errors.Is(err, context.Canceled) || errors.Is(err, kgo.ErrClientClosed):
			case config.IsAuthError(err) || errors.Is(err, kerr.TopicAuthorizationFailed):
				fatal = fmt.Errorf("read %s: %w", topic, err)
			case !reported[err.Error()]:
				reported[err.Error()] = true // the client retries; say it once
				fmt.Fprintf(stderr, "mooncdc tail: %s partition %d: %v (retrying)\n", topic, partition, err)
			}
		})
		if fatal != nil {
			return fatal
		}
		for it := fetches.RecordIter(); !it.Done(); {
			r := it.Next()
			line, problem := recordJSON(r, lookup, opts.pretty)
			if line == nil {
				return problem
			}
			if problem != nil && !warned[r.Topic] {
				warned[r.Topic] = true
				fmt.Fprintf(stderr, "mooncdc tail: %s partition %d offset %d: %v; printed as {\"raw_base64\": …} "+
					"(so are further such records of this topic, without a notice)\n", r.Topic, r.Partition, r.Offset, problem)
			}
			if _, err := stdout.Write(line); err != nil {
				return fmt.Errorf("write: %w", err)
			}
			printed++
			if opts.max > 0 && printed >= opts.max {
				return nil
			}
		}
	}
}

// tailStart says where the consumer starts.
type tailStart struct {
	opts     []kgo.Opt // what to consume, from where
	existing []string  // topics that exist, in argument order
	missing  []string  // topics that do not exist yet
}

// startOffsets reads the topics' metadata and, unless fromBeginning, the
// last stable offset of each partition (the end as read_committed sees
// it): a record committed after that is one the tail should print. A
// topic that does not exist yet is consumed from its start once it
// appears: all its records are new. Retriable errors (a leader election,
// a topic being created) are retried until tailStartTimeout.
func startOffsets(ctx context.Context, base []kgo.Opt, topics []string, fromBeginning bool) (tailStart, error) {
	ctx, cancel := context.WithTimeout(ctx, tailStartTimeout)
	defer cancel()
	cl, err := kgo.NewClient(base...)
	if err != nil {
		return tailStart{}, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for {
		var listed kadm.ListedOffsets
		if fromBeginning {
			// Only whether the topics exist matters; ListTopics would do,
			// but one code path is simpler and the offsets are cheap.
			listed, err = adm.ListStartOffsets(ctx, topics...)
		} else {
			listed, err = adm.ListCommittedOffsets(ctx, topics...)
		}
		if err != nil {
			return tailStart{}, err
		}
		st, retry, err := planStart(listed, topics, fromBeginning)
		if err != nil {
			return tailStart{}, err
		}
		if retry == nil {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return tailStart{}, fmt.Errorf("%w (last error: %v)", ctx.Err(), retry)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// planStart turns the listed offsets into consumer options. retry is a
// retriable error of some partition (ask again); err one that is not.
func planStart(listed kadm.ListedOffsets, topics []string, fromBeginning bool) (st tailStart, retry, err error) {
	pinned := map[string]map[int32]kgo.Offset{}
	for _, t := range topics {
		ps, ok := listed[t]
		if !ok {
			st.missing = append(st.missing, t)
			continue
		}
		exists := true
		for p, o := range ps {
			switch {
			case errors.Is(o.Err, kerr.UnknownTopicOrPartition):
				exists = false
			case o.Err != nil && kerr.IsRetriable(o.Err):
				retry = fmt.Errorf("%s partition %d: %w", t, p, o.Err)
			case o.Err != nil:
				return tailStart{}, nil, fmt.Errorf("%s: %w", t, o.Err)
			default:
				if pinned[t] == nil {
					pinned[t] = map[int32]kgo.Offset{}
				}
				pinned[t][p] = kgo.NewOffset().At(o.Offset)
			}
		}
		if exists {
			st.existing = append(st.existing, t)
		} else {
			st.missing = append(st.missing, t)
			delete(pinned, t)
		}
	}
	if retry != nil {
		return tailStart{}, retry, nil
	}
	st.opts = []kgo.Opt{
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), // exactly-once mode writes transactions
		kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()),
	}
	if fromBeginning {
		st.opts = append(st.opts, kgo.ConsumeTopics(topics...))
	} else {
		// Existing partitions start at their end as listed; a topic created
		// later starts at its beginning. (Partitions added to an existing
		// topic while tail runs are not read: restart tail for them.)
		if len(pinned) > 0 {
			st.opts = append(st.opts, kgo.ConsumePartitions(pinned))
		}
		if len(st.missing) > 0 {
			st.opts = append(st.opts, kgo.ConsumeTopics(st.missing...))
		}
	}
	return st, nil, nil
}

// registrySchemas looks Avro schemas up by id in the Schema Registry and
// keeps them: an id never changes its schema. A registry that fails
// (unreachable, 5xx) is asked again after registryRetryAfter. Not safe for
// concurrent use: the tail loop owns it. lookup blocks while the registry
// answers (the client's timeout bounds it).
type registrySchemas struct {
	ctx   context.Context
	cl    *sr.Client
	known map[int]schemaEntry
}

type schemaEntry struct {
	schema avro.Schema
	err    error
	until  time.Time // zero: for good
}

var registryRetryAfter = 10 * time.Second

func (r *registrySchemas) lookup(id int) (avro.Schema, error) {
	if e, ok := r.known[id]; ok && (e.until.IsZero() || time.Now().Before(e.until)) {
		return e.schema, e.err
	}
	e := r.fetch(id)
	r.known[id] = e
	return e.schema, e.err
}

func (r *registrySchemas) fetch(id int) schemaEntry {
	s, err := r.cl.SchemaByID(r.ctx, id)
	var re *sr.ResponseError
	switch {
	case errors.As(err, &re) && re.StatusCode == http.StatusNotFound:
		return schemaEntry{err: errors.New("not in the Schema Registry")}
	case err != nil:
		return schemaEntry{err: fmt.Errorf("ask the Schema Registry: %w", err), until: time.Now().Add(registryRetryAfter)}
	case s.Type != sr.TypeAvro:
		return schemaEntry{err: fmt.Errorf("a %s schema, not Avro", s.Type)}
	}
	// A cache of its own: two schemas may define the same name differently
	// (versions of one table's value).
	parsed, err := avro.ParseWithCache(s.Schema, "", &avro.SchemaCache{})
	if err != nil {
		return schemaEntry{err: fmt.Errorf("parse the registry's schema: %w", err)}
	}
	return schemaEntry{schema: parsed}
}

func tailUsage() string {
	var b strings.Builder
	b.WriteString(`Usage: mooncdc tail [--config FILE] [flags] [--pretty] [--from-beginning] [--max N] TOPIC...

Prints the records of each TOPIC as they arrive, one JSON object per line:

  {"topic":"shop.public.orders","partition":0,"offset":41,"timestamp":"2025-01-02T10:04:05.123Z",
   "headers":{"mooncdc.commit_lsn":"24023928","mooncdc.lsn":"24023816","mooncdc.tx_seq":"0"},
   "key":{"id":7},"value":{"before":null,"after":{"id":7,"qty":2},"source":{…},"op":"c",…}}

A table's topic is <topic prefix>.<schema>.<table> (the prefix is
kafka.topic_prefix, by default the connector's name), e.g. shop.public.orders.

Keys and values are decoded:
  - Confluent-framed Avro (format avro): with the schema that
    format.schema_registry has under the record's schema id; unions show
    as their value, bytes as base64, decimals as numbers, dates and times
    as ISO 8601 strings;
  - JSON (format json, with or without json_schemas): as it is;
  - anything else: as {"raw_base64": "..."}, with a notice on stderr (once
    per topic); the tail goes on;
  - null (a tombstone's value): null.

Reads with isolation level read_committed: records of a transaction show
once it commits (kafka.delivery: exactly-once). A topic that does not exist
yet is waited for. Stops on SIGINT or SIGTERM (exit 0). Notices go to
stderr, records to stdout.

Flags of tail:
  --pretty
        indent each record over several lines
  --from-beginning
        print the records already in the topics too (default: only new ones)
  --max N
        exit 0 after N records (default 0: no limit)

It reads the config like run does, with the same flags and MOONCDC_*
variables (name and postgres.url are not needed); it uses kafka.brokers,
kafka.tls, kafka.sasl and format.schema_registry. With kafka.brokers empty
it reads the embedded development Kafka that 'mooncdc run' serves on
` + EmbeddedKafkaAddr + `.

`)
	b.WriteString(configFlagsUsage())
	return b.String()
}
