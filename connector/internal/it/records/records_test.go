package records

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
)

// TestFullBatchesFitTheBrokersDefaultLimit: a burst of small records fills
// producer batches to their maximum size, which must stay within the
// brokers' default message.max.bytes (1048588) whatever
// kafka.max_record_bytes is at its default.
func TestFullBatchesFitTheBrokersDefaultLimit(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.burst (id int PRIMARY KEY, v text)`)
	cfg := e.Config("burst", "public.burst")
	cfg.Snapshot.Mode = config.SnapshotNever
	r := ittest.StartStreaming(t, cfg)
	const rows = 30000
	e.Exec(`INSERT INTO burst SELECT i, repeat(md5(i::text), 6) FROM generate_series(1, $1) i`, rows)
	if evs := ittest.Consume(t, e.Kafka, rows, "burst.public.burst"); len(evs) < rows {
		t.Fatalf("%d records, want %d", len(evs), rows)
	}
	if err := r.Stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// TestEveryRecordCarriesDedupeHeaders: snapshot rows and changes carry
// mooncdc.lsn, mooncdc.commit_lsn and mooncdc.tx_seq, with which an
// at-least-once consumer drops repeats.
func TestEveryRecordCarriesDedupeHeaders(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.h (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO h VALUES (1), (2)`)
	r := ittest.Start(t, e.Config("hdr", "public.h"))
	e.Exec(`BEGIN; INSERT INTO h VALUES (3); INSERT INTO h VALUES (4); DELETE FROM h WHERE id = 1; COMMIT`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	recs := kafkatest.ReadAll(ctx, t, e.Kafka, 6, "hdr.public.h") // 2 rows, 2 inserts, delete, tombstone
	if len(recs) != 6 {
		t.Fatalf("%d records", len(recs))
	}
	hdr := func(rec *kgo.Record) (lsn, commit, seq int64) {
		vals := map[string]int64{}
		for _, h := range rec.Headers {
			n, err := strconv.ParseInt(string(h.Value), 10, 64)
			if err != nil {
				t.Fatalf("header %s = %q", h.Key, h.Value)
			}
			vals[h.Key] = n
		}
		if len(vals) != 3 {
			t.Fatalf("headers %v", rec.Headers)
		}
		return vals[connector.HeaderLSN], vals[connector.HeaderCommitLSN], vals[connector.HeaderTxSeq]
	}
	snapL, snapC, snapS := hdr(recs[0])
	_, snapC2, snapS2 := hdr(recs[1])
	if snapL != snapC || snapC2 != snapC || snapS == snapS2 || snapS > 1 || snapS2 > 1 {
		t.Errorf("snapshot rows: lsn %d commit %d/%d seq %d/%d", snapL, snapC, snapC2, snapS, snapS2)
	}
	var commits []int64
	for i, rec := range recs[2:] {
		lsn, commit, seq := hdr(rec)
		commits = append(commits, commit)
		want := int64(min(i, 2)) // the tombstone repeats its delete's headers
		if seq != want || lsn < snapL || commit < lsn {
			t.Errorf("record %d: lsn %d commit %d seq %d (want seq %d; snapshot lsn %d)", i+2, lsn, commit, seq, want, snapL)
		}
	}
	if commits[0] != commits[3] {
		t.Errorf("one transaction's records have commit LSNs %v", commits)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
