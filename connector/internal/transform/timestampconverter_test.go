package transform

import (
	"fmt"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/schema"
)

const tsTest = "TimestampConverterTest.java"

// The constants of TimestampConverterTest.java:66-92.
var (
	tsEpoch        = fromMillis(0)
	tsTimeV        = fromMillis(1234)
	tsDateV        = fromMillis(epochDay)
	tsDatePlusTime = fromMillis(epochDay + 1234)
)

const (
	datePlusTimeUnix        = int64(86401234)
	datePlusTimeUnixMicros  = datePlusTimeUnix*1000 + 123
	datePlusTimeUnixNanos   = datePlusTimeUnixMicros*1000 + 456
	datePlusTimeUnixSeconds = int64(86401)
	stringDateFmt           = "yyyy MM dd HH mm ss SSS z"
	datePlusTimeString      = "1970 01 02 00 00 01 234 UTC"
)

func TestTimestampConverterConfigAsKafka(t *testing.T) {
	for _, c := range []struct {
		name string
		kv   []string
		want string
	}{
		{tsTest + ":110 testConfigNoTargetType", nil, "transforms.t.target.type: missing"},
		{tsTest + ":115 testConfigInvalidTargetType", []string{"target.type", "invalid"}, "transforms.t.target.type"},
		{tsTest + ":121 testConfigInvalidUnixPrecision", []string{"target.type", "unix", "unix.precision", "invalid"}, "transforms.t.unix.precision"},
		{tsTest + ":137 testConfigMissingFormat", []string{"target.type", "string"}, "transforms.t.format: TimestampConverter requires format"},
		{tsTest + ":143 testConfigInvalidFormat", []string{"target.type", "string", "format", "bad-format"}, "transforms.t.format"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := oneErr("TimestampConverter$Value", c.kv...)
			mustContain(t, err, c.want)
		})
	}
	t.Run(tsTest+":129 testConfigValidUnixPrecision", func(t *testing.T) {
		one(t, "TimestampConverter$Value", "target.type", "unix", "unix.precision", "seconds")
	})
}

