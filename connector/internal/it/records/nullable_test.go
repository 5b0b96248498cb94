package records

import (
	"fmt"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// TestNullWrittenBeforeSetNotNullIsDelivered: a row written with NULL
// before ALTER COLUMN … SET NOT NULL and decoded after it (mooncdc was
// stopped meanwhile, so its catalog lookup already sees NOT NULL) is
// delivered with a schema that admits the NULL: in Avro (each record
// decodes with the schema id it carries; the registry's BACKWARD check
// accepts every version) and in JSON with schemas (every record passes
// JsonConverter's rules, checked by decode). Before, the Avro table parked
// until a resnapshot and the JSON record broke its own schema. With
// registered: false the subject has no version before the NULL row.
func TestNullWrittenBeforeSetNotNullIsDelivered(t *testing.T) {
	for _, tc := range []struct {
		name       string
		avro       bool
		registered bool // a version with c optional exists before the migration
	}{
		{"avro", true, true},
		{"avro, first version after the migration", true, false},
		{"json with schemas", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ittest.NewEnv(t)
			e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY, c text)`)
			name := "nn"
			cfg := e.Config(name, "public.t")
			var reg *srtest.Registry
			if tc.avro {
				reg = srtest.New(t)
				cfg = ittest.AvroConfig(e, reg, name, "public.t")
			} else {
				cfg.Format.JSONSchemas = true
			}
			cfg.Heartbeat.Interval = 0
			if !tc.registered {
				cfg.Snapshot.Mode = config.SnapshotNever // nothing is registered before the first change
			}
			r := ittest.Start(t, cfg)
			want := 0
			if tc.registered {
				e.Exec(`INSERT INTO t VALUES (1, 'a')`)
				want++
				consumeAny(t, e, reg, want)
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}

			// The migration, while mooncdc is stopped (behind).
			e.Exec(`INSERT INTO t VALUES (2, NULL)`)
			e.Exec(`UPDATE t SET c = 'backfilled' WHERE c IS NULL`)
			e.Exec(`ALTER TABLE t ALTER COLUMN c SET NOT NULL`)
			e.Exec(`INSERT INTO t VALUES (3, 'b')`)
			want += 3

			r = ittest.Start(t, cfg)
			got := consumeAny(t, e, reg, want)
			for name, ph := range r.P.TablePhases() {
				if ph.Phase != "ready" && ph.Phase != "catchup" {
					t.Errorf("table %s is %s: %s", name, ph.Phase, ph.LastError)
				}
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
			wantC := map[string]any{"c 2": nil, "u 2": "backfilled", "c 3": "b"}
			for k, v := range wantC {
				if c, ok := got[k]; !ok || c != v {
					t.Errorf("record %s: c = %v (present %v), want %v; all: %v", k, c, ok, v, got)
				}
			}
			if tc.avro {
				for _, subject := range []string{"nn.public.t-value", "nn.public.t-key"} {
					if len(reg.Versions(subject)) == 0 {
						t.Errorf("subject %s has no version", subject)
					}
				}
			}
		})
	}
}

// consumeAny reads at least n data records of nn.public.t, in Avro when
// reg is set (decoding each with the schema of its id) or JSON (checked
// against JsonConverter's rules by decode), and returns c by "op id".
func consumeAny(t *testing.T, e *ittest.Env, reg *srtest.Registry, n int) map[string]any {
	t.Helper()
	out := map[string]any{}
	if reg != nil {
		for _, r := range ittest.ReadAvro(t, reg, e.Kafka, n, "nn.public.t") {
			if r.Value == nil {
				continue
			}
			a, _ := r.Value["after"].(map[string]any)
			out[fmt.Sprintf("%v %v", r.Value["op"], a["id"])] = a["c"]
		}
		return out
	}
	eventually.Within(30*time.Second, 200*time.Millisecond, func() bool {
		evs := ittest.Consume(t, e.Kafka, -1, "nn.public.t")
		for _, ev := range evs {
			if ev.After != nil {
				out[fmt.Sprintf("%s %v", ev.Op, ev.After["id"])] = ev.After["c"]
			}
		}
		return len(evs) >= n
	})
	return out
}
