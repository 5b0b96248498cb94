package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
)

// ---- Kafka ----

// checkKafka checks that the brokers answer (every one of them, at its
// advertised address), and the offsets topic.
func checkKafka(ctx context.Context, cfg config.Config) checkLines {
	var out checkLines
	brokers := cfg.Kafka.Brokers
	if cfg.EmbeddedKafka() {
		brokers = []string{checkEmbeddedAddr}
	}
	what := "Kafka " + strings.Join(brokers, ",")
	topicWhat := fmt.Sprintf("offsets topic %q", cfg.Kafka.OffsetsTopic)
	for _, w := range cfg.SecurityWarnings() {
		cause, fix, _ := strings.Cut(w, "; ")
		out.warn("Kafka security", cause, fix)
	}
	opts, err := cfg.KafkaOpts(brokers)
	if err != nil {
		out.fail(what, err.Error(), "")
		out.skip(topicWhat, "no Kafka client")
		return out
	}
	cl, err := kgo.NewClient(append(opts,
		kgo.ClientID("mooncdc-"+cfg.Name+"-check"),
		kgo.RetryTimeout(checkTimeout),
		kgo.RequestRetries(2), // a preflight reports, it does not wait out an outage
		kgo.DialTimeout(checkTimeout/2),
	)...)
	if err != nil {
		out.fail(what, err.Error(), "")
		out.skip(topicWhat, "no Kafka client")
		return out
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()

	versions, err := adm.ApiVersions(ctx) // metadata from a seed, then every broker at its advertised address
	if err != nil {
		if cfg.EmbeddedKafka() {
			out.warn("Kafka", fmt.Sprintf("kafka.brokers is empty and nothing answers at %s: the embedded development Kafka runs inside mooncdc run; nothing to check", checkEmbeddedAddr),
				"set kafka.brokers to check a real Kafka")
			out.skip(topicWhat, "embedded Kafka not running")
			return out
		}
		cause := checkOneLine(err.Error())
		if connector.IsNotKafka(err) {
			cause = "not a Kafka broker: it answered with something that is not the Kafka protocol (" + cause + ")"
		}
		out.fail(what, cause, checkKafkaFix(cfg, err))
		out.skip(topicWhat, "Kafka unreachable")
		return out
	}
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil {
		out.fail(what, err.Error(), checkKafkaFix(cfg, err))
		out.skip(topicWhat, "Kafka unreachable")
		return out
	}
	var addrs, bad []string
	var firstErr error
	guess := ""
	for _, b := range meta.Brokers {
		addr := fmt.Sprintf("%s:%d", b.Host, b.Port)
		addrs = append(addrs, addr)
		v, ok := versions[b.NodeID]
		switch {
		case !ok:
			bad = append(bad, addr)
		case v.Err != nil:
			bad = append(bad, addr)
			if firstErr == nil {
				firstErr = v.Err
			}
		case guess == "":
			guess = v.VersionGuess() // "v3.7"; "between …" or "unknown …" when the API set matches no release
		}
	}
	if len(bad) > 0 {
		cause := fmt.Sprintf("broker %s (advertised) did not answer", checkNames(bad))
		if firstErr != nil {
			cause += ": " + firstErr.Error()
		}
		out.fail(what, cause, "check the brokers' advertised.listeners: this host must resolve and reach every broker at the address it advertises")
		out.skip(topicWhat, "Kafka unreachable")
		return out
	}
	detail := fmt.Sprintf("%d %s (%s)", len(addrs), checkPlural(len(addrs), "broker", "brokers"), checkNames(addrs))
	if strings.HasPrefix(guess, "v") {
		detail += ", Kafka " + guess
	}
	if cfg.EmbeddedKafka() {
		detail = "the embedded development Kafka of a running mooncdc run, " + detail
	}
	out.pass(what, detail)
	out = append(out, checkOffsetsTopic(ctx, adm, cfg.Kafka.OffsetsTopic)...)
	if hb := cfg.Heartbeat; hb.Interval > 0 && hb.Records {
		what := fmt.Sprintf("heartbeat topic %q", hb.Topic)
		if details, err := adm.ListTopics(ctx, hb.Topic); err == nil && details.Has(hb.Topic) && details[hb.Topic].Err == nil {
			out.pass(what, "exists; heartbeat records go there every "+hb.Interval.String()+" of idleness")
		} else {
			out.pass(what, "does not exist; mooncdc run creates it (heartbeat records every "+hb.Interval.String()+" of idleness)")
		}
	}
	return out
}

// checkKafkaFix says what to look at when the brokers do not answer: the SASL
// or TLS settings when they refused the login or the handshake, else the
// addresses.
func checkKafkaFix(cfg config.Config, err error) string {
	var rh tls.RecordHeaderError
	switch {
	case connector.IsNotKafka(err):
		return "another service listens there (Postgres, an HTTP server…): check kafka.brokers (host:port of the brokers' listener)"
	case errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.UnsupportedSaslMechanism) ||
		errors.Is(err, kerr.IllegalSaslState) || strings.Contains(err.Error(), "SASL"):
		return "check kafka.sasl.mechanism, kafka.sasl.username and kafka.sasl.password (or kafka.sasl.password_file)"
	case config.IsAuthError(err) || errors.As(err, &rh) || strings.Contains(err.Error(), "tls: "):
		return "check kafka.tls.* (ca_file must hold the CA of the brokers' certificates; server_name; cert_file and key_file) and that the brokers speak TLS on this port"
	case cfg.Kafka.SASL.Mechanism != "" && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)):
		// Brokers (kfake, older Kafka) close the connection on a failed login.
		return "the broker closed the connection: check kafka.sasl.mechanism, kafka.sasl.username and kafka.sasl.password (or kafka.sasl.password_file), and kafka.tls.enabled against the brokers' listener"
	case !cfg.Kafka.TLS.Enabled && cfg.Kafka.SASL.Mechanism == "":
		return "check kafka.brokers (host:port) and that this host reaches them; if the brokers require TLS or SASL, set kafka.tls.* or kafka.sasl.*"
	default:
		return "check kafka.brokers (host:port) and that this host reaches them, and kafka.tls.* and kafka.sasl.* against the brokers' listener"
	}
}

