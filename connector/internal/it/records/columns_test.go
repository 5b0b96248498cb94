package records

import (
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// Debezium's column tests, debezium-connector-postgres/src/test/java/io/debezium/connector/postgresql/PostgresConnectorIT.java
// (PC) at v3.6.1.Final: their tables (SETUP_TABLES_STMT, PC:122-130), their
// statements and their expected values.
const debeziumSetupTables = `CREATE SCHEMA s1; CREATE SCHEMA s2;
	CREATE TABLE s1.a (pk SERIAL, aa integer, PRIMARY KEY(pk));
	CREATE TABLE s2.a (pk SERIAL, aa integer, bb varchar(20), PRIMARY KEY(pk));
	INSERT INTO s1.a (aa) VALUES (1); INSERT INTO s2.a (aa) VALUES (1);`

// TestColumnMappersAsDebezium: column_mask, column_hash and
// column_truncate give Debezium's values in the snapshot and the stream,
// leave the key clear, and add Debezium's schema parameters.
func TestColumnMappersAsDebezium(t *testing.T) {
	cases := []struct {
		name  string
		setup string
		avro  bool
		set   func(*config.Config)
		// want are s2.a's bb values: the snapshot row (aa=1, bb NULL),
		// INSERT (1, 'test'), UPDATE to 'hello'.
		want  [3]any
		param string
	}{
		{
			name: "mask (PC:2527-2570)",
			set: func(c *config.Config) {
				c.Format.ColumnMask = []config.ColumnMaskRule{{Columns: []string{"s2.a.bb"}, Chars: 5}} // column.mask.with.5.chars
			},
			want: [3]any{"*****", "*****", "*****"}, param: `"masked":"true"`,
		},
		{
			name:  "hash (PC:2587-2662)",
			setup: `CREATE TABLE s2.b (pk SERIAL, bb varchar(255), PRIMARY KEY(pk))`,
			set: func(c *config.Config) {
				c.Format.ColumnHash = []config.ColumnHashRule{{Columns: []string{"s2.a.bb", "s2.b.bb"}, Algorithm: "SHA-256", Salt: "CzQMA0cB5K"}}
			},
			want: [3]any{nil, "8e68c68edbbac316dfe2", "b4d39ab0d198fb4cac8b"}, param: `"masked":"true"`,
		},
		{
			name:  "hash, Avro",
			avro:  true,
			setup: `CREATE TABLE s2.b (pk SERIAL, bb varchar(255), PRIMARY KEY(pk))`,
			set: func(c *config.Config) {
				c.Format.ColumnHash = []config.ColumnHashRule{{Columns: []string{"s2.a.bb", "s2.b.bb"}, Algorithm: "SHA-256", Salt: "CzQMA0cB5K"}}
			},
			want: [3]any{nil, "8e68c68edbbac316dfe2", "b4d39ab0d198fb4cac8b"}, param: `"masked":"true"`,
		},
		{
			name: "truncate (PC:2669-2715)",
			set: func(c *config.Config) {
				c.Format.ColumnTruncate = []config.ColumnTruncateRule{{Columns: []string{"s2.a.bb"}, Length: 3}} // column.truncate.to.3.chars
			},
			want: [3]any{nil, "tes", "hel"}, param: `"truncateLength":"3"`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := ittest.NewEnv(t)
			e.Exec(debeziumSetupTables)
			if c.setup != "" {
				e.Exec(c.setup)
			}
			cfg := e.Config("test_server", "s1.*", "s2.*")
			var reg *srtest.Registry
			if c.avro {
				reg = srtest.New(t)
				cfg = ittest.AvroConfig(e, reg, "test_server", "s1.*", "s2.*")
			} else {
				cfg.Format.JSONSchemas = true
			}
			c.set(&cfg)
			r := ittest.Start(t, cfg)
			e.Exec(`INSERT INTO s2.a (aa,bb) VALUES (1, 'test')`)
			e.Exec(`UPDATE s2.a SET aa=2, bb='hello' WHERE pk=2`)
			var got [3]any
			if reg != nil {
				recs := ittest.ReadAvro(t, reg, e.Kafka, 3, "test_server.s2.a")
				for i, rec := range recs {
					got[i] = ittest.After(t, rec)["bb"]
					if rec.Key["pk"] == nil {
						t.Errorf("record %d: key %v lacks pk", i, rec.Key)
					}
				}
				text, _ := reg.SchemaByID(recs[0].ValueID)
				if !strings.Contains(text, `"connect.parameters":{"masked":"true"}`) {
					t.Errorf("the Avro schema lacks bb's masked parameter: %s", text)
				}
			} else {
				recs := ittest.ReadRaw(t, e.Kafka, 3, "test_server.s2.a")
				for i, rec := range recs {
					ev := ittest.Decode(t, []*kgo.Record{rec})[0]
					got[i] = ev.After["bb"]
					if ev.Key["pk"] == nil {
						t.Errorf("record %d: key %v lacks pk", i, ev.Key)
					}
					if !strings.Contains(string(rec.Value), c.param) {
						t.Errorf("record %d: bb's schema lacks %s: %s", i, c.param, rec.Value)
					}
				}
			}
			if got != c.want {
				t.Errorf("bb = %#v, want %#v", got, c.want)
			}
			if c.setup != "" { // PC:2646-2662: varchar(255) keeps the whole digest
				e.Exec(`INSERT INTO s2.b (bb) VALUES ('hello')`)
				var bb any
				if reg != nil {
					bb = ittest.After(t, ittest.ReadAvro(t, reg, e.Kafka, 1, "test_server.s2.b")[0])["bb"]
				} else {
					bb = ittest.Consume(t, e.Kafka, 1, "test_server.s2.b")[0].After["bb"]
				}
				if bb != "b4d39ab0d198fb4cac8b2f023da74f670bcaf192dcc79b5d6361b7ae6b2fafdf" {
					t.Errorf("s2.b bb = %v, want the whole digest", bb)
				}
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestColumnsIncludeAndExcludeAsDebezium: PC:1318-1345 (column.exclude.list
// ".+bb": bb absent from snapshot rows and changes) and PC:1393-1415
// (column.include.list ".+aa,.+cc" with column.mask.with.5.chars ".+cc":
// bb absent, cc masked). Keys keep pk either way.
func TestColumnsIncludeAndExcludeAsDebezium(t *testing.T) {
	t.Run("exclude", func(t *testing.T) {
		e := ittest.NewEnv(t)
		e.Exec(debeziumSetupTables)
		cfg := e.Config("test_server", "s2.*")
		cfg.Postgres.ColumnsExclude = []string{"*.*.bb"}
		r := ittest.Start(t, cfg)
		e.Exec(`INSERT INTO s2.a (aa,bb) VALUES (6, 'x')`)
		for _, ev := range ittest.Consume(t, e.Kafka, 2, "test_server.s2.a") {
			if _, ok := ev.After["bb"]; ok || ev.After["aa"] == nil || ev.Key["pk"] == nil {
				t.Errorf("after %v key %v: want aa without bb, keyed by pk", ev.After, ev.Key)
			}
		}
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("include with a mask", func(t *testing.T) {
		e := ittest.NewEnv(t)
		e.Exec(debeziumSetupTables + `ALTER TABLE s2.a ADD COLUMN cc char(12); INSERT INTO s2.a (aa, bb) VALUES (2, 2);`)
		cfg := e.Config("test_server", "s2.*")
		cfg.Format.JSONSchemas = true
		cfg.Postgres.ColumnsInclude = []string{"*.*.aa", "*.*.cc"}
		cfg.Format.ColumnMask = []config.ColumnMaskRule{{Columns: []string{"*.*.cc"}, Chars: 5}}
		r := ittest.Start(t, cfg)
		for _, ev := range ittest.Consume(t, e.Kafka, 2, "test_server.s2.a") {
			if _, ok := ev.After["bb"]; ok {
				t.Errorf("bb is in %v", ev.After)
			}
			if _, ok := ev.After["pk"]; ok {
				t.Errorf("pk is in the value %v, which columns_include leaves out", ev.After)
			}
			if ev.After["cc"] != "*****" || ev.Key["pk"] == nil {
				t.Errorf("after %v key %v: want cc masked, keyed by pk", ev.After, ev.Key)
			}
		}
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	})
}
