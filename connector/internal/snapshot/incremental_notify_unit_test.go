package snapshot

import (
	"fmt"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/notify"
	"github.com/mooncdc/mooncdc/connector/internal/watermark"
	"github.com/mooncdc/mooncdc/offsets"
)

// The TABLE_SCAN_COMPLETED status of a run's end, as Debezium's
// (AbstractIncrementalSnapshotChangeEventSource.java:292-341, 392 at
// v3.6.1.Final): a refusal for want of a key NO_PRIMARY_KEY, another
// refusal SKIPPED, a failure SQL_EXCEPTION, no row EMPTY.
func TestScanStatusAsDebeziumsTableScanCompletionStatus(t *testing.T) {
	noKey := watermark.Eligible(watermark.Table{Name: "public.t"})
	outbox := watermark.Eligible(watermark.Table{Name: "public.t", Key: watermark.KeyPrimary, Outbox: true,
		Publishes: watermark.Operations{Insert: true, Update: true, Delete: true, Truncate: true}})
	for _, c := range []struct {
		err  error
		rows int64
		want notify.ScanStatus
	}{
		{nil, 10, notify.ScanSucceeded},
		{nil, 0, notify.ScanEmpty},
		{noKey, 0, notify.ScanNoPrimaryKey},
		{fmt.Errorf("wrapped: %w", noKey), 0, notify.ScanNoPrimaryKey},
		{outbox, 0, notify.ScanSkipped},
		{fmt.Errorf("read the size of public.t: boom"), 0, notify.ScanSQLException},
	} {
		if got := scanStatus(c.err, c.rows); got != c.want {
			t.Errorf("scanStatus(%v, %d) = %s, want %s", c.err, c.rows, got, c.want)
		}
	}
}

// A new request is STARTED with its signal's id; one resumed from its
// progress is not, and keeps the id its progress stored (Debezium keeps
// the correlation id in its offsets, AbstractIncrementalSnapshotContext.java:295).
func TestRequestOfTellsANewRequestAndItsCorrelationID(t *testing.T) {
	for _, c := range []struct {
		t      offsets.Table
		fresh  bool
		wantID string
	}{
		{offsets.Table{SignalID: "sig-1"}, true, "sig-1"},
		{offsets.Table{Incremental: offsets.IncrementalRequested, SignalID: "sig-2"}, true, "sig-2"},
		{offsets.Table{Incremental: `{"pages":10,"relfilenode":1,"done":[],"rows":0,"chunk_pages":2,"started_ms":1,"paused":false,"correlation_id":"sig-3"}`}, false, "sig-3"},
		{offsets.Table{Incremental: `{"pages":10,"relfilenode":1,"done":[],"rows":0,"chunk_pages":2,"started_ms":1,"paused":false}`}, false, ""},
	} {
		fresh, id := requestOf(c.t)
		if fresh != c.fresh || id != c.wantID {
			t.Errorf("requestOf(%+v) = %v, %q; want %v, %q", c.t, fresh, id, c.fresh, c.wantID)
		}
	}
}
