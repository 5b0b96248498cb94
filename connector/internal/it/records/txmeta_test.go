package records

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// txRecord is a record of the transaction metadata topic.
type txRecord struct {
	Status          string `json:"status"`
	ID              string `json:"id"`
	EventCount      *int64 `json:"event_count"`
	DataCollections []struct {
		DataCollection string `json:"data_collection"`
		EventCount     int64  `json:"event_count"`
	} `json:"data_collections"`
	TsMs   int64 `json:"ts_ms"`
	Key    string
	Offset int64
}

// txChange is a change record with its transaction block.
type txChange struct {
	Source struct {
		TxID int64 `json:"txId"`
		LSN  int64 `json:"lsn"`
		TsMs int64 `json:"ts_ms"`
	} `json:"source"`
	Transaction *struct {
		ID                  string `json:"id"`
		TotalOrder          int64  `json:"total_order"`
		DataCollectionOrder int64  `json:"data_collection_order"`
	} `json:"transaction"`
}

func readTx(t *testing.T, e *ittest.Env, n int, topic string) []txRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out []txRecord
	for _, r := range kafkatest.ReadAll(ctx, t, e.Kafka, n, topic) {
		r = ittest.UnwrapConnect(t, r)
		var v txRecord
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("%s: %v", r.Value, err)
		}
		var k struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(r.Key, &k); err != nil {
			t.Fatalf("key %s: %v", r.Key, err)
		}
		v.Key, v.Offset = k.ID, r.Offset
		out = append(out, v)
	}
	return out
}

func readTxChange(t *testing.T, e *ittest.Env, topic string) txChange {
	t.Helper()
	raw := ittest.ConsumeRaw(t, e, 1, topic)
	var c txChange
	if err := json.Unmarshal(raw[0], &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTransactionMetadataBeginChangesEndInOneUnit: with
// provide_transaction_metadata, a transaction writing two tables gives
// BEGIN, its two changes and END, as Debezium's TransactionMetadataIT
// expects (TransactionMetadataIT.java:105-109): the changes' transaction
// block numbers them 1 and 2 in all and 1 in each table
// (TransactionMetadataIT.java:107-108, 276-286), END counts 2 with one per
// table (TransactionMetadataIT.java:109, 256-273), BEGIN has no count
// (TransactionMetadataIT.java:246-249), and every id is "<xid>:<the
// event's lsn>" with the key's id the value's
// (TransactionMetadataIT.java:248-252, 262-267, 279-282). In exactly-once
// mode BEGIN and END are adjacent in their partition (no transaction marker
// between): the changes, produced between them, are in the same Kafka
// transaction.
func TestTransactionMetadataBeginChangesEndInOneUnit(t *testing.T) {
	for _, mode := range []config.Delivery{config.DeliveryAtLeastOnce, config.DeliveryExactlyOnce} {
		for _, schemas := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/json_schemas=%v", mode, schemas), func(t *testing.T) {
				e := ittest.NewEnv(t)
				e.Exec(`CREATE TABLE a (pk serial PRIMARY KEY, aa int)`)
				e.Exec(`CREATE TABLE b (pk serial PRIMARY KEY, aa int)`)
				cfg := e.Config("tm", "public.a", "public.b")
				cfg.Kafka.Delivery = mode
				cfg.Format.JSONSchemas = schemas
				cfg.Format.ProvideTransactionMetadata = true
				cfg.Snapshot.Mode = config.SnapshotNever
				r := ittest.StartStreaming(t, cfg)
				e.Exec(`INSERT INTO a (aa) VALUES (1); INSERT INTO b (aa) VALUES (1);`)

				recs := readTx(t, e, 2, "tm.transaction")
				ca, cb := readTxChange(t, e, "tm.public.a"), readTxChange(t, e, "tm.public.b")
				if err := r.Stop(t); err != nil {
					t.Fatal(err)
				}
				begin, end := recs[0], recs[1]
				xid := fmt.Sprint(ca.Source.TxID)
				if begin.Status != "BEGIN" || begin.EventCount != nil || begin.DataCollections != nil ||
					!strings.HasPrefix(begin.ID, xid+":") || begin.Key != begin.ID {
					t.Errorf("BEGIN = %+v, want status BEGIN, no counts, id %s:<lsn> as in the key", begin, xid)
				}
				for i, c := range []struct {
					ch    txChange
					total int64
				}{{ca, 1}, {cb, 2}} {
					tx := c.ch.Transaction
					want := fmt.Sprintf("%s:%d", xid, c.ch.Source.LSN)
					if tx == nil || tx.ID != want || tx.TotalOrder != c.total || tx.DataCollectionOrder != 1 {
						t.Errorf("change %d: transaction %+v, want id %s total_order %d data_collection_order 1", i, tx, want, c.total)
					}
				}
				counts := map[string]int64{}
				for _, dc := range end.DataCollections {
					counts[dc.DataCollection] = dc.EventCount
				}
				if end.Status != "END" || end.EventCount == nil || *end.EventCount != 2 || len(counts) != 2 ||
					counts["public.a"] != 1 || counts["public.b"] != 1 || !strings.HasPrefix(end.ID, xid+":") ||
					end.Key != end.ID || end.ID == begin.ID {
					t.Errorf("END = %+v, want 2 events, one in public.a and one in public.b, its own id %s:<lsn>", end, xid)
				}
				if begin.TsMs != ca.Source.TsMs || end.TsMs != ca.Source.TsMs {
					t.Errorf("ts_ms BEGIN %d END %d, want the commit time %d", begin.TsMs, end.TsMs, ca.Source.TsMs)
				}
				if end.Offset != begin.Offset+1 {
					t.Errorf("BEGIN at offset %d, END at %d: a transaction marker between them", begin.Offset, end.Offset)
				}
			})
		}
	}
}

