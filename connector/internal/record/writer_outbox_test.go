package record

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/schema"
)

// outboxTestWriter is a record writer of the outbox envelope (defaults,
// the type field placed in a header), refusing records above maxRecord
// bytes, counting in a tracker of its own; it sends nothing.
func outboxTestWriter(t *testing.T, maxRecord int) (*Writer, *delivery.Tracker) {
	t.Helper()
	cfg := config.DefaultConfig()
	cfg.Name = "shop"
	cfg.Format.Envelope = config.EnvelopeOutbox
	cfg.Format.Outbox.Table = "public.outbox"
	cfg.Format.Outbox.MessagePrefix = "outbox"
	cfg.Format.Outbox.TableFieldsAdditionalPlacement = []string{"type:header"}
	cfg.ApplyDefaults()
	cfg.Kafka.TopicPrefix = "shop"
	naming, err := cfg.TopicNaming()
	if err != nil {
		t.Fatal(err)
	}
	f := NewFormats(cfg.Format, EncoderConfig(&cfg, "shop", naming, nil, nil), nil, naming, maxRecord, zap.NewNop())
	tracker := delivery.NewTracker(0, 1<<20, nil)
	return NewWriter(f.Codec(), nil, NewAcks(tracker, new(Pool), nil)), tracker
}

// TestOutboxRecordsKeepTheirHeadersAndSizeErrorThroughTheOneWriter guards
// what Writer.Outbox (S0.4 F5: the one place an outbox record is made,
// streamed or copied) must keep from the two paths it replaced:
//   - the mooncdc.* headers come first, then the event's own: Debezium's
//     EventRouter adds `id` and the header-placed fields to the headers the
//     record already has (r.headers(), EventRouterDelegate.java:159-160,
//     :203-208 at v3.6.1.Final); a streamed event's commit and sequence are
//     its transaction's, a copied one's the snapshot LSN and its row number;
//   - the record is in the unit given, on the route-by topic
//     (ERD.java:234-235), keyed by aggregateid (ERD.java:232);
//   - an event above kafka.max_record_bytes is a *RecordError for the
//     event's topic at the change's LSN wrapping *RecordTooLargeError,
//     which fault classifies as the table's own (parked), and no record.
func TestOutboxRecordsKeepTheirHeadersAndSizeErrorThroughTheOneWriter(t *testing.T) {
	ctx := context.Background()
	msg := []byte(`{"id":"m1","aggregatetype":"Customer","aggregateid":"c2","type":"CustomerMoved","payload":{"city":"Bern"}}`)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	w, tracker := outboxTestWriter(t, 1<<20)
	ev, err := w.Codec.Outbox().Message(msg)
	if err != nil {
		t.Fatal(err)
	}
	streamed := &schema.Change{LSN: 256, Seq: 2, Tx: &schema.Tx{CommitLSN: 384}}
	for _, tc := range []struct {
		name        string
		commit      schema.LSN
		seq         int64
		wantHeaders [][2]string
	}{
		{"streamed", ChangeCommit(streamed), int64(streamed.Seq),
			[][2]string{{HeaderLSN, "256"}, {HeaderCommitLSN, "384"}, {HeaderTxSeq, "2"}, {"id", "m1"}, {"type", "CustomerMoved"}}},
		{"copied", 200, 7, // the snapshot's LSN and the row's number in its copy
			[][2]string{{HeaderLSN, "256"}, {HeaderCommitLSN, "200"}, {HeaderTxSeq, "7"}, {"id", "m1"}, {"type", "CustomerMoved"}}},
	} {
		unit := tracker.Begin()
		rec, err := w.Outbox(ctx, unit, streamed, ev, now, tc.commit, tc.seq)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got [][2]string
		for _, h := range rec.Headers {
			got = append(got, [2]string{h.Key, string(h.Value)})
		}
		if len(got) != len(tc.wantHeaders) {
			t.Fatalf("%s: headers %v, want %v", tc.name, got, tc.wantHeaders)
		}
		for i := range got {
			if got[i] != tc.wantHeaders[i] {
				t.Errorf("%s: headers %v, want %v", tc.name, got, tc.wantHeaders)
				break
			}
		}
		if rec.Topic != "outbox.event.Customer" || string(rec.Key) != `"c2"` || rec.Context != any(unit) {
			t.Errorf("%s: topic %q key %s unit %v, want outbox.event.Customer, \"c2\", the unit given", tc.name, rec.Topic, rec.Key, rec.Context)
		}
	}

	small, _ := outboxTestWriter(t, 10)
	ev, err = small.Codec.Outbox().Message(msg)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := small.Outbox(ctx, nil, streamed, ev, now, ChangeCommit(streamed), 0)
	var re *RecordError
	var tl *RecordTooLargeError
	if rec != nil || !errors.As(err, &re) || re.Topic != "outbox.event.Customer" || re.LSN != 256 ||
		!errors.As(re.Err, &tl) || tl.Max != 10 || tl.Size <= 10 {
		t.Fatalf("an event above kafka.max_record_bytes: record %v, error %#v; want none and a *RecordError for outbox.event.Customer at 256 wrapping *RecordTooLargeError{Max: 10}", rec, err)
	}
	if !fault.TableFault(err) {
		t.Errorf("%v: not the table's own fault; the outbox table would not be parked", err)
	}
}
