package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
)

// writeConnectOffsets writes records to a Kafka Connect offsets topic of
// three partitions, keyed as Connect keys a source partition (the default
// partitioner hashes the key, as Connect's KafkaOffsetBackingStore does).
func writeConnectOffsets(t *testing.T, addr, topic string, kvs ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, topic); err != nil &&
		!strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS") {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(kvs); i += 2 {
		r := &kgo.Record{Topic: topic, Key: []byte(kvs[i])}
		if kvs[i+1] != "" {
			r.Value = []byte(kvs[i+1])
		}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTakeoverFromDebeziumWithoutASnapshot: a first start with
// migrate_from.debezium continues a stopped Debezium connector on its slot
// and publication from its stored offset (PostgresOffsetContext.java:74-104:
// lsn, lsn_proc, lsn_commit, txId, messageType; key
// ["<name>",{"server":"<topic.prefix>"}], PostgresPartition.java:21,31-33),
// copies nothing, repeats nothing Debezium sent (here it stopped after the
// second of a transaction's three inserts: WalPositionLocator.java:80-102
// resumes at the event after it) and loses nothing written after the
// switch. The slot is behind the offset, as Debezium leaves it.
func TestTakeoverFromDebeziumWithoutASnapshot(t *testing.T) {
	for _, mode := range []config.Delivery{config.DeliveryAtLeastOnce, config.DeliveryExactlyOnce} {
		t.Run(string(mode), func(t *testing.T) {
			e := ittest.NewPrivateEnv(t) // both modes make the slot debezium
			e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, v text)`)
			e.Exec(`CREATE PUBLICATION dbz_publication FOR TABLE orders`)
			e.Exec(`SELECT pg_create_logical_replication_slot('debezium', 'pgoutput')`)
			e.Exec(`INSERT INTO orders VALUES (1, 'a'), (2, 'a')`)           // sent whole by Debezium
			e.Exec(`INSERT INTO orders VALUES (3, 'b'), (4, 'b'), (5, 'b')`) // sent up to id 4
			var commits, inserts []uint64
			for _, m := range e.PeekSlot("debezium", "dbz_publication") {
				switch m.Kind {
				case 'C':
					commits = append(commits, m.LSN)
				case 'I':
					inserts = append(inserts, m.LSN)
				}
			}
			if len(commits) != 2 || len(inserts) != 5 {
				t.Fatalf("slot holds commits %v, inserts %v", commits, inserts)
			}
			key := `["dbz-orders",{"server":"tk"}]`
			writeConnectOffsets(t, e.Kafka, "connect-offsets",
				key, `{"lsn":1,"lsn_commit":1,"txId":1}`, // superseded
				`["other",{"server":"tk"}]`, `{"lsn":99999999999,"lsn_commit":99999999999}`,
				key, fmt.Sprintf(`{"transaction_id":null,"lsn_proc":%d,"messageType":"INSERT","lsn_commit":%d,"lsn":%d,"txId":751,"ts_usec":1764806400000000}`,
					inserts[3], commits[0], inserts[3]))
			e.Exec(`INSERT INTO orders VALUES (6, 'c')`) // after the switch, before mooncdc

			cfg := e.Config("tk", "public.orders")
			cfg.Postgres.Slot, cfg.Postgres.Publication = "debezium", "dbz_publication"
			cfg.MigrateFrom.Debezium = config.DebeziumMigration{OffsetsTopic: "connect-offsets", ConnectorName: "dbz-orders"}
			cfg.Kafka.Delivery = mode
			r := ittest.Start(t, cfg)
			e.Exec(`INSERT INTO orders VALUES (7, 'd')`)
			want := []float64{5, 6, 7}
			check := func(evs []ittest.Event) {
				t.Helper()
				if len(evs) != len(want) {
					t.Fatalf("%d records, want %d: %+v", len(evs), len(want), evs)
				}
				for i, ev := range evs {
					if ev.Op != "c" || ev.After["id"] != want[i] {
						t.Errorf("record %d: %s of id %v, want a create of %v (nothing copied, nothing Debezium sent repeated)", i, ev.Op, ev.After["id"], want[i])
					}
				}
			}
			check(ittest.Consume(t, e.Kafka, 3, "tk.public.orders"))
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}

			// The next start resumes from mooncdc's own offsets.
			r = ittest.Start(t, cfg)
			e.Exec(`INSERT INTO orders VALUES (8, 'e')`)
			want = append(want, 8)
			check(ittest.Consume(t, e.Kafka, 4, "tk.public.orders"))
			time.Sleep(time.Second)
			check(ittest.Consume(t, e.Kafka, -1, "tk.public.orders"))
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestTakeoverFromDebeziumRefusesUnsafeStates: every state in which a
// takeover would lose or invent changes is an unsafe resume (exit 3) that
// names the cause and the fix, and writes nothing.
func TestTakeoverFromDebeziumRefusesUnsafeStates(t *testing.T) {
	e := ittest.NewPrivateEnv(t) // it counts every slot of the server
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY)`)
	e.Exec(`CREATE PUBLICATION dbz_publication FOR TABLE orders`)
	e.Exec(`SELECT pg_create_logical_replication_slot('behind', 'pgoutput')`)
	before := e.LSN(`pg_current_wal_lsn()`)
	e.Exec(`INSERT INTO orders VALUES (1)`)
	e.Exec(`SELECT pg_create_logical_replication_slot('ahead', 'pgoutput')`)
	offset := fmt.Sprintf(`{"lsn":%d,"lsn_commit":%d,"txId":1,"messageType":"COMMIT"}`, before, before)
	writeConnectOffsets(t, e.Kafka, "connect-offsets",
		`["dbz",{"server":"u1"}]`, offset,
		`["dbz",{"server":"u2"}]`, offset,
		`["dbz",{"server":"u3"}]`, offset,
		`["snap",{"server":"u4"}]`, fmt.Sprintf(`{"lsn":%d,"txId":1,"snapshot":"INITIAL","last_snapshot_record":false}`, before),
		`["gone",{"server":"u5"}]`, offset, `["gone",{"server":"u5"}]`, "")
	for _, tc := range []struct {
		name, connector, slot, pub, want string
	}{
		{"u1", "dbz", "ahead", "dbz_publication", "ahead of Debezium's stored offset"},
		{"u2", "dbz", "nosuch", "dbz_publication", `replication slot "nosuch" is missing`},
		{"u3", "dbz", "behind", "nosuch_pub", `publication "nosuch_pub" does not exist`},
		{"u4", "snap", "behind", "dbz_publication", "stopped during its snapshot"},
		{"u5", "gone", "behind", "dbz_publication", `holds no offset of connector "gone" for server "u5"`},
		{"u6", "never", "behind", "dbz_publication", `holds no offset of connector "never"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := e.Config(tc.name, "public.orders")
			cfg.Postgres.Slot, cfg.Postgres.Publication = tc.slot, tc.pub
			cfg.MigrateFrom.Debezium = config.DebeziumMigration{OffsetsTopic: "connect-offsets", ConnectorName: tc.connector}
			err := ittest.RunToEnd(t, cfg)
			var ue *connector.UnsafeResumeError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "migrate_from") {
				t.Fatalf("got %v, want an unsafe resume saying %q", err, tc.want)
			}
		})
	}
	if n := e.Count(`SELECT count(*) FROM pg_replication_slots`); n != 2 {
		t.Errorf("%d slots, want the 2 the test made (a refused takeover creates none)", n)
	}
	if n := e.Count(`SELECT count(*) FROM pg_publication`); n != 1 {
		t.Errorf("%d publications, want 1", n)
	}
}
