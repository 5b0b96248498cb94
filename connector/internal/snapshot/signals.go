package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/notify"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds signals in Debezium's format, read from a Kafka topic
// (signals.kafka_topic; Debezium's KafkaSignalChannel: a record whose key is
// the topic prefix and whose value is {"type":…,"data":{…}}) or from the
// rows inserted into a signal table (signals.table; Debezium's
// SourceSignalChannel: the main worker sees the insert in the stream, in
// commit order, and hands it over before it emits the row's record). They
// act on the snapshotter, on its loop goroutine:
//
//   - execute-snapshot: copy the tables data-collections names again
//     (regular expressions matched against schema.table), each restricted by
//     its additional-conditions filter, if any. A filtered re-copy sends the
//     matching rows only and tombstones nothing. Type incremental
//     (Debezium's default) on a ready table is an incremental snapshot
//     (incremental.go): chunks read between watermarks while the table's
//     changes stream on. Type blocking, or any type on a table that is not
//     ready, is the blocking copy (copy worker, private catch-up,
//     handover), whose rows' source.snapshot markers the type decides
//     (snapshotrun.go).
//   - stop-snapshot: drop the re-copies requested and not started yet.
//   - pause-snapshot, resume-snapshot: start no new copy until resumed;
//     copies in progress finish.
//   - log: write data.message to the log.

// signal is one Debezium signal.
type signal struct {
	ID   string
	Type string
	Data signalData
}

// signalData is the data of the signal types mooncdc acts on
// (ExecuteSnapshot.java, StopSnapshot.java, Log.java in
// debezium-connector-common/src/main/java/io/debezium/pipeline/signal/actions/,
// v3.6.1.Final).
type signalData struct {
	DataCollections      []string `json:"data-collections"`
	Type                 string   `json:"type"`
	AdditionalConditions []struct {
		DataCollection string `json:"data-collection"`
		Filter         string `json:"filter"`
	} `json:"additional-conditions"`
	Message string `json:"message"`
}

// The signal types.
const (
	signalExecuteSnapshot = "execute-snapshot"
	signalStopSnapshot    = "stop-snapshot"
	signalPauseSnapshot   = "pause-snapshot"
	signalResumeSnapshot  = "resume-snapshot"
	signalLog             = "log"
)