// TestTransactionBlockNullByDefault: Debezium writes no transaction
// metadata unless asked (TransactionMonitor.java:75-78): the block is null
// and nothing is written to <prefix>.transaction.
func TestTransactionBlockNullByDefault(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE a (pk serial PRIMARY KEY, aa int)`)
	cfg := e.Config("nm", "public.a")
	cfg.Snapshot.Mode = config.SnapshotNever
	r := ittest.StartStreaming(t, cfg)
	e.Exec(`INSERT INTO a (aa) VALUES (1)`)
	c := readTxChange(t, e, "nm.public.a")
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	if c.Transaction != nil {
		t.Errorf("transaction = %+v, want null", c.Transaction)
	}
	if recs := readTx(t, e, -1, "nm.transaction"); len(recs) != 0 {
		t.Errorf("%d records on nm.transaction, want none", len(recs))
	}
}

// TestTruncateSkippedByDefaultAsDebezium: skipped.operations defaults to
// t (CommonConnectorConfig.java:838-848): a truncate is not written unless
// format.skipped_operations is [none] or []; a listed operation is not
// written (EventDispatcher.java:323-330), nor its tombstone.
func TestTruncateSkippedByDefaultAsDebezium(t *testing.T) {
	for _, tt := range []struct {
		name    string
		skipped []string // nil: the default
		want    []string // the ops written, "-" a tombstone
	}{
		{"default", nil, []string{"c", "u", "d", "-", "c"}},
		{"none", []string{"none"}, []string{"c", "u", "d", "-", "t", "c"}},
		{"empty", []string{}, []string{"c", "u", "d", "-", "t", "c"}},
		{"deletes", []string{"d"}, []string{"c", "u", "t", "c"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := ittest.NewEnv(t)
			e.Exec(`CREATE TABLE a (pk int PRIMARY KEY, aa int)`)
			cfg := e.Config("sk", "public.a")
			cfg.Snapshot.Mode = config.SnapshotNever
			if tt.skipped != nil {
				cfg.Format.SkippedOperations = tt.skipped
			}
			r := ittest.StartStreaming(t, cfg)
			e.Exec(`INSERT INTO a VALUES (1, 1)`)
			e.Exec(`UPDATE a SET aa = 2`)
			e.Exec(`DELETE FROM a`)
			e.Exec(`TRUNCATE a`)
			e.Exec(`INSERT INTO a VALUES (2, 1)`)
			ittest.Consume(t, e.Kafka, len(tt.want), "sk.public.a")
			// The last insert is in: nothing else comes after it.
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
			evs := ittest.Consume(t, e.Kafka, -1, "sk.public.a")
			var got []string
			for _, ev := range evs {
				if ev.Tombstone {
					got = append(got, "-")
				} else {
					got = append(got, ev.Op)
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("records %v, want %v", got, tt.want)
			}
		})
	}
}

// TestTransactionMetadataInAvro: with Avro, BEGIN and END are registered
// under <prefix>.transaction-key/-value with Debezium's
// TransactionMetadataKey/Value schemas (SchemaFactory.java:200-219) and
// decode to the same fields; the change's transaction block is the
// event.block record.
func TestTransactionMetadataInAvro(t *testing.T) {
	e := ittest.NewEnv(t)
	reg := srtest.New(t)
	e.Exec(`CREATE TABLE a (pk serial PRIMARY KEY, aa int)`)
	cfg := ittest.AvroConfig(e, reg, "tav", "public.a")
	cfg.Format.ProvideTransactionMetadata = true
	cfg.Snapshot.Mode = config.SnapshotNever
	r := ittest.StartStreaming(t, cfg)
	e.Exec(`INSERT INTO a (aa) VALUES (1)`)
	recs := ittest.ReadAvro(t, reg, e.Kafka, 2, "tav.transaction")
	changes := ittest.ReadAvro(t, reg, e.Kafka, 1, "tav.public.a")
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	begin, end := recs[0], recs[1]
	if begin.Value["status"] != "BEGIN" || begin.Value["event_count"] != nil || begin.Key["id"] != begin.Value["id"] {
		t.Errorf("BEGIN key %v value %v", begin.Key, begin.Value)
	}
	if end.Value["status"] != "END" || end.Value["event_count"] != int64(1) || end.Key["id"] != end.Value["id"] {
		t.Errorf("END key %v value %v", end.Key, end.Value)
	}
	tx, _ := changes[0].Value["transaction"].(map[string]any)
	if tx == nil || tx["total_order"] != int64(1) || tx["data_collection_order"] != int64(1) {
		t.Errorf("change transaction block %v", changes[0].Value["transaction"])
	}
	for _, subject := range []string{"tav.transaction-key", "tav.transaction-value"} {
		if len(reg.Versions(subject)) != 1 {
			t.Errorf("subject %s: %d versions, want 1", subject, len(reg.Versions(subject)))
		}
	}
	text, _ := reg.SchemaByID(end.ValueID)
	if !strings.Contains(text, `"name":"TransactionMetadataValue","namespace":"io.debezium.connector.common"`) {
		t.Errorf("value schema: %s", text)
	}
}
