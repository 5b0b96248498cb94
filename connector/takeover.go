package connector

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds the takeover from a stopped Debezium PostgreSQL
// connector (migrate_from.debezium): at the first start under this name
// (no offsets of mooncdc's yet) mooncdc reads Debezium's stored offset,
// continues on Debezium's slot and publication from it, and takes every
// table as handed over there, so nothing is copied again.
//
// What is safe, and why:
//   - The offset's lsn_commit is the end of the last transaction whose
//     records Debezium had in Kafka: mooncdc's durable LSN. Everything
//     after it must still be in the slot, so the slot's confirmed position
//     must not be ahead of it (behind is normal: Debezium confirms to the
//     slot after Connect stores the offset). A slot ahead of it lost the
//     changes in between: exit 3.
//   - A Debezium stopped in the middle of a transaction had sent that
//     transaction's events up to the offset's lsn: mooncdc skips them in
//     that one transaction (offsets.DebeziumOffset.SkipThrough), and keeps
//     the point in its own offsets until the transaction is durable, so a
//     crash before then skips them again.
//   - The publication must already exist: pgoutput decodes each change
//     against the publication as of that change, so one created now would
//     publish nothing of the changes Debezium left.
//   - A snapshot Debezium had not finished is no position: exit 3.

// loadTakeover reads the Debezium offset migrate_from names. A missing
// offset is an unsafe resume: a takeover without one would copy nothing
// and stream from an unknown place.
func (p *Pipeline) loadTakeover(ctx context.Context) (offsets.DebeziumOffset, error) {
	m := p.cfg.MigrateFrom.Debezium
	server := p.cfg.Kafka.TopicPrefix
	cl, err := kgo.NewClient(append(slices.Clip(p.kafka), kgo.ClientID("mooncdc-"+p.cfg.Name+"-migrate"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))...)
	if err != nil {
		return offsets.DebeziumOffset{}, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	o, found, err := offsets.LoadDebezium(ctx, cl, m.OffsetsTopic, m.ConnectorName, server)
	if err != nil {
		return o, fmt.Errorf("migrate_from.debezium: read Debezium's offset: %w", err)
	}
	fix := "check migrate_from.debezium (offsets_topic, connector_name) and kafka.topic_prefix (Debezium's topic.prefix), or remove migrate_from to copy every table anew"
	switch {
	case !found:
		return o, &UnsafeResumeError{Reason: fmt.Sprintf(
			"migrate_from.debezium: topic %q holds no offset of connector %q for server %q (key [%q,{\"server\":%q}]); %s",
			m.OffsetsTopic, m.ConnectorName, server, m.ConnectorName, server, fix)}
	case o.SnapshotIncomplete():
		return o, &UnsafeResumeError{Reason: fmt.Sprintf(
			"migrate_from.debezium: connector %q stopped during its snapshot, so its offset is no streaming position; remove migrate_from to copy every table anew",
			m.ConnectorName)}
	case o.ResumeLSN() == 0:
		return o, &UnsafeResumeError{Reason: fmt.Sprintf("migrate_from.debezium: connector %q's offset has no position (lsn 0); %s", m.ConnectorName, fix)}
	}
	p.log.Info("taking over from Debezium", zap.String("connector", m.ConnectorName), zap.String("offsets_topic", m.OffsetsTopic),
		zap.Stringer("lsn_commit", schema.LSN(o.LSNCommit)), zap.Stringer("lsn", schema.LSN(o.LSN)), zap.Int64("tx_id", o.TxID))
	return o, nil
}

// adoptDebezium returns the pipeline record for a takeover at o on the
// existing slot, or why it is unsafe.
func (p *Pipeline) adoptDebezium(o offsets.DebeziumOffset, id pgsource.SourceIdentity, slot pgsource.SlotInfo, pubExists bool) (offsets.Pipeline, error) {
	cfg := p.cfg
	resume := o.ResumeLSN()
	fresh := "remove migrate_from to copy every table anew"
	switch {
	case !slot.Exists:
		return offsets.Pipeline{}, &UnsafeResumeError{Reason: fmt.Sprintf(
			"migrate_from.debezium: replication slot %q is missing: set postgres.slot to Debezium's slot.name, or, if it was dropped, the changes after Debezium's offset are gone: %s",
			cfg.Postgres.Slot, fresh)}
	case slot.WALStatus == "lost":
		return offsets.Pipeline{}, &UnsafeResumeError{Reason: fmt.Sprintf(
			"migrate_from.debezium: replication slot %q is invalidated (wal_status lost): the changes after Debezium's offset are gone; %s", cfg.Postgres.Slot, fresh)}
	case uint64(slot.ConfirmedFlush) > resume:
		return offsets.Pipeline{}, &UnsafeResumeError{Reason: fmt.Sprintf(
			"migrate_from.debezium: replication slot %q is confirmed to %s, ahead of Debezium's stored offset %s: the changes in between were consumed and are gone; "+
				"was another consumer on the slot, or is the offset topic or connector name wrong? %s",
			cfg.Postgres.Slot, slot.ConfirmedFlush, schema.LSN(resume), fresh)}
	case !pubExists:
		return offsets.Pipeline{}, &UnsafeResumeError{Reason: fmt.Sprintf(
			"migrate_from.debezium: publication %q does not exist, so the slot's changes since Debezium's offset were published to nobody; set postgres.publication to Debezium's publication.name, or %s",
			cfg.Postgres.Publication, fresh)}
	}
	return offsets.Pipeline{SystemID: id.SystemID, Database: id.Database, Slot: cfg.Postgres.Slot, Publication: cfg.Postgres.Publication,
		InitialLSN: resume, DurableLSN: resume, SkipThrough: o.SkipThrough()}, nil
}
