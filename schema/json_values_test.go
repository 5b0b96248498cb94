package schema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

var testJSONConfig = JSONConfig{Name: "srv", Database: "appdb", Version: "mooncdc-test"}

func text(s string) Value { return Value{Kind: ValueText, Data: []byte(s)} }

var (
	null  = Value{Kind: ValueNull}
	toast = Value{Kind: ValueUnchangedToast}
)

// encodeColumn encodes v as the only column of an inserted row and returns
// the JSON written for it (the "after" object's member value).
func encodeColumn(t *testing.T, oid uint32, typmod int32, v Value) (string, error) {
	t.Helper()
	rel := &Relation{OID: 1, Schema: "public", Table: "t", ReplicaIdentity: 'd',
		Columns: []Column{{Name: "c", TypeOID: oid, TypeMod: typmod}}}
	ch := &Change{Op: OpCreate, Relation: rel, After: Tuple{v}}
	out, err := NewJSONEncoder(testJSONConfig).AppendValue(nil, NewPlan(testJSONConfig, ch.Relation), ch, time.UnixMilli(1))
	if err != nil {
		if len(out) != 0 {
			t.Errorf("AppendValue returned %q with an error; want dst unchanged", out)
		}
		return "", err
	}
	if !json.Valid(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	const pre = `{"before":null,"after":{"c":`
	end := strings.Index(string(out), `},"source":{`)
	if !strings.HasPrefix(string(out), pre) || end < 0 {
		t.Fatalf("unexpected envelope: %s", out)
	}
	return string(out[len(pre):end]), nil
}

func TestJSONValueMapping(t *testing.T) {
	const (
		notime = -1
		ms     = 3
	)
	tests := []struct {
		name   string
		oid    uint32
		typmod int32
		in     Value
		want   string // JSON, or "" when an error is expected
	}{
		{"bool true", oidBool, -1, text("t"), `true`},
		{"bool false", oidBool, -1, text("f"), `false`},
		{"int2", oidInt2, -1, text("-32768"), `-32768`},
		{"int4", oidInt4, -1, text("2147483647"), `2147483647`},
		{"int8 max", oidInt8, -1, text("9223372036854775807"), `9223372036854775807`},
		{"int8 min", oidInt8, -1, text("-9223372036854775808"), `-9223372036854775808`},
		{"int8 zero", oidInt8, -1, text("-0"), `0`},
		{"oid", oidOID, -1, text("4294967295"), `4294967295`},
		{"float4", oidFloat4, -1, text("1.5"), `1.5`},
		{"float4 max", oidFloat4, -1, text("3.4028235e+38"), `3.4028235e+38`},
		{"float8 exp", oidFloat8, -1, text("1.2345678901234567e-05"), `1.2345678901234567e-05`},
		{"float8 neg zero", oidFloat8, -1, text("-0"), `-0`},
		{"float8 NaN", oidFloat8, -1, text("NaN"), `"NaN"`},
		{"float8 inf", oidFloat8, -1, text("Infinity"), `"Infinity"`},
		{"float4 -inf", oidFloat4, -1, text("-Infinity"), `"-Infinity"`},
		{"numeric", oidNumeric, -1, text("123.4500"), `{"scale":2,"value":"MDk="}`}, // trailing zeros stripped, as Debezium
		{"numeric neg", oidNumeric, 655366, text("-0.01"), `"/w=="`},
		{"numeric pad scale", oidNumeric, 655366, text("5"), `"AfQ="`},
		{"numeric big", oidNumeric, -1, text("123456789012345678901234567890.000000000000000000001"), `{"scale":21,"value":"VHj54iCtsl5NIYCMxwaA0GLfQAAB"}`},
		{"numeric NaN", oidNumeric, -1, text("NaN"), `null`},
		{"numeric inf", oidNumeric, -1, text("-Infinity"), `null`},
		{"text", oidText, -1, text("hello"), `"hello"`},
		{"text empty", oidText, -1, text(""), `""`},
		{"text escapes", oidText, -1, text("q\"b\\s/\n\r\t\b\f\x01\x1f\x7f<&>"), `"q\"b\\s/\n\r\t\b\f\u0001\u001f` + "\x7f<&>\""},
		{"text unicode", oidText, -1, text("héllo 😀 日本 \u2028"), "\"héllo 😀 日本 \u2028\""},
		{"text invalid utf8", oidText, -1, text("a\xffb\xe2\x82c\xed\xa0\x80"), "\"a\uFFFDb\uFFFD\uFFFDc\uFFFD\uFFFD\uFFFD\""},
		{"varchar", oidVarchar, 259, text("v"), `"v"`},
		{"bpchar padded", oidBpchar, 9, text("ab   "), `"ab   "`},
		{"name", oidName, -1, text("pg_class"), `"pg_class"`},
		{"char", oidChar, -1, text("x"), `"x"`},
		{"bytea", oidBytea, -1, text(`\x0a0bff`), `"Cgv/"`},
		{"bytea empty", oidBytea, -1, text(`\x`), `""`},
		{"uuid", oidUUID, -1, text("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), `"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"`},
		{"json", oidJSON, -1, text(`{"a": [1, "x"]}`), `"{\"a\": [1, \"x\"]}"`},
		{"jsonb", oidJSONB, -1, text(`{"a": 1}`), `"{\"a\": 1}"`},
		{"date", oidDate, -1, text("2016-11-04"), `17109`},
		{"date BC", oidDate, -1, text("0044-03-15 BC"), `-735160`},
		{"date 5 digit year", oidDate, -1, text("10000-01-01"), `2932897`},
		{"date infinity", oidDate, -1, text("infinity"), `2146033979`},
		{"date -infinity", oidDate, -1, text("-infinity"), `-2147472691`},
		{"time micro", oidTime, notime, text("13:51:30.123456"), `49890123456`},
		{"time(6)", oidTime, 6, text("13:51:30"), `49890000000`},
		{"time(4)", oidTime, 4, text("13:51:30.1234"), `49890123400`},
		{"time(3) millis", oidTime, ms, text("13:51:30.123"), `49890123`},
		{"time(0) millis", oidTime, 0, text("13:51:30"), `49890000`},
		{"time 24:00", oidTime, notime, text("24:00:00"), `86400000000`},
		{"timestamp micro", oidTimestamp, notime, text("2016-11-04 13:51:30.123456"), `1478267490123456`},
		{"timestamp(3) millis", oidTimestamp, ms, text("2016-11-04 13:51:30.123"), `1478267490123`},
		{"timestamp(3) negative millis", oidTimestamp, ms, text("1969-12-31 23:59:59.999"), `-1`},
		{"timestamp BC", oidTimestamp, notime, text("0001-01-01 00:00:00 BC"), `-62167219200000000`},
		{"timestamp infinity", oidTimestamp, notime, text("infinity"), `9223372036825200000`},
		{"timestamp -infinity", oidTimestamp, notime, text("-infinity"), `-9223372036832400000`},
		{"timestamp(1) infinity", oidTimestamp, 1, text("infinity"), `9223372036825200000`},
		{"timestamptz", oidTimestamptz, notime, text("2016-11-04 13:51:30.123456+02"), `"2016-11-04T11:51:30.123456Z"`},
		{"timestamptz padded", oidTimestamptz, notime, text("2020-04-01 11:51:02+00"), `"2020-04-01T11:51:02.000000Z"`},
		{"timestamptz(3)", oidTimestamptz, 3, text("2016-11-04 13:51:30.12-01"), `"2016-11-04T14:51:30.120Z"`},
		{"timestamptz(0)", oidTimestamptz, 0, text("2016-11-04 13:51:30+00"), `"2016-11-04T13:51:30Z"`},
		{"timestamptz large year", oidTimestamptz, notime, text("21016-11-04 13:51:30+07"), `"+21016-11-04T06:51:30.000000Z"`},
		{"timestamptz BC", oidTimestamptz, notime, text("0044-03-15 12:00:00+00 BC"), `"-0043-03-15T12:00:00.000000Z"`},
		{"timestamptz LMT offset", oidTimestamptz, notime, text("1900-01-01 00:00:00+00:53:28"), `"1899-12-31T23:06:32.000000Z"`},
		{"timestamptz infinity", oidTimestamptz, notime, text("infinity"), `"infinity"`},
		{"timestamptz -infinity", oidTimestamptz, notime, text("-infinity"), `"-infinity"`},
		{"timetz", oidTimetz, notime, text("13:51:30.123789+02"), `"11:51:30.123789Z"`},
		{"timetz(3)", oidTimetz, 3, text("13:51:30.123+02"), `"11:51:30.123Z"`},
		{"timetz whole", oidTimetz, notime, text("13:51:02+02"), `"11:51:02Z"`},
		{"timetz wraps back", oidTimetz, notime, text("01:00:00+02"), `"23:00:00Z"`},
		{"timetz wraps forward", oidTimetz, notime, text("23:00:00.5-02:30"), `"01:30:00.5Z"`},
		{"timetz 24:00 UTC", oidTimetz, notime, text("24:00:00+00"), `"24:00:00Z"`},
		{"timetz 24:00 offset", oidTimetz, notime, text("24:00:00+01"), `"23:00:00Z"`},
		{"interval", 1186, -1, text("1 year 2 mons 3 days 04:05:06.78"), `37091106780000`},
		{"unknown type as text", 99999, -1, text("(1,2)"), `"(1,2)"`},

		// NULL and unchanged TOAST, whatever the type.
		{"null int", oidInt4, -1, null, `null`},
		{"null timestamptz", oidTimestamptz, -1, null, `null`},
		{"null bytea", oidBytea, -1, null, `null`},
		{"toast text", oidText, -1, toast, `"__debezium_unavailable_value"`},
		{"toast jsonb", oidJSONB, -1, toast, `"__debezium_unavailable_value"`},
		{"toast bytea", oidBytea, -1, toast, `"X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=="`},

		// Malformed text for the type: an error, never a guess.
		{"bool bad", oidBool, -1, text("yes"), ""},
		{"bool empty", oidBool, -1, text(""), ""},
		{"int2 overflow", oidInt2, -1, text("32768"), ""},
		{"int4 overflow", oidInt4, -1, text("-2147483649"), ""},
		{"int8 overflow", oidInt8, -1, text("9223372036854775808"), ""},
		{"int8 huge", oidInt8, -1, text("99999999999999999999999"), ""},
		{"int fraction", oidInt4, -1, text("1.5"), ""},
		{"int plus", oidInt4, -1, text("+1"), ""},
		{"int empty", oidInt4, -1, text(""), ""},
		{"int minus only", oidInt4, -1, text("-"), ""},
		{"oid negative", oidOID, -1, text("-1"), ""},
		{"oid overflow", oidOID, -1, text("4294967296"), ""},
		{"float leading dot", oidFloat8, -1, text(".5"), ""},
		{"float trailing dot", oidFloat8, -1, text("1."), ""},
		{"float hex", oidFloat8, -1, text("0x1p-2"), ""},
		{"float inf lower", oidFloat8, -1, text("inf"), ""},
		{"float8 overflow", oidFloat8, -1, text("1e309"), ""},
		{"float4 overflow", oidFloat4, -1, text("1e39"), ""},
		{"float leading zero", oidFloat8, -1, text("01"), ""},
		{"numeric exponent", oidNumeric, -1, text("1e5"), ""},
		{"numeric empty", oidNumeric, -1, text(""), ""},
		{"numeric dot", oidNumeric, -1, text("1."), ""},
		{"numeric quote", oidNumeric, -1, text(`1"`), ""},
		{"numeric over scale", oidNumeric, 655366, text("0.001"), ""},
		{"toast numeric", oidNumeric, -1, toast, ""},
		{"bytea escape format", oidBytea, -1, text(`abc\000`), ""},
		{"bytea odd", oidBytea, -1, text(`\x0`), ""},
		{"date bad", oidDate, -1, text("2016-02-30"), ""},
		{"time bad", oidTime, -1, text("25:00:00"), ""},
		{"timestamp bad", oidTimestamp, -1, text("2016-11-04"), ""},
		{"timestamp range", oidTimestamp, -1, text("294277-01-01 00:00:00"), ""},
		{"timestamptz no offset", oidTimestamptz, -1, text("2016-11-04 13:51:30"), ""},
		{"timetz no offset", oidTimetz, -1, text("13:51:30"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeColumn(t, tt.oid, tt.typmod, tt.in)
			if tt.want == "" {
				var ve *ValueError
				if !errors.As(err, &ve) {
					t.Fatalf("got %s, %v; want a *ValueError", got, err)
				}
				if ve.Table != "public.t" || ve.Column != "c" || ve.TypeOID != tt.oid || ve.Value != string(tt.in.Data) {
					t.Errorf("ValueError = %+v", ve)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestJSONUnavailableValueConfig(t *testing.T) {
	cfg := testJSONConfig
	cfg.UnavailableValue = "<toast \"x\">"
	rel := &Relation{Schema: "s", Table: "t", Columns: []Column{{Name: "a", TypeOID: oidText}, {Name: "b", TypeOID: oidBytea}}}
	out, err := NewJSONEncoder(cfg).AppendValue(nil, NewPlan(cfg, rel), &Change{Op: OpUpdate, Relation: rel, After: Tuple{toast, toast}}, time.UnixMilli(1))
	if err != nil {
		t.Fatal(err)
	}
	want := `"after":{"a":"<toast \"x\">","b":"PHRvYXN0ICJ4Ij4="}`
	if !strings.Contains(string(out), want) {
		t.Errorf("got %s\nwant it to contain %s", out, want)
	}
}

func TestValueErrorNamesTableColumnAndType(t *testing.T) {
	long := strings.Repeat("9", 100)
	rel := &Relation{Schema: "sales", Table: "orders", Columns: []Column{{Name: "id", TypeOID: oidInt8}, {Name: "qty", TypeOID: oidInt4}}}
	ch := &Change{Op: OpCreate, Relation: rel, After: Tuple{text("1"), text(long)}}
	dst := []byte("prefix")
	out, err := NewJSONEncoder(testJSONConfig).AppendValue(dst, NewPlan(testJSONConfig, ch.Relation), ch, time.UnixMilli(1))
	if string(out) != "prefix" {
		t.Errorf("dst = %q, want it unchanged", out)
	}
	var ve *ValueError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want *ValueError", err)
	}
	if len(ve.Value) != maxErrValue || !errors.Is(err, errRange) {
		t.Errorf("ValueError = %+v", ve)
	}
	msg := err.Error()
	for _, s := range []string{`"sales.orders"`, `"qty"`, "int4", "oid 23", "out of range"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q does not name %s", msg, s)
		}
	}
}
