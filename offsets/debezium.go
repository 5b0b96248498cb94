package offsets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// This file reads the offset a Debezium PostgreSQL connector stored in
// Kafka Connect's offsets topic (offset.storage.topic, usually
// connect-offsets), for a takeover without a new snapshot. Connect keys a
// source partition as ["<connector name>",{"server":"<topic.prefix>"}]
// (PostgresPartition.java:21,31-33, v3.6.1.Final) and stores the map
// PostgresOffsetContext.getOffset builds (PostgresOffsetContext.java:74-104)
// as JSON; a null value deletes it.

// DebeziumOffset is a Debezium PostgreSQL connector's stored offset.
type DebeziumOffset struct {
	// LSN is the position of the last event Debezium processed: a
	// change, or the COMMIT (then equal to LSNCommit), or BEGIN.
	LSN uint64 `json:"lsn"`
	// LSNProc is the last position whose events were all processed
	// (lsn_proc); 0 when absent.
	LSNProc uint64 `json:"lsn_proc"`
	// LSNCommit is the end of the last transaction Debezium processed
	// whole (lsn_commit: the LSN pgoutput's Commit message arrives at,
	// PostgresStreamingChangeEventSource.java:351-353); 0 when absent, as
	// after a snapshot with no streamed transaction yet.
	LSNCommit uint64 `json:"lsn_commit"`
	TxID      int64  `json:"txId"`
	TsUsec    int64  `json:"ts_usec"`
	// MessageType is the last event's operation (messageType: INSERT,
	// UPDATE, DELETE, TRUNCATE, MESSAGE, BEGIN, COMMIT); "" in offsets of
	// older versions.
	MessageType string `json:"messageType"`
	// Snapshot is set while a snapshot's records are stored (a snapshot
	// type, or "true"/"last" in older versions); SnapshotCompleted and
	// LastSnapshotRecord say it ended (PostgresOffsetContext.java:63-65).
	Snapshot           any  `json:"snapshot"`
	SnapshotCompleted  bool `json:"snapshot_completed"`
	LastSnapshotRecord bool `json:"last_snapshot_record"`
}

// SnapshotIncomplete reports whether the offset was stored during a
// snapshot that had not ended: Debezium would snapshot again.
func (o DebeziumOffset) SnapshotIncomplete() bool {
	switch s := o.Snapshot.(type) {
	case nil:
		return false
	case bool:
		if !s {
			return false
		}
	case string:
		if s == "" || s == "false" {
			return false
		}
	}
	return !o.SnapshotCompleted && !o.LastSnapshotRecord
}

// ResumeLSN is where streaming goes on from: the end of the last whole
// transaction, or, with none (right after the snapshot), the event
// position the snapshot stored (WalPositionLocator.java:104-107 streams
// everything from there).
func (o DebeziumOffset) ResumeLSN() uint64 {
	if o.LSNCommit != 0 {
		return o.LSNCommit
	}
	return o.LSN
}

// SkipThrough is the last position of the transaction after ResumeLSN
// that Debezium had already sent when it stopped mid-way (its events at
// or below it are in Kafka), or 0 when it stopped at a transaction's
// boundary. It mirrors WalPositionLocator.java:80-102: streaming resumes
// at the event after the last one stored, unless that was BEGIN or COMMIT.
func (o DebeziumOffset) SkipThrough() uint64 {
	if o.LSNCommit == 0 || o.LSN <= o.LSNCommit {
		return 0
	}
	switch o.MessageType {
	case "", "BEGIN", "COMMIT":
		return 0
	}
	return o.LSN
}

// DecodeDebeziumKey reports whether key is the Connect offset key of
// connector name for server (topic.prefix). Any JSON spelling matches. It
// is pure; the bytes are whatever the topic holds.
func DecodeDebeziumKey(key []byte, name, server string) bool {
	var parts []json.RawMessage
	if json.Unmarshal(key, &parts) != nil || len(parts) != 2 {
		return false
	}
	var n string
	var p map[string]any
	if json.Unmarshal(parts[0], &n) != nil || n != name || json.Unmarshal(parts[1], &p) != nil || len(p) != 1 {
		return false
	}
	s, ok := p["server"].(string)
	return ok && s == server
}

// DecodeDebeziumValue decodes a stored offset. It is pure.
func DecodeDebeziumValue(value []byte) (DebeziumOffset, error) {
	var o DebeziumOffset
	d := json.NewDecoder(bytes.NewReader(value))
	d.UseNumber()
	var raw map[string]any
	if err := d.Decode(&raw); err != nil {
		return o, fmt.Errorf("not a Debezium offset (a JSON object): %w", err)
	}
	if _, ok := raw["lsn"]; !ok {
		return o, fmt.Errorf("not a Debezium PostgreSQL offset: no lsn in %s", value)
	}
	if err := json.Unmarshal(value, &o); err != nil {
		return o, fmt.Errorf("a Debezium offset with fields of the wrong type, %s: %w", value, err)
	}
	return o, nil
}

// LoadDebezium reads every partition of Connect's offsets topic to its end
// and returns the latest offset stored for connector name and server;
// found is false when there is none (never stored, or deleted). It blocks
// like [ReadCommitted] and never creates the topic.
func LoadDebezium(ctx context.Context, cl *kgo.Client, topic, name, server string) (o DebeziumOffset, found bool, err error) {
	details, err := kadm.NewClient(cl).ListTopics(fresh(ctx), topic)
	if err != nil {
		return o, false, fmt.Errorf("list topic %q: %w", topic, err)
	}
	td, ok := details[topic]
	if !ok || td.Err != nil {
		return o, false, fmt.Errorf("topic %q: not found (%v): name Kafka Connect's offset.storage.topic", topic, td.Err)
	}
	var latest []byte
	var at string
	for part := range td.Partitions {
		err := ReadCommitted(ctx, cl, topic, part, func(r *kgo.Record) error {
			if DecodeDebeziumKey(r.Key, name, server) {
				// One key stays in one partition (Connect hashes the key),
				// so log order within it is the write order.
				latest, at = r.Value, fmt.Sprintf("partition %d offset %d", r.Partition, r.Offset)
			}
			return nil
		})
		if err != nil {
			return o, false, err
		}
	}
	if latest == nil {
		return o, false, nil
	}
	if o, err = DecodeDebeziumValue(latest); err != nil {
		return o, false, fmt.Errorf("topic %q %s: %w", topic, at, err)
	}
	return o, true, nil
}
