package records

import (
	"fmt"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// TestDeleteUnderDefaultIdentityNeverNullsARequiredField: a delete under
// REPLICA IDENTITY DEFAULT brings only the key's old values. Debezium
// fills the other columns of "before": null when optional, and for a NOT
// NULL column its converter's fallback (JdbcValueConverters.convertValue,
// debezium-connector-common/src/main/java/io/debezium/jdbc/JdbcValueConverters.java:1414-1421,
// v3.6.1.Final; the fallbacks at :1013 and :1040 (0), :1209 (""), :1348
// (false), :1159 (BigDecimal.ZERO), :575/:602 (epoch day 0, epoch µs 0),
// :358 (1970-01-01T00:00:00Z), :1284 (empty bytes), and
// PostgresValueConverter.java:682 (an empty list)). Before, the Avro table
// parked on "NULL in a column the catalog says is NOT NULL", and JSON with
// schemas wrote a null a Connect sink refuses (checked by decode).
func TestDeleteUnderDefaultIdentityNeverNullsARequiredField(t *testing.T) {
	for _, format := range []string{"json", "json with schemas", "avro"} {
		t.Run(format, func(t *testing.T) {
			e := ittest.NewEnv(t)
			e.Exec(`CREATE TABLE public.d (id int PRIMARY KEY, i int NOT NULL, b bigint NOT NULL, s text NOT NULL, f boolean NOT NULL,
				n numeric(10,2) NOT NULL, dt date NOT NULL, ts timestamp NOT NULL, tz timestamptz NOT NULL, by bytea NOT NULL,
				arr int[] NOT NULL, opt text)`)
			e.Exec(`INSERT INTO d VALUES (1, 7, 8, 'x', true, 1.5, '2024-01-02', '2024-01-02 03:04:05', '2024-01-02 03:04:05+00', '\x01', '{1,2}', 'o')`)
			cfg := e.Config("abs", "public.d")
			cfg.Format.DecimalHandlingMode = "string"
			var reg *srtest.Registry
			switch format {
			case "json with schemas":
				cfg.Format.JSONSchemas = true
			case "avro":
				reg = srtest.New(t)
				cfg = ittest.AvroConfig(e, reg, "abs", "public.d")
				cfg.Format.DecimalHandlingMode = "string"
			}
			r := ittest.Start(t, cfg)
			e.Exec(`DELETE FROM d WHERE id = 1`)
			var before map[string]any
			if reg != nil {
				recs := ittest.ReadAvro(t, reg, e.Kafka, 3, "abs.public.d") // read, delete, tombstone
				before, _ = recs[1].Value["before"].(map[string]any)
			} else {
				evs := ittest.Consume(t, e.Kafka, 3, "abs.public.d")
				if evs[1].Op != "d" {
					t.Fatalf("record 1 is %q, want the delete", evs[1].Op)
				}
				before = evs[1].Before
			}
			for name, ph := range r.P.TablePhases() {
				if ph.Phase != "ready" && ph.Phase != "catchup" {
					t.Fatalf("table %s is %s: %s", name, ph.Phase, ph.LastError)
				}
			}
			want := map[string]any{"id": 1, "i": 0, "b": 0, "s": "", "f": false, "n": "0", "dt": 0, "ts": 0,
				"tz": "1970-01-01T00:00:00Z", "arr": "[]", "opt": nil}
			for col, w := range want {
				got := before[col]
				if col == "arr" {
					got = fmt.Sprint(got)
					w = "[]"
				}
				if fmt.Sprint(got) != fmt.Sprint(w) && !(w == nil && got == nil) {
					t.Errorf("before.%s = %#v, want %v", col, before[col], w)
				}
			}
			if by := before["by"]; by == nil || fmt.Sprint(by) != "" && fmt.Sprint(by) != "[]" {
				t.Errorf("before.by = %#v, want empty bytes", by)
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
			_ = connector.ExitOK
		})
	}
}
