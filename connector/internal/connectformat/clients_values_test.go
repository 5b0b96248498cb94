package connectformat

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds the rows and envelopes the outside-client tests
// (clients_test.go) write, and what each client must read back, derived
// from the written Connect values by the converters' rules (not from our
// encoders' output):
//   - Protobuf as protobufjs's toObject gives it with the conventions
//     read.js asks for (64-bit integers and bytes as strings, bytes in
//     base64, defaults included: proto3 has no presence for scalars, so a
//     null optional string reads as "", ProtobufData's default without
//     wrapper.for.nullables, PD:1004-1030); Decimal, Date, TimeOfDay and
//     Timestamp as their messages (PD:246-305); a map as its repeated
//     key/value entries (PD:493-523); field names camel-cased by
//     protobufjs (protobufjsName).
//   - JSON Schema as JsonSchemaData.fromConnectData writes it
//     (json_value.go's citations): 64-bit integers as numbers, bytes and
//     decimals in base64 (decimal.format BASE64), Date as days, Time and
//     Timestamp as milliseconds, a string-keyed map as an object, null
//     optional fields as null.

var (
	sInt8    = &schema.Schema{Type: schema.TypeInt8}
	sOptBool = &schema.Schema{Type: schema.TypeBoolean, Optional: true}
	cAddress = opt(structOf("dbserver1.public.corners.Address", "city", sString, "zip", sOptStr))
	cTags    = &schema.Schema{Type: schema.TypeArray, Optional: true, Items: sString}
	cAttrs   = &schema.Schema{Type: schema.TypeMap, Optional: true, Keys: sString, Values: sInt32}
	cScores  = &schema.Schema{Type: schema.TypeMap, Optional: true, Keys: sInt32, Values: sOptStr}
)

// The column groups of a corners row beyond the plain types: meta, the
// int8 and int16 columns whose Protobuf field carries confluent.field_meta
// (connect.type, PD:1004-1030) and nothing to import; decimal, the
// Decimal column (confluent.type.Decimal, imported, with precision and
// scale in field_meta); wkt, the Date, Time and Timestamp columns
// (google/type/date.proto, google/type/timeofday.proto,
// google/protobuf/timestamp.proto, imported).
const (
	meta = 1 << iota
	decimal
	wkt
	allCorners = meta | decimal | wkt
)

// cornersRow builds a row schema: the plain types (every integer and
// float width Protobuf has without field_meta, boolean, string, bytes,
// an array, a map, a nested struct, optional fields) and the groups.
func cornersRow(name string, groups int) *schema.Schema {
	kv := []any{"id", sInt32, "big", sInt64, "f32", sFloat32, "f64", sFloat64, "flag", sBool,
		"maybe", sOptBool, "name", sOptStr, "raw", opt(sBytes), "tags", cTags, "attrs", cAttrs, "scores", cScores, "address", cAddress}
	if groups&meta != 0 {
		kv = append(kv, "tiny", sInt8, "small", sInt16)
	}
	if groups&decimal != 0 {
		kv = append(kv, "amount", opt(decimalSchema("2", "10")))
	}
	if groups&wkt != 0 {
		kv = append(kv, "day", opt(sDate), "at", opt(sTime), "seen", opt(sTimestamp))
	}
	return structOf(name, kv...)
}

func cornersEnvelope(table string, groups int) *schema.Schema {
	row := opt(cornersRow("dbserver1.public."+table+".Value", groups))
	return structOf("dbserver1.public."+table+".Envelope",
		"before", row, "after", row, "source", pgSource, "transaction", pgBlock,
		"op", sString, "ts_ms", sOptInt64, "ts_us", sOptInt64, "ts_ns", sOptInt64)
}

// cornersRows returns a row full of corners and one of nulls and zeros.
func cornersRows(t testing.TB, s *schema.Schema) (full, sparse *transform.Struct) {
	has := func(name string) bool { return fieldSchema(s, name) != nil }
	kv := []any{"id", int32(1001), "big", int64(-9007199254740993), "f32", float32(1.5), "f64", 3.141592653589793,
		"flag", true, "maybe", false, "name", "Sally \u00e9\u4e16 \"q\"", "raw", []byte{0, 1, 0xfe, 0xff},
		"tags", []any{"a", "", "c"},
		"attrs", &transform.Map{Entries: []transform.MapEntry{{Key: "x", Value: int32(-1)}, {Key: "y", Value: int32(2147483647)}}},
		"scores", &transform.Map{Entries: []transform.MapEntry{{Key: int32(7), Value: "seven"}, {Key: int32(-7), Value: ""}}},
		"address", newStruct(t, fieldSchema(s, "address"), "city", "Z\u00fcrich", "zip", nil)}
	if has("small") {
		kv = append(kv, "tiny", int8(-128), "small", int16(32767))
	}
	if has("amount") {
		kv = append(kv, "amount", transform.Decimal{Unscaled: big.NewInt(-1234567), Scale: 2})
	}
	if has("day") {
		kv = append(kv, "day", time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC),
			"at", time.Date(1970, 1, 1, 23, 59, 59, 999e6, time.UTC),
			"seen", time.UnixMilli(-1).UTC())
	}
	full = newStruct(t, s, kv...)
	kv = []any{"id", int32(1002), "big", int64(0), "f32", float32(0), "f64", 0.0, "flag", false}
	if has("small") {
		kv = append(kv, "tiny", int8(0), "small", int16(-1))
	}
	sparse = newStruct(t, s, kv...)
	return full, sparse
}