func TestTimestampConverterAsKafka(t *testing.T) {
	fmtKV := []string{"format", stringDateFmt}
	cases := []struct {
		line   int
		name   string
		kv     []string
		s      *schema.Schema
		in     any
		wantS  *schema.Schema
		want   any
		target string
	}{
		{153, "testSchemalessIdentity", nil, nil, tsDatePlusTime, nil, tsDatePlusTime, "Timestamp"},
		{162, "testSchemalessTimestampToDate", nil, nil, tsDatePlusTime, nil, tsDateV, "Date"},
		{171, "testSchemalessTimestampToTime", nil, nil, tsDatePlusTime, nil, tsTimeV, "Time"},
		{180, "testSchemalessTimestampToUnix", nil, nil, tsDatePlusTime, nil, datePlusTimeUnix, "unix"},
		{189, "testSchemalessTimestampToString", fmtKV, nil, tsDatePlusTime, nil, datePlusTimeString, "string"},
		{204, "testSchemalessDateToTimestamp", nil, nil, tsDateV, nil, tsDateV, "Timestamp"},
		{214, "testSchemalessTimeToTimestamp", nil, nil, tsTimeV, nil, tsTimeV, "Timestamp"},
		{224, "testSchemalessUnixToTimestamp", nil, nil, datePlusTimeUnix, nil, tsDatePlusTime, "Timestamp"},
		{233, "testSchemalessStringToTimestamp", fmtKV, nil, datePlusTimeString, nil, tsDatePlusTime, "Timestamp"},
		{248, "testWithSchemaIdentity", nil, timestampSchema, tsDatePlusTime, timestampSchema, tsDatePlusTime, "Timestamp"},
		{257, "testWithSchemaTimestampToDate", nil, timestampSchema, tsDatePlusTime, dateSchema, tsDateV, "Date"},
		{266, "testWithSchemaTimestampToTime", nil, timestampSchema, tsDatePlusTime, timeSchema, tsTimeV, "Time"},
		{275, "testWithSchemaTimestampToUnix", nil, timestampSchema, tsDatePlusTime, int64Schema, datePlusTimeUnix, "unix"},
		{284, "testWithSchemaTimestampToString", fmtKV, timestampSchema, tsDatePlusTime, stringSchema, datePlusTimeString, "string"},
		{350, "testWithSchemaDateToTimestamp", nil, dateSchema, tsDateV, timestampSchema, tsDateV, "Timestamp"},
		{360, "testWithSchemaTimeToTimestamp", nil, timeSchema, tsTimeV, timestampSchema, tsTimeV, "Timestamp"},
		{370, "testWithSchemaUnixToTimestamp", nil, int64Schema, datePlusTimeUnix, timestampSchema, tsDatePlusTime, "Timestamp"},
		{379, "testWithSchemaStringToTimestamp", fmtKV, stringSchema, datePlusTimeString, timestampSchema, tsDatePlusTime, "Timestamp"},
		{675, "testSchemalessStringToUnix_Micros", append([]string{"unix.precision", "microseconds"}, fmtKV...), nil, datePlusTimeString, nil, int64(86401234000), "unix"},
		{689, "testSchemalessStringToUnix_Nanos", append([]string{"unix.precision", "nanoseconds"}, fmtKV...), nil, datePlusTimeString, nil, int64(86401234000000), "unix"},
		{703, "testSchemalessStringToUnix_Seconds", append([]string{"unix.precision", "seconds"}, fmtKV...), nil, datePlusTimeString, nil, datePlusTimeUnixSeconds, "unix"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s:%d %s", tsTest, c.line, c.name), func(t *testing.T) {
			tr := one(t, "TimestampConverter$Value", append([]string{"target.type", c.target}, c.kv...)...)
			out := apply(t, tr, Record{Topic: "topic", Partition: i32p(0), ValueSchema: c.s, Value: c.in})
			eq(t, "schema", out.ValueSchema, c.wantS)
			eq(t, "value", out.Value, c.want)
		})
	}
	// :298-345: a null value, and a null (absent) field of a map, stay null.
	for _, target := range []string{"string", "Date", "Timestamp", "unix", "Time"} {
		t.Run(tsTest+":324 testSchemalessNullValueConversion "+target, func(t *testing.T) {
			tr := one(t, "TimestampConverter$Value", "target.type", target, "format", stringDateFmt)
			out := apply(t, tr, Record{Topic: "topic"})
			eq(t, "value", out.Value, nil)
			tr = one(t, "TimestampConverter$Value", "target.type", target, "format", stringDateFmt, "field", "ts")
			out = apply(t, tr, Record{Topic: "topic"})
			eq(t, "value", out.Value, nil)
			if out.ValueSchema != nil {
				t.Error("schema set")
			}
		})
	}
	// :393-480: null values and null fields with schemas: the schema
	// becomes the target's optional schema.
	originals := []*schema.Schema{sOptInt64, optionalTimeSchema, optionalDateSchema, sOptStr, optionalTimestampSchema}
	for target, want := range map[string]*schema.Schema{"Timestamp": optionalTimestampSchema, "unix": sOptInt64, "Time": optionalTimeSchema, "Date": optionalDateSchema, "string": sOptStr} {
		for _, orig := range originals {
			t.Run(fmt.Sprintf("%s:482 testWithSchemaNullValueConversion %s from %s %s", tsTest, target, orig.Type, orig.Name), func(t *testing.T) {
				tr := one(t, "TimestampConverter$Value", "target.type", target, "format", stringDateFmt)
				out := apply(t, tr, Record{Topic: "topic", ValueSchema: orig})
				eq(t, "schema", out.ValueSchema, want)
				eq(t, "value", out.Value, nil)
			})
			t.Run(fmt.Sprintf("%s:493 testWithSchemaNullFieldConversion %s from %s %s", tsTest, target, orig.Type, orig.Name), func(t *testing.T) {
				tr := one(t, "TimestampConverter$Value", "target.type", target, "format", stringDateFmt, "field", "ts")
				s := structOf("ts", orig, "other", sString)
				out := apply(t, tr, Record{Topic: "topic", ValueSchema: s, Value: newStruct(t, s, "ts", nil, "other", "test")})
				eq(t, "schema", out.ValueSchema, structOf("ts", want, "other", sString))
				eq(t, "ts", get(t, out.Value, "ts"), nil)
				// :517-521, the whole struct null.
				os := opt(structOf("ts", orig, "other", sString))
				out = apply(t, tr, Record{Topic: "topic", ValueSchema: os})
				eq(t, "schema", out.ValueSchema, opt(structOf("ts", want, "other", sString)))
				eq(t, "value", out.Value, nil)
			})
		}
	}
	t.Run(tsTest+":527 testSchemalessFieldConversion", func(t *testing.T) {
		tr := one(t, "TimestampConverter$Value", "target.type", "Date", "field", "ts")
		out := apply(t, tr, Record{Topic: "topic", Value: NewMap("ts", tsDatePlusTime)})
		eq(t, "value", out.Value, NewMap("ts", tsDateV))
	})
	t.Run(tsTest+":541 testWithSchemaFieldConversion", func(t *testing.T) {
		tr := one(t, "TimestampConverter$Value", "target.type", "Timestamp", "field", "ts")
		s := structOf("ts", sInt64, "other", sString)
		out := apply(t, tr, Record{Topic: "topic", ValueSchema: s, Value: newStruct(t, s, "ts", datePlusTimeUnix, "other", "test")})
		eq(t, "schema", out.ValueSchema, structOf("ts", timestampSchema, "other", sString))
		eq(t, "ts", get(t, out.Value, "ts"), tsDatePlusTime)
		eq(t, "other", get(t, out.Value, "other"), "test")
	})
	t.Run(tsTest+":569 testWithSchemaNullFieldWithDefaultConversion", func(t *testing.T) {
		// Kafka's test sets replace.null.with.default=false in both of
		// its runs (:573), so both expect null.
		tr := one(t, "TimestampConverter$Value", "target.type", "Timestamp", "field", "ts", "replace.null.with.default", "false")
		s := structOf("ts", withDefault(sOptInt64, "0"), "other", sString)
		out := apply(t, tr, Record{Topic: "topic", ValueSchema: s, Value: newStruct(t, s, "ts", nil, "other", "test")})
		eq(t, "schema", out.ValueSchema, structOf("ts", optionalTimestampSchema, "other", sString))
		eq(t, "ts", get(t, out.Value, "ts"), nil)
		eq(t, "other", get(t, out.Value, "other"), "test")
		// What data() (:94-99) pairs with true: the default 0 converted, EPOCH.
		tr = one(t, "TimestampConverter$Value", "target.type", "Timestamp", "field", "ts")
		out = apply(t, tr, Record{Topic: "topic", ValueSchema: s, Value: newStruct(t, s, "ts", nil, "other", "test")})
		eq(t, "ts with the default", get(t, out.Value, "ts"), tsEpoch)
	})
	for _, c := range []struct {
		line      int
		precision string
		in        int64
		want      time.Time
	}{
		{598, "microseconds", datePlusTimeUnixMicros, tsDatePlusTime},
		{622, "nanoseconds", datePlusTimeUnixNanos, tsDatePlusTime},
		{646, "seconds", datePlusTimeUnixSeconds, fromMillis(epochDay + 1000)},
	} {
		t.Run(fmt.Sprintf("%s:%d testWithSchemaFieldConversion_%s", tsTest, c.line, c.precision), func(t *testing.T) {
			tr := one(t, "TimestampConverter$Value", "target.type", "Timestamp", "field", "ts", "unix.precision", c.precision)
			s := structOf("ts", sInt64)
			out := apply(t, tr, Record{Topic: "topic", ValueSchema: s, Value: newStruct(t, s, "ts", c.in)})
			eq(t, "schema", out.ValueSchema, structOf("ts", timestampSchema))
			eq(t, "ts", get(t, out.Value, "ts"), c.want)
		})
	}
	t.Run(tsTest+":718 testKey", func(t *testing.T) {
		tr := one(t, "TimestampConverter$Key", "target.type", "Timestamp")
		out := apply(t, tr, Record{Topic: "topic", Key: tsDatePlusTime})
		eq(t, "key", out.Key, tsDatePlusTime)
		if out.KeySchema != nil {
			t.Error("key schema set")
		}
	})
}

