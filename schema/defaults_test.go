package schema

import (
	"bytes"
	"testing"
)

// Debezium's expectations, v3.6.1.Final, in debezium-connector-postgres/src/:
// C = test/java/io/debezium/connector/postgresql/connection/PostgresDefaultValueConverterIT.java,
// DV = test/java/io/debezium/connector/postgresql/PostgresDefaultValueConverterIT.java,
// P = main/java/io/debezium/connector/postgresql/connection/PostgresDefaultValueConverter.java.
// The expressions are as pg_get_expr prints the tests' DEFAULT clauses.
func TestDefaultTextReadsTheExpressionAsDebeziumDoes(t *testing.T) {
	numeric194 := int32((19<<16 | 4) + 4)
	numeric120 := int32(12<<16 + 4) // scale 0
	status := &TypeInfo{Name: "Status", Kind: 'e', Mod: -1}
	cases := []struct {
		name string
		col  Column
		want string // "-" for no default
	}{
		{"NULL::numeric", Column{TypeOID: oidNumeric, TypeMod: numeric194, Default: "NULL::numeric"}, "-"}, // C:59-69
		{"int8 trimmed", Column{TypeOID: oidInt8, Default: " 1 "}, "1"},                                    // C:100-106
		{"text not trimmed", Column{TypeOID: oidText, Default: " 1 "}, " 1 "},                              // C:108-113
		{"serial", Column{TypeOID: oidInt4, Default: "nextval('a_pk_seq'::regclass)"}, "0"},                // P:181, :224-229
		{"int DEFAULT NULL::integer", Column{TypeOID: oidInt4, Default: "NULL::integer"}, "-"},             // DV:310, :339
		{"varchar NULL::character varying", Column{TypeOID: oidVarchar, Default: "NULL::character varying"}, "-"},
		{"varchar 'NULL'", Column{TypeOID: oidVarchar, Default: "'NULL'::character varying"}, "NULL"},                                                          // DV:312, :341
		{"varchar 'MYVALUE'", Column{TypeOID: oidVarchar, Default: "'MYVALUE'::character varying"}, "MYVALUE"},                                                 // DV:313, :342
		{"varchar 'NULL::character varying'", Column{TypeOID: oidVarchar, Default: "'NULL::character varying'::character varying"}, "NULL::character varying"}, // DV:315, :344
		{"timestamp CURRENT_TIMESTAMP", Column{TypeOID: oidTimestamp, Default: "CURRENT_TIMESTAMP"}, "1970-01-01 00:00:00"},                                    // DV:317, :346
		{"date CURRENT_DATE", Column{TypeOID: oidDate, Default: "CURRENT_DATE"}, "1970-01-01"},                                                                 // DV:318, :347
		{"time CURRENT_TIME", Column{TypeOID: oidTime, Default: "CURRENT_TIME"}, "00:00:00"},                                                                   // DV:319, :348
		{"timestamptz now()", Column{TypeOID: oidTimestamptz, Default: "now()"}, "1970-01-01 00:00:00+00"},                                                     // P:195
		{"uuid from a schema-qualified function", Column{TypeOID: oidUUID, Default: "s2.tst_generate_random_uuid()"}, "00000000-0000-0000-0000-000000000000"},  // DV:100, :127
		{"numeric(12,0) default 0.0", Column{TypeOID: oidNumeric, TypeMod: numeric120, Default: "0.0"}, "0"},                                                   // DV:135, :167
		{"numeric(12,0) default 2.25 cannot be scaled", Column{TypeOID: oidNumeric, TypeMod: numeric120, Default: "2.25"}, "-"},                                // P:648-658 setScale without rounding
		{"numeric(19,4) default 1.5", Column{TypeOID: oidNumeric, TypeMod: numeric194, Default: "1.5"}, "1.5000"},
		{"numeric function", Column{TypeOID: oidNumeric, Default: "random()"}, "0.0"},                                                          // P:176
		{"enum", Column{TypeOID: 99999, Type: status, Default: `'DRAFT'::s1."Status"`}, "DRAFT"},                                               // DV:262, :285
		{"enum, unqualified cast", Column{TypeOID: 99999, Type: status, Default: `'DRAFT'::"Status"`}, "DRAFT"},                                // P:257-263
		{"enum cast to another type", Column{TypeOID: 99999, Type: status, Default: `'DRAFT'::s1.other`}, "-"},                                 // P:265-267
		{"domain", Column{TypeOID: 99999, Type: &TypeInfo{OID: oidInt4, Name: "posint", Kind: 'b', Mod: -1, Domain: true}, Default: "1"}, "-"}, // a domain's name has no parser
		{"bool", Column{TypeOID: oidBool, Default: "true"}, "t"},                                                                               // P:170
		{"bool NULL", Column{TypeOID: oidBool, Default: "NULL::boolean"}, "-"},                                                                 // P:146-155
		{"bit(1)", Column{TypeOID: oidBit, TypeMod: 1, Default: `B'1'::"bit"`}, "1"},                                                           // P:160-167
		{"bit(3)", Column{TypeOID: oidBit, TypeMod: 3, Default: `B'101'::"bit"`}, "101"},                                                       // P:160-167
		{"int out of range", Column{TypeOID: oidInt2, Default: "'70000'::integer"}, "-"},                                                       // Short.parseShort throws
		{"negative int", Column{TypeOID: oidInt4, Default: "'-5'::integer"}, "-5"},
		{"float", Column{TypeOID: oidFloat8, Default: "1.234"}, "1.234"},                             // P:178
		{"interval function", Column{TypeOID: oidInterval, Default: "make_interval(0)"}, "00:00:00"}, // P:196: new PGInterval("epoch") is zero
		{"interval literal", Column{TypeOID: oidInterval, Default: "'1 day'::interval"}, "1 day"},
		{"json", Column{TypeOID: oidJSONB, Default: `'{"a": 1}'::jsonb`}, `{"a": 1}`},     // P:187
		{"non-greedy literal", Column{TypeOID: oidText, Default: "'It''s'::text"}, "It"},  // P:47: '(.*?)'
		{"bytea has no parser", Column{TypeOID: oidBytea, Default: `'\x01'::bytea`}, "-"}, // P:207
		{"lone quote", Column{TypeOID: oidText, Default: "a'b"}, "-"},                     // Matcher.group throws
		{"no default", Column{TypeOID: oidText}, "-"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.col.Default != "" {
				c.col.HasDefault = true
			}
			got, ok := defaultText(c.col)
			if !ok {
				got = "-"
			}
			if got != c.want {
				t.Errorf("defaultText(%q) = %q, want %q", c.col.Default, got, c.want)
			}
		})
	}
}