// parseSignal decodes a signal record's value. It is pure; the bytes come
// from whoever may write to the topic.
func parseSignal(id string, value []byte) (signal, error) {
	var raw struct {
		ID   string          `json:"id"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(value, &raw); err != nil {
		return signal{}, fmt.Errorf("not a signal ({\"type\":…,\"data\":{…}}): %w", err)
	}
	if raw.ID != "" {
		id = raw.ID // KafkaSignalChannel.java:119-124: the document's id
	}
	return newSignal(id, raw.Type, raw.Data)
}

// parseSignalRow decodes a row inserted into the signal table: its three
// columns, whatever their names, are the id, the type and the data, in
// that order (CommonConnectorConfig.java:2221-2236, v3.6.1.Final). It is
// pure; the row is whatever the table's writers inserted.
func parseSignalRow(row schema.Tuple) (signal, error) {
	if len(row) != 3 {
		return signal{}, fmt.Errorf("the signal table has %d columns; it needs 3: id, type and data (CREATE TABLE … (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048)))", len(row))
	}
	var f [3]string
	for i, v := range row {
		switch v.Kind {
		case schema.ValueText:
			f[i] = string(v.Data)
		case schema.ValueUnchangedToast:
			return signal{}, errors.New("the signal row's data was not sent (unchanged TOAST)")
		}
	}
	return newSignal(f[0], f[1], []byte(f[2]))
}

// newSignal checks a signal's type and decodes its data.
func newSignal(id, typ string, data []byte) (signal, error) {
	sg := signal{ID: id, Type: strings.ToLower(typ)}
	switch sg.Type {
	case signalExecuteSnapshot, signalStopSnapshot, signalPauseSnapshot, signalResumeSnapshot, signalLog:
	default:
		return signal{}, fmt.Errorf("unknown signal type %q; mooncdc acts on %s, %s, %s, %s and %s", typ,
			signalExecuteSnapshot, signalStopSnapshot, signalPauseSnapshot, signalResumeSnapshot, signalLog)
	}
	if len(data) > 0 && string(data) != "null" {
		if err := json.Unmarshal(data, &sg.Data); err != nil {
			return signal{}, fmt.Errorf("signal %s: data: %w", sg.Type, err)
		}
	}
	if sg.Type == signalExecuteSnapshot {
		if len(sg.Data.DataCollections) == 0 {
			return signal{}, errors.New("execute-snapshot without data-collections: name the tables, e.g. {\"data-collections\":[\"public.orders\"]}")
		}
		// The snapshot's type: incremental unless the signal says
		// otherwise, any case; another value skips the signal
		// (AbstractSnapshotSignal.java:36-46, v3.6.1.Final).
		switch t := strings.ToLower(sg.Data.Type); t {
		case "":
			sg.Data.Type = offsets.ResnapshotIncremental
		case offsets.ResnapshotIncremental, offsets.ResnapshotBlocking:
			sg.Data.Type = t
		default:
			return signal{}, fmt.Errorf("execute-snapshot of type %q: the types are incremental (the default) and blocking", sg.Data.Type)
		}
	}
	for _, dc := range sg.Data.DataCollections {
		if _, err := regexp.Compile(dc); err != nil {
			return signal{}, fmt.Errorf("data-collection %q is not a regular expression: %w", dc, err)
		}
	}
	return sg, nil
}

// matches reports whether the data collection expression dc names table
// ("schema.table"): a regular expression matched against the whole name,
// as Debezium matches data collections.
func matches(dc, table string) bool {
	re, err := regexp.Compile(`^(?:` + dc + `)$`)
	return err == nil && re.MatchString(table)
}

// watchSignals reads signals.kafka_topic from its end at start (a signal
// sent while mooncdc is stopped is not acted on) and hands each signal for
// this connector to the loop.
func (s *Snapshotter) watchSignals(ctx context.Context) error {
	topic := s.cfg.signals.KafkaTopic
	cl, err := kgo.NewClient(append(slices.Clip(s.cfg.kafka), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	// One partition keeps the signals in order, as KafkaSignalChannel
	// reads partition 0 (KafkaSignalChannel.java:140-142).
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, nil, topic); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		s.log.Warn("could not create the signal topic; create it with one partition", zap.String("topic", topic), zap.Error(err))
	}
	prefix := s.cfg.prefix
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		fs.EachError(func(_ string, _ int32, err error) {
			s.log.Debug("reading signals", zap.String("topic", topic), zap.Error(err))
		})
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Key) != prefix {
				return // another connector's (KafkaSignalChannel keys signals by topic.prefix)
			}
			id := fmt.Sprintf("%s/%d/%d", r.Topic, r.Partition, r.Offset)
			sg, err := parseSignal(id, r.Value)
			if err != nil {
				s.log.Warn("signal ignored", zap.String("signal", id), zap.Error(err))
				return
			}
			select {
			case s.signals <- sg:
			case <-ctx.Done():
			}
		})
	}
}

// TableSignal hands over a signal inserted into the signal table; it runs
// on the stream goroutine and waits while the loop is busy, as the stream
// waits for Kafka. A signal the row does not make is logged and dropped,
// as Debezium does (SourceSignalChannel.java:80-98).
func (s *Snapshotter) TableSignal(ctx context.Context, ch *schema.Change) {
	sg, err := parseSignalRow(ch.After)
	if err != nil {
		s.log.Warn("signal ignored", zap.String("table", s.cfg.signals.Table), zap.Stringer("lsn", ch.LSN), zap.Error(err))
		return
	}
	select {
	case s.signals <- sg:
	case <-ctx.Done():
	}
}

// signal acts on sg; it runs on the loop goroutine.
func (s *Snapshotter) signal(sg signal) {
	log := s.log.With(zap.String("signal", sg.ID), zap.String("type", sg.Type))
	switch sg.Type {
	case signalLog:
		log.Info("signal: " + sg.Data.Message)
	case signalPauseSnapshot:
		s.paused = true
		if !s.incPaused.Swap(true) {
			// AbstractIncrementalSnapshotChangeEventSource.java:124-127: only
			// a running snapshot that was not paused notifies.
			if names, id := s.runningIncremental(); len(names) > 0 {
				s.note(id, func(src notify.Source, now int64) notify.Notification { return src.PausedOf(names, now) })
			}
		}
		log.Info("snapshots paused: no new copy starts until resume-snapshot; copies in progress finish; incremental snapshots open no new window")
	case signalResumeSnapshot:
		s.paused = false
		if s.incPaused.Swap(false) {
			// :134-137: only a running, paused snapshot notifies.
			if names, id := s.runningIncremental(); len(names) > 0 {
				s.note(id, func(src notify.Source, now int64) notify.Notification { return src.ResumedOf(names, now) })
			}
		}
		s.incMu.Lock()
		held := s.incHeld
		s.incHeld = nil
		s.incMu.Unlock()
		for _, t := range held {
			s.startIncremental(s.runCtx, t)
		}
		log.Info("snapshots resumed")
	case signalStopSnapshot:
		if n := s.stopIncremental(func(name string) bool {
			return len(sg.Data.DataCollections) == 0 || slices.ContainsFunc(sg.Data.DataCollections, func(dc string) bool { return matches(dc, name) })
		}); n > 0 {
			log.Info("incremental snapshots stopped", zap.Int("tables", n))
		}
		for name := range s.pending {
			if len(sg.Data.DataCollections) == 0 || slices.ContainsFunc(sg.Data.DataCollections, func(dc string) bool { return matches(dc, name) }) {
				delete(s.pending, name)
				log.Info("requested re-copy dropped", zap.String("table", name))
			}
		}
	case signalExecuteSnapshot:
		now := time.Now().UnixMilli()
		n := 0
		for name := range s.phases.All() {
			if !slices.ContainsFunc(sg.Data.DataCollections, func(dc string) bool { return matches(dc, name) }) {
				continue
			}
			t := offsets.Table{Table: name, ResnapshotMs: now, ResnapshotType: sg.Data.Type, SignalID: sg.ID}
			if sg.Data.Type == offsets.ResnapshotIncremental {
				t.Incremental = offsets.IncrementalRequested
			}
			for _, ac := range sg.Data.AdditionalConditions {
				if matches(ac.DataCollection, name) || ac.DataCollection == name {
					t.ResnapshotFilter = ac.Filter
				}
			}
			log.Info("signal: table copied again", zap.String("table", name), zap.String("snapshot_type", t.ResnapshotType),
				zap.String("filter", t.ResnapshotFilter))
			s.request(t)
			n++
		}
		if n == 0 {
			log.Warn("execute-snapshot names no captured table", zap.Strings("data_collections", sg.Data.DataCollections))
		}
	}
}
