package connector

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

	"github.com/mooncdc/mooncdc/offsets"
)

// This file holds signals in Debezium's format, read from a Kafka topic
// (signals.kafka_topic; Debezium's KafkaSignalChannel: a record whose key is
// the topic prefix and whose value is {"type":…,"data":{…}}). They act on
// the snapshotter, on its loop goroutine:
//
//   - execute-snapshot: copy the tables data-collections names again
//     (regular expressions matched against schema.table), each restricted by
//     its additional-conditions filter, if any. A filtered re-copy sends the
//     matching rows only and tombstones nothing. Debezium's incremental and
//     blocking types both become mooncdc's re-copy, which streams on
//     meanwhile (copy worker, private catch-up, handover).
//   - stop-snapshot: drop the re-copies requested and not started yet.
//   - pause-snapshot, resume-snapshot: start no new copy until resumed;
//     copies in progress finish.
//   - log: write data.message to the log.

// SignalsConfig is where signals come from.
type SignalsConfig struct {
	// KafkaTopic is read for signals (Debezium's signal.kafka.topic).
	KafkaTopic string `yaml:"kafka_topic"`
	// Table is a signal table (Debezium's signal.data.collection); not
	// read yet: Validate refuses it.
	Table string `yaml:"table"`
}

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
	sg := signal{ID: id, Type: strings.ToLower(raw.Type)}
	switch sg.Type {
	case signalExecuteSnapshot, signalStopSnapshot, signalPauseSnapshot, signalResumeSnapshot, signalLog:
	default:
		return signal{}, fmt.Errorf("unknown signal type %q; mooncdc acts on %s, %s, %s, %s and %s", raw.Type,
			signalExecuteSnapshot, signalStopSnapshot, signalPauseSnapshot, signalResumeSnapshot, signalLog)
	}
	if len(raw.Data) > 0 && string(raw.Data) != "null" {
		if err := json.Unmarshal(raw.Data, &sg.Data); err != nil {
			return signal{}, fmt.Errorf("signal %s: data: %w", sg.Type, err)
		}
	}
	if sg.Type == signalExecuteSnapshot && len(sg.Data.DataCollections) == 0 {
		return signal{}, errors.New("execute-snapshot without data-collections: name the tables, e.g. {\"data-collections\":[\"public.orders\"]}")
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
func (s *snapshotter) watchSignals(ctx context.Context) error {
	topic := s.p.cfg.Signals.KafkaTopic
	cl, err := kgo.NewClient(append(slices.Clip(s.p.kafka), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
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
	prefix := s.p.cfg.Kafka.TopicPrefix
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

// signal acts on sg; it runs on the loop goroutine.
func (s *snapshotter) signal(sg signal) {
	log := s.log.With(zap.String("signal", sg.ID), zap.String("type", sg.Type))
	switch sg.Type {
	case signalLog:
		log.Info("signal: " + sg.Data.Message)
	case signalPauseSnapshot:
		s.paused = true
		log.Info("snapshots paused: no new copy starts until resume-snapshot; copies in progress finish")
	case signalResumeSnapshot:
		s.paused = false
		log.Info("snapshots resumed")
	case signalStopSnapshot:
		for name := range s.pending {
			if len(sg.Data.DataCollections) == 0 || slices.ContainsFunc(sg.Data.DataCollections, func(dc string) bool { return matches(dc, name) }) {
				delete(s.pending, name)
				log.Info("requested re-copy dropped", zap.String("table", name))
			}
		}
	case signalExecuteSnapshot:
		now := time.Now().UnixMilli()
		n := 0
		for name := range s.phases.all() {
			if !slices.ContainsFunc(sg.Data.DataCollections, func(dc string) bool { return matches(dc, name) }) {
				continue
			}
			t := offsets.Table{Table: name, ResnapshotMs: now}
			for _, ac := range sg.Data.AdditionalConditions {
				if matches(ac.DataCollection, name) || ac.DataCollection == name {
					t.ResnapshotFilter = ac.Filter
				}
			}
			log.Info("signal: table copied again", zap.String("table", name), zap.String("filter", t.ResnapshotFilter))
			s.request(t)
			n++
		}
		if n == 0 {
			log.Warn("execute-snapshot names no captured table", zap.Strings("data_collections", sg.Data.DataCollections))
		}
	}
}
