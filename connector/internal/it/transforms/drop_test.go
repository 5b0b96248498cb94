package transforms

import (
	"fmt"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

// TestDroppedRecordsStillMoveThePosition: a Filter that drops every
// streamed change of a table still moves the durable position past them,
// in exactly-once mode too (its Kafka transactions commit the offsets
// that cover them): Kafka Connect commits a dropped record's offset
// (WorkerSourceTask.recordDropped, connect/runtime/src/main/java/org/apache/kafka/connect/runtime/WorkerSourceTask.java:126-128
// at apache/kafka 1eb7644349c). The slot's confirmed_flush_lsn passes the
// dropped transactions; the kept rows around them are written.
func TestDroppedRecordsStillMoveThePosition(t *testing.T) {
	for _, delivery := range []config.Delivery{config.DeliveryAtLeastOnce, config.DeliveryExactlyOnce} {
		t.Run(string(delivery), func(t *testing.T) {
			e := ittest.NewEnv(t)
			e.Exec(`CREATE TABLE t (id int PRIMARY KEY, keep boolean)`)
			e.Exec(`INSERT INTO t VALUES (1, true)`)
			cfg := e.Config("td", "public.t")
			cfg.Heartbeat.Records = false
			cfg.Kafka.Delivery = delivery
			cfg.Transforms = map[string]string{
				"transforms":                    "keepOnly",
				"transforms.keepOnly.type":      "io.debezium.transforms.Filter",
				"transforms.keepOnly.language":  "cel",
				"transforms.keepOnly.condition": "value.after.keep == true",
			}
			r := ittest.Start(t, cfg)
			for i := 2; i <= 20; i++ {
				e.Exec(fmt.Sprintf(`INSERT INTO t VALUES (%d, false)`, i))
			}
			end := e.LSN(`pg_current_wal_lsn()`)
			eventually.Succeeds(t, 30*time.Second, 50*time.Millisecond, func() error {
				if c := e.LSN(`SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'mooncdc_td'`); c < end {
					return fmt.Errorf("confirmed_flush_lsn %X, want past the dropped changes' %X", c, end)
				}
				return nil
			})
			e.Exec(`INSERT INTO t VALUES (21, true)`)
			recs := ittest.ReadRaw(t, e.Kafka, 2, "td.public.t")
			for i, want := range []string{"1", "21"} {
				if got := fmt.Sprint(ittest.JSONObject(t, recs[i].Value)["after"].(map[string]any)["id"]); got != want {
					t.Errorf("record %d: id %s, want %s (only the kept rows)", i, got, want)
				}
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}