// checkOffsetsTopic applies run's rules for the offsets topic (see
// offsets.EnsureTopic) without creating it: absent is fine (run creates
// it), present needs exactly one partition and cleanup.policy=compact.
func checkOffsetsTopic(ctx context.Context, adm *kadm.Client, topic string) checkLines {
	var out checkLines
	what := fmt.Sprintf("offsets topic %q", topic)
	details, err := adm.ListTopics(ctx, topic)
	if err != nil {
		out.fail(what, "could not describe it: "+err.Error(), "")
		return out
	}
	td, ok := details[topic]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		out.pass(what, "does not exist; mooncdc run creates it (1 partition, cleanup.policy=compact)")
		return out
	}
	if td.Err != nil {
		out.fail(what, "could not describe it: "+td.Err.Error(), "grant mooncdc's principal Describe and DescribeConfigs on the topic")
		return out
	}
	problems, err := offsets.TopicProblems(ctx, adm, td)
	if err != nil {
		out.fail(what, "could not read its configs: "+err.Error(), "grant mooncdc's principal DescribeConfigs on the topic")
		return out
	}
	for _, p := range problems {
		out.fail(what, p, "")
	}
	if len(problems) == 0 {
		out.pass(what, "1 partition, cleanup.policy=compact")
	}
	return out
}

// ---- Schema Registry ----

// checkRegistry asks the Schema Registry for its schema types when a format
// registers schemas (avro, protobuf, json_schema); nothing otherwise.
func checkRegistry(ctx context.Context, cfg config.Config) checkLines {
	var out checkLines
	if !cfg.Format.UsesRegistry() {
		return out
	}
	what := "Schema Registry " + config.RedactURL(cfg.Format.SchemaRegistry.URL)
	cl, err := connector.NewRegistryClient(cfg.Format.SchemaRegistry)
	if err != nil {
		out.fail(what, err.Error(), "")
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	types, err := cl.SupportedTypes(ctx)
	var re *sr.ResponseError
	switch {
	case errors.As(err, &re) && (re.StatusCode == 401 || re.StatusCode == 403):
		out.fail(what, fmt.Sprintf("refused mooncdc's credentials (HTTP %d: %s)", re.StatusCode, re.Message),
			"check format.schema_registry.username and format.schema_registry.password (or password_file)")
	case err != nil:
		out.fail(what, config.RedactURL(err.Error()), "check format.schema_registry.url and that this host reaches it (and ca_file for https)")
	default:
		// The schema types format.key and format.value register.
		var need []sr.SchemaType
		for _, f := range []string{cfg.Format.Key, cfg.Format.Value} {
			t, ok := map[string]sr.SchemaType{config.FormatAvro: sr.TypeAvro, config.FormatProtobuf: sr.TypeProtobuf, config.FormatJSONSchema: sr.TypeJSON}[f]
			if ok && !slices.Contains(need, t) {
				need = append(need, t)
			}
		}
		for _, t := range need {
			if !slices.Contains(types, t) {
				out.fail(what, fmt.Sprintf("supports %v, not %v", types, t), "point format.schema_registry.url at a registry with "+t.String()+", or use format json")
				return out
			}
		}
		names := make([]string, len(need))
		for i, t := range need {
			names[i] = t.String()
		}
		out.pass(what, "reachable, supports "+strings.Join(names, ", "))
	}
	return out
}

func checkUsage() string {
	var b strings.Builder
	b.WriteString(`Usage: mooncdc check [--config FILE] [flags]
       mooncdc check --config DIR [--group NAME] [flags]

Checks, with the config that 'mooncdc run' would use, what run needs, and
changes nothing: Postgres reachable, wal_level, free replication slots and
WAL senders, the role's REPLICATION, the tables (each pattern matches, SELECT
granted, a replica identity), the publication and the slot, Kafka reachable
(every broker at its advertised address), the offsets topic, and the Schema
Registry when a format is avro.

Prints one line per check: "✓ what", "✗ what: cause — fix", or
"! what: cause — fix" for a warning (run works, but act on it), then a
summary. Checks that need Postgres are skipped ("-") when it is unreachable.
With kafka.brokers empty it looks for the embedded development Kafka of a
running 'mooncdc run'.

With --config DIR (a worker group's directory, see 'mooncdc help run'):
every *.yaml and *.yml file is validated on its own (each problem names its
file), then the rules 'mooncdc run --config DIR' applies across the files
(names, slots, kafka.brokers, metrics.listen, worker_group), then every
check above runs for each valid pipeline, in a section named after it and
its file, with its summary; a last line sums up all of them.

Exit codes: 0 nothing failed (warnings allowed), 1 a check failed, 2 invalid
config (with DIR: a file's, or across the files).

`)
	b.WriteString(configFlagsUsage())
	return b.String()
}