// TestTimestampConverterDebeziumTimes: a Debezium MicroTimestamp is an
// int64 with a name that is not Connect's, so TimestampConverter treats
// it as Unix time in unix.precision (TimestampConverter.java:455-470).
func TestTimestampConverterDebeziumTimes(t *testing.T) {
	micro := &schema.Schema{Type: schema.TypeInt64, Name: "io.debezium.time.MicroTimestamp", Version: 1}
	tr := one(t, "TimestampConverter$Value", "target.type", "string", "field", "ts", "unix.precision", "microseconds", "format", "yyyy-MM-dd'T'HH:mm:ss.SSSX")
	s := structOf("ts", micro)
	out := apply(t, tr, Record{ValueSchema: s, Value: newStruct(t, s, "ts", datePlusTimeUnixMicros)})
	eq(t, "ts", get(t, out.Value, "ts"), "1970-01-02T00:00:01.234Z")
	eq(t, "schema", fieldSchema(t, out.ValueSchema, "ts"), stringSchema)
	// A string that does not match the pattern is TimestampConverter.java:145-147's error.
	tr = one(t, "TimestampConverter$Value", "target.type", "unix", "format", "yyyy-MM-dd")
	mustContain(t, applyErr(t, tr, Record{Value: "07/12/2026"}), "does not match pattern (yyyy-MM-dd)")
}