// cornersChanges returns an insert (snapshot read in a transaction-less
// block), an update and a delete of the corners table.
func cornersChanges(t testing.TB, env *schema.Schema) []*transform.Struct {
	row := fieldSchema(env, "after")
	full, sparse := cornersRows(t, row)
	source := func(snapshot string, tx, lsn any) *transform.Struct {
		return newStruct(t, pgSource, "version", "3.6.1.Final", "connector", "postgresql", "name", "dbserver1",
			"ts_ms", int64(1559033904863), "snapshot", snapshot, "db", "postgres",
			"sequence", `[null,"24023128"]`, "ts_us", int64(1559033904863123), "ts_ns", int64(1559033904863123000),
			"schema", "public", "table", "corners", "txId", tx, "lsn", lsn, "xmin", nil)
	}
	block := newStruct(t, pgBlock, "id", "556:24023200", "total_order", int64(2), "data_collection_order", int64(1))
	change := func(op string, before, after, src, tx any) *transform.Struct {
		return newStruct(t, env, "before", before, "after", after, "source", src, "transaction", tx,
			"op", op, "ts_ms", int64(1559033904961), "ts_us", int64(1559033904961123), "ts_ns", int64(1559033904961123456))
	}
	return []*transform.Struct{
		change("r", nil, full, source("true", int64(555), int64(24023128)), nil),
		change("u", full, sparse, source("false", int64(556), int64(24023200)), block),
		change("d", sparse, nil, source("false", int64(557), int64(24023300)), nil),
	}
}

func fieldSchema(s *schema.Schema, name string) *schema.Schema {
	for _, f := range s.Fields {
		if f.Name == name {
			return f.Schema
		}
	}
	return nil
}

// javaBytes is BigInteger.toByteArray: big-endian two's complement, the
// fewest bytes with the sign bit.
func javaBytes(x *big.Int) []byte {
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	n := (x.BitLen() + 8) / 8 // room for the sign bit
	m := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(8*n)), x)
	b := m.FillBytes(make([]byte, n))
	for len(b) > 1 && b[0] == 0xff && b[1]&0x80 != 0 {
		b = b[1:]
	}
	return b
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// wantProto is what protobufjs's toObject gives for v of schema s.
func wantProto(s *schema.Schema, v any) any {
	if v == nil {
		switch {
		case s.Type == schema.TypeStruct, s.Name == transform.DecimalName, s.Name == transform.DateName,
			s.Name == transform.TimeName, s.Name == transform.TimestampName:
			return nil // an unset message field
		case s.Type == schema.TypeArray, s.Type == schema.TypeMap:
			return []any{}
		case s.Type == schema.TypeInt64:
			return "0"
		case s.Type == schema.TypeString, s.Type == schema.TypeBytes:
			return ""
		case s.Type == schema.TypeBoolean:
			return false
		default:
			return 0
		}
	}
	switch s.Name {
	case transform.DecimalName:
		d := v.(transform.Decimal)
		return map[string]any{"value": b64(javaBytes(d.Unscaled)), "precision": len(new(big.Int).Abs(d.Unscaled).String()), "scale": d.Scale}
	case transform.DateName:
		t := v.(time.Time)
		return map[string]any{"year": t.Year(), "month": int(t.Month()), "day": t.Day()}
	case transform.TimeName:
		t := v.(time.Time)
		return map[string]any{"hours": t.Hour(), "minutes": t.Minute(), "seconds": t.Second(), "nanos": t.Nanosecond()}
	case transform.TimestampName:
		ms := v.(time.Time).UnixMilli()
		sec := ms / 1000
		if ms%1000 < 0 {
			sec--
		}
		return map[string]any{"seconds": strconv.FormatInt(sec, 10), "nanos": (ms - sec*1000) * 1e6}
	}
	switch s.Type {
	case schema.TypeInt64:
		return strconv.FormatInt(v.(int64), 10)
	case schema.TypeBytes:
		return b64(v.([]byte))
	case schema.TypeArray:
		out := []any{}
		for _, e := range v.([]any) {
			out = append(out, wantProto(s.Items, e))
		}
		return out
	case schema.TypeMap:
		out := []any{}
		for _, e := range v.(*transform.Map).Entries {
			out = append(out, map[string]any{"key": wantProto(s.Keys, e.Key), "value": wantProto(s.Values, e.Value)})
		}
		return out
	case schema.TypeStruct:
		st := v.(*transform.Struct)
		out := map[string]any{}
		for i, f := range s.Fields {
			out[protobufjsName(f.Name)] = wantProto(f.Schema, st.Values[i])
		}
		return out
	}
	return v
}

