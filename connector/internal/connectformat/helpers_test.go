package connectformat

import (
	"bytes"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// Schemas as Connect's SchemaBuilder presets build them.
var (
	sInt16    = &schema.Schema{Type: schema.TypeInt16}
	sInt32    = &schema.Schema{Type: schema.TypeInt32}
	sInt64    = &schema.Schema{Type: schema.TypeInt64}
	sOptInt64 = &schema.Schema{Type: schema.TypeInt64, Optional: true}
	sFloat32  = &schema.Schema{Type: schema.TypeFloat32}
	sFloat64  = &schema.Schema{Type: schema.TypeFloat64}
	sBool     = &schema.Schema{Type: schema.TypeBoolean}
	sString   = &schema.Schema{Type: schema.TypeString}
	sOptStr   = &schema.Schema{Type: schema.TypeString, Optional: true}
	sBytes    = &schema.Schema{Type: schema.TypeBytes}

	sTimestamp = &schema.Schema{Type: schema.TypeInt64, Name: transform.TimestampName, Version: 1}
	sDate      = &schema.Schema{Type: schema.TypeInt32, Name: transform.DateName, Version: 1}
	sTime      = &schema.Schema{Type: schema.TypeInt32, Name: transform.TimeName, Version: 1}
)

// decimalSchema is Debezium's precise decimal: Connect's Decimal with its
// scale and connect.decimal.precision parameters.
func decimalSchema(scale, prec string) *schema.Schema {
	return &schema.Schema{Type: schema.TypeBytes, Name: transform.DecimalName, Version: 1,
		Params: []schema.Param{{Key: "scale", Value: scale}, {Key: "connect.decimal.precision", Value: prec}}}
}

func structOf(name string, kv ...any) *schema.Schema {
	s := &schema.Schema{Type: schema.TypeStruct, Name: name}
	for i := 0; i+1 < len(kv); i += 2 {
		s.Fields = append(s.Fields, schema.Field{Name: kv[i].(string), Schema: kv[i+1].(*schema.Schema)})
	}
	return s
}

func opt(s *schema.Schema) *schema.Schema {
	c := *s
	c.Optional = true
	return &c
}

func newStruct(t testing.TB, s *schema.Schema, kv ...any) *transform.Struct {
	t.Helper()
	st := transform.NewStruct(s)
	for i := 0; i+1 < len(kv); i += 2 {
		if err := st.Put(kv[i].(string), kv[i+1]); err != nil {
			t.Fatalf("put %v: %v", kv[i], err)
		}
	}
	return st
}

// The Debezium Postgres envelope of a table public.customers on a server
// named dbserver1, as Debezium 3.6.1 builds it: the Value struct
// (before/after), io.debezium.connector.postgresql.Source
// (SchemaFactory.java:151-163 and PostgresSourceInfoStructMaker.java:22-31
// at v3.6.1.Final; mooncdc's copy is schema/connect.go's sourceSchema),
// op, ts_ms (and ts_us, ts_ns), and the transaction block
// (event.block, TransactionStructMaker).
var (
	pgSnapshot = &schema.Schema{Type: schema.TypeString, Optional: true, Name: "io.debezium.data.Enum", Version: 1,
		Params:  []schema.Param{{Key: "allowed", Value: "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"}},
		Default: []byte(`"false"`), HasDefault: true}
	pgSource = structOf("io.debezium.connector.postgresql.Source",
		"version", sString, "connector", sString, "name", sString, "ts_ms", sInt64,
		"snapshot", pgSnapshot, "db", sString, "sequence", sOptStr, "ts_us", sOptInt64,
		"ts_ns", sOptInt64, "schema", sString, "table", sString, "txId", sOptInt64,
		"lsn", sOptInt64, "xmin", sOptInt64, "origin", sOptStr, "origin_lsn", sOptInt64)
	pgBlock = opt(structOf("event.block", "id", sString, "total_order", sInt64, "data_collection_order", sInt64))
	pgRow   = structOf("dbserver1.public.customers.Value",
		"id", sInt32, "name", sOptStr, "balance", opt(decimalSchema("2", "10")),
		"born", opt(sDate), "seen", opt(sTimestamp))
	pgKey      = structOf("dbserver1.public.customers.Key", "id", sInt32)
	pgEnvelope = structOf("dbserver1.public.customers.Envelope",
		"before", opt(pgRow), "after", opt(pgRow), "source", pgSource, "transaction", pgBlock,
		"op", sString, "ts_ms", sOptInt64, "ts_us", sOptInt64, "ts_ns", sOptInt64)
)

// pgChange returns an update of customer 1001 (balance 12.34 → 56.78).
func pgChange(t testing.TB) *transform.Struct {
	before := newStruct(t, pgRow, "id", int32(1001), "name", "Sally",
		"balance", transform.Decimal{Unscaled: big.NewInt(1234), Scale: 2},
		"born", time.Date(1990, 5, 17, 0, 0, 0, 0, time.UTC))
	after := newStruct(t, pgRow, "id", int32(1001), "name", "Sally",
		"balance", transform.Decimal{Unscaled: big.NewInt(5678), Scale: 2},
		"born", time.Date(1990, 5, 17, 0, 0, 0, 0, time.UTC),
		"seen", time.UnixMilli(1700000000123).UTC())
	source := newStruct(t, pgSource, "version", "3.6.1.Final", "connector", "postgresql", "name", "dbserver1",
		"ts_ms", int64(1559033904863), "snapshot", "false", "db", "postgres",
		"sequence", `["24023119","24023128"]`, "ts_us", int64(1559033904863123), "ts_ns", int64(1559033904863123000),
		"schema", "public", "table", "customers", "txId", int64(555), "lsn", int64(24023128), "xmin", nil)
	block := newStruct(t, pgBlock, "id", "555:24023128", "total_order", int64(1), "data_collection_order", int64(1))
	return newStruct(t, pgEnvelope, "before", before, "after", after, "source", source, "transaction", block,
		"op", "u", "ts_ms", int64(1559033904961), "ts_us", int64(1559033904961123), "ts_ns", int64(1559033904961123000))
}

func jsonCompact(dst *bytes.Buffer, b []byte) error { return json.Compact(dst, b) }