// TestTimestampConverterKeepsMilliseconds: the pivot of every conversion
// is a java.util.Date (TimestampConverter.java:114-129, 494-513), so a
// Timestamp target holds whole milliseconds even when the time.Time given
// had more (floor, as Date.getTime of an instant).
func TestTimestampConverterKeepsMilliseconds(t *testing.T) {
	tr := one(t, "TimestampConverter$Value", "target.type", "Timestamp")
	for in, want := range map[time.Time]time.Time{
		time.Unix(86401, 234567891).UTC(): fromMillis(86401234),
		time.Unix(-1, 999999).UTC():       fromMillis(-1000),
	} {
		out := apply(t, tr, Record{ValueSchema: timestampSchema, Value: in})
		eq(t, "timestamp of "+in.String(), out.Value, want)
	}
}

// TestDateFormat pins the SimpleDateFormat letters supported, formatting
// and parsing in UTC, against values worked out from Java's pattern
// documentation (java.text.SimpleDateFormat) and confirmed by it: OpenJDK
// 17.0.15 formats 2026-12-07T05:04:03.021Z so with each pattern and
// formats its own parse of the text back the same.
func TestDateFormat(t *testing.T) {
	ts := time.Date(2026, 12, 7, 5, 4, 3, 21e6, time.UTC)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		pattern, text string
	}{
		{"yyyy-MM-dd HH:mm:ss.SSS", "2026-12-07 05:04:03.021"},
		{"yyyyMMddHHmmss", "20261207050403"},
		{"dd MMM yyyy hh:mm a", "07 Dec 2026 05:04 AM"},
		{"EEE, d MMMM yy", "Mon, 7 December 26"},
		{"yyyy-MM-dd'T'HH:mm:ssZ", "2026-12-07T05:04:03+0000"},
		{"D 'day of' yyyy ''", "341 day of 2026 '"},
		{"yyyy-MM-dd h 'o''clock' a", "2026-12-07 5 o'clock AM"}, // SimpleDateFormat's own example
		{"H:m:s.S", "5:4:3.21"},
	} {
		df, err := parseDateFormat(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "format "+c.pattern, df.format(ts), c.text)
		back, err := df.parse(c.text, now)
		if err != nil {
			t.Errorf("parse %q with %q: %v", c.text, c.pattern, err)
			continue
		}
		// Fields the pattern lacks are the epoch's (1970-01-01 00:00 UTC).
		eq(t, "format(parse "+c.text+")", df.format(back), c.text)
	}
	// Lenient: month 13 rolls over; trailing text is ignored (DateFormat.parse reads a prefix).
	df, _ := parseDateFormat("yyyy-MM-dd")
	got, err := df.parse("2026-13-01xyz", now)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "lenient", got, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, bad := range []string{"yyyy-ww", "YYYY-MM-dd", "F", "'open"} {
		if _, err := parseDateFormat(bad); err == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
}