// TestDefaultsReachBothSchemaRenderings: a column's default is in its
// JsonConverter schema and its Avro schema (with the union turned around,
// AvroData.maybeMakeOptional), and a NULL is written as it unless
// KeepNulls.
func TestDefaultsReachBothSchemaRenderings(t *testing.T) {
	rel := &Relation{OID: 1, Schema: "public", Table: "t", ReplicaIdentity: 'd', KeyIndexes: []int{0}, Columns: []Column{
		{Name: "id", TypeOID: oidInt4, Key: true, NotNull: true, Default: "nextval('t_id_seq'::regclass)", HasDefault: true},
		{Name: "v", TypeOID: oidVarchar, Default: "'MYVALUE'::character varying", HasDefault: true},
	}}
	cfg := Config{Name: "p", Database: "db", Version: "v"}
	e := NewJSONSchemaEncoder(cfg)
	ch := &Change{Op: OpCreate, Relation: rel, After: Tuple{{Kind: ValueText, Data: []byte("1")}, {Kind: ValueNull}}}
	out, err := e.AppendValue(nil, e.Plan(ch.Relation), ch, testNow)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"type":"int32","optional":false,"default":0,"field":"id"}`,
		`{"type":"string","optional":true,"default":"MYVALUE","field":"v"}`,
		`"after":{"id":1,"v":"MYVALUE"}`,
	} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("value lacks %s:\n%s", want, out)
		}
	}
	cfg.KeepNulls = true
	out, err = NewJSONEncoder(cfg).AppendValue(nil, NewPlan(cfg, ch.Relation), ch, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"after":{"id":1,"v":null}`)) {
		t.Errorf("KeepNulls: %s", out)
	}
	_, value, err := NewAvroEncoder(cfg).Schemas(NewPlan(cfg, rel))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"name":"id","type":{"type":"int","connect.default":0},"default":0}`,
		`{"name":"v","type":[{"type":"string","connect.default":"MYVALUE"},"null"],"default":"MYVALUE"}`,
	} {
		if !bytes.Contains([]byte(value), []byte(want)) {
			t.Errorf("Avro schema lacks %s:\n%s", want, value)
		}
	}
}

// FuzzDefaultText: any default expression, of any column type, gives a
// default or none without panicking, and a default that withDefault
// accepts renders as JSON in the schema.
func FuzzDefaultText(f *testing.F) {
	for _, s := range []string{"nextval('a_pk_seq'::regclass)", "'MYVALUE'::character varying", "NULL::integer",
		`'DRAFT'::s1."Status"`, `'x'::"a""b"`, "0.0", "CURRENT_TIME", "a'b", "'", `"`, "::"} {
		f.Add(s, uint32(oidVarchar), int32(-1), false)
		f.Add(s, uint32(oidNumeric), int32(12<<16+6), false)
		f.Add(s, uint32(99999), int32(-1), true)
	}
	f.Fuzz(func(t *testing.T, expr string, oid uint32, mod int32, enum bool) {
		c := Column{Name: "c", TypeOID: oid, TypeMod: mod, Default: expr, HasDefault: true}
		if enum {
			c.Type = &TypeInfo{Name: "Status", Kind: 'e', Mod: -1}
		}
		defaultText(c)
		ct, _, ok := withDefault(mapColumn(&Config{}, c), c)
		if ok && (!ct.schema.HasDefault || len(ct.schema.Default) == 0) {
			t.Fatalf("%q: a default without its JSON", expr)
		}
	})
}