// protobufjsName is the name protobufjs gives a field: protobuf.parse
// without keepCase (the registry client passes no option, ProtoSchema.js)
// camel-cases it, util.camelCase: each "_" and the lower-case letter
// after it become that letter in upper case, from the second character
// on (ts_ms is tsMs, origin_lsn originLsn).
func protobufjsName(name string) string {
	if name == "" {
		return name
	}
	out := []byte{name[0]}
	for i := 1; i < len(name); i++ {
		if name[i] == '_' && i+1 < len(name) && name[i+1] >= 'a' && name[i+1] <= 'z' {
			out = append(out, name[i+1]-'a'+'A')
			i++
			continue
		}
		out = append(out, name[i])
	}
	return string(out)
}

// wantJSON is what JsonSchemaData.fromConnectData writes for v; a map
// with keys that are not required strings is an array of {"key",
// "value"} objects (schema-registry json-schema-converter/.../JsonSchemaData.java:574-613
// at 794611bd86d).
func wantJSON(s *schema.Schema, v any) any { return wantJSONAs(s, v, false) }

// wantConnectJSON is what JsonConverter writes for v (CloudEvents data):
// the same but for a map whose keys are not strings, an array of
// [key, value] tuples where JsonSchemaData writes {"key", "value"}
// objects (connecttest.checkMap has JsonConverter's rule and lines).
func wantConnectJSON(s *schema.Schema, v any) any { return wantJSONAs(s, v, true) }

func wantJSONAs(s *schema.Schema, v any, tuples bool) any {
	if v == nil {
		return nil
	}
	switch s.Name {
	case transform.DecimalName:
		return b64(javaBytes(v.(transform.Decimal).Unscaled))
	case transform.DateName:
		return v.(time.Time).Unix() / 86400
	case transform.TimeName:
		t := v.(time.Time)
		return (t.Hour()*3600+t.Minute()*60+t.Second())*1000 + t.Nanosecond()/1e6
	case transform.TimestampName:
		return v.(time.Time).UnixMilli()
	}
	switch s.Type {
	case schema.TypeBytes:
		return b64(v.([]byte))
	case schema.TypeArray:
		out := []any{}
		for _, e := range v.([]any) {
			out = append(out, wantJSONAs(s.Items, e, tuples))
		}
		return out
	case schema.TypeMap:
		if s.Keys.Type == schema.TypeString {
			out := map[string]any{}
			for _, e := range v.(*transform.Map).Entries {
				out[e.Key.(string)] = wantJSONAs(s.Values, e.Value, tuples)
			}
			return out
		}
		out := []any{}
		for _, e := range v.(*transform.Map).Entries {
			k, val := wantJSONAs(s.Keys, e.Key, tuples), wantJSONAs(s.Values, e.Value, tuples)
			if tuples {
				out = append(out, []any{k, val})
			} else {
				out = append(out, map[string]any{"key": k, "value": val})
			}
		}
		return out
	case schema.TypeStruct:
		st := v.(*transform.Struct)
		out := map[string]any{}
		for i, f := range s.Fields {
			out[f.Name] = wantJSONAs(f.Schema, st.Values[i], tuples)
		}
		return out
	}
	return v
}

// normalize turns Go values and decoded JSON alike into JSON's model with
// numbers as their text, so that 1.5 and 1.5, "0" and "0" compare, and
// 9007199254740993 is not rounded on our side.
func normalize(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return normalizeJSON(t, b)
}

func normalizeJSON(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return out
}

// diff lists where got and want differ, field by field, by path.
func diff(path string, got, want any) []string {
	gm, gok := got.(map[string]any)
	wm, wok := want.(map[string]any)
	if gok && wok {
		var keys []string
		for k := range wm {
			keys = append(keys, k)
		}
		for k := range gm {
			if _, ok := wm[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var out []string
		for _, k := range keys {
			g, inG := gm[k]
			w, inW := wm[k]
			switch {
			case !inG:
				out = append(out, fmt.Sprintf("%s.%s: missing, want %v", path, k, w))
			case !inW:
				out = append(out, fmt.Sprintf("%s.%s: %v, not written", path, k, g))
			default:
				out = append(out, diff(path+"."+k, g, w)...)
			}
		}
		return out
	}
	ga, gok := got.([]any)
	wa, wok := want.([]any)
	if gok && wok && len(ga) == len(wa) {
		var out []string
		for i := range ga {
			out = append(out, diff(fmt.Sprintf("%s[%d]", path, i), ga[i], wa[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(got, want) {
		return []string{fmt.Sprintf("%s: %v, want %v", path, got, want)}
	}
	return nil
}
