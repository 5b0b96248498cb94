package schema

import (
	"errors"
	"math"
	"testing"
	"time"
)

// TestTimePrecisionMicrosecondsAndNanoseconds: time.precision.mode
// microseconds and nanoseconds as Debezium 3.6.1 writes them
// (TemporalPrecisionMode.java:64-70; debezium-connector-postgres/src/test/
// java/io/debezium/connector/postgresql/PostgresTemporalPrecisionHandlingIT.java
// :178-394): every time and timestamp precision in µs or ns, Micro/NanoTime
// and Micro/NanoTimestamp; ±infinity timestamps in ns are Long.MAX_VALUE
// and Long.MIN_VALUE (PostgresValueConverter.java:1234-1256). A timestamp
// whose nanoseconds overflow an int64 (before 1677, after 2262) is a value
// error, where Debezium's Math.multiplyExact throws
// (NanoTimestamp.java:104).
func TestTimePrecisionMicrosecondsAndNanoseconds(t *testing.T) {
	rel := &Relation{Schema: "public", Table: "t", Columns: []Column{
		{Name: "ts0", TypeOID: oidTimestamp, TypeMod: 0},
		{Name: "ts3", TypeOID: oidTimestamp, TypeMod: 3},
		{Name: "ts6", TypeOID: oidTimestamp, TypeMod: 6},
		{Name: "tm3", TypeOID: oidTime, TypeMod: 3},
		{Name: "tm", TypeOID: oidTime, TypeMod: -1},
	}}
	row := Tuple{text("2019-07-09 02:28:57"), text("2019-07-09 02:28:57.123"), text("2019-07-09 02:28:57.123456"),
		text("04:05:11.789"), text("24:00:00")}
	for _, tc := range []struct {
		mode       string
		ts, tm     string
		scale      float64
		pinf, ninf float64
	}{
		{"microseconds", "io.debezium.time.MicroTimestamp", "io.debezium.time.MicroTime", 1,
			9223372036825200000, -9223372036832400000},
		{"nanoseconds", "io.debezium.time.NanoTimestamp", "io.debezium.time.NanoTime", 1000,
			math.MaxInt64, math.MinInt64},
	} {
		cfg := testJSONConfig
		cfg.TimePrecisionMode = tc.mode
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s refused: %v", tc.mode, err)
		}
		r := encodeRow(t, cfg, rel, row)
		want := map[string]float64{
			"ts0": 1562639337000000 * tc.scale, "ts3": 1562639337123000 * tc.scale, "ts6": 1562639337123456 * tc.scale,
			"tm3": 14711789000 * tc.scale, "tm": 86400000000 * tc.scale,
		}
		for col, v := range want {
			if got, _ := r.plain[col].(float64); got != v {
				t.Errorf("%s %s: %v, want %v", tc.mode, col, r.plain[col], v)
			}
			name := tc.ts
			if col[:2] == "tm" {
				name = tc.tm
			}
			if f := r.afterField(col); f["type"] != "int64" || f["name"] != name {
				t.Errorf("%s %s: schema %v, want int64 %s", tc.mode, col, f, name)
			}
		}
		inf := encodeRow(t, cfg, rel, Tuple{text("infinity"), text("-infinity"), text("infinity"), text("00:00:00"), text("00:00:00")})
		if inf.plain["ts0"] != tc.pinf || inf.plain["ts3"] != tc.ninf || inf.plain["ts6"] != tc.pinf {
			t.Errorf("%s: ±infinity %v %v %v, want %v %v", tc.mode, inf.plain["ts0"], inf.plain["ts3"], inf.plain["ts6"], tc.pinf, tc.ninf)
		}
	}

	cfg := testJSONConfig
	cfg.TimePrecisionMode = "nanoseconds"
	one := &Relation{Schema: "public", Table: "t", Columns: []Column{{Name: "ts", TypeOID: oidTimestamp, TypeMod: 6}}}
	for _, s := range []string{"2262-04-11 23:47:16.854776", "1677-09-21 00:12:43.145224"} {
		ch := &Change{Op: OpCreate, Relation: one, After: Tuple{text(s)}}
		_, err := NewJSONEncoder(cfg).AppendValue(nil, NewPlan(cfg, ch.Relation), ch, time.UnixMilli(1))
		var ve *ValueError
		if !errors.As(err, &ve) {
			t.Errorf("%s in ns: %v, want a value error", s, err)
		}
	}
	for _, s := range []string{"2262-04-11 23:47:16.854775", "1677-09-21 00:12:43.145225"} {
		encodeRow(t, cfg, one, Tuple{text(s)}) // the last instants that fit
	}
}

// TestTimePrecisionIsostring: time.precision.mode isostring writes date,
// time and timestamp as io.debezium.time.IsoDate, IsoTime and
// IsoTimestamp strings in UTC, the fraction cut to its digits
// (PostgresTemporalPrecisionHandlingIT.java:93-175, :397-424 at
// v3.6.1.Final); timestamptz and timetz keep their Zoned* forms.
func TestTimePrecisionIsostring(t *testing.T) {
	cfg := testJSONConfig
	cfg.TimePrecisionMode = "isostring"
	rel := &Relation{Schema: "public", Table: "t", Columns: []Column{
		{Name: "d", TypeOID: oidDate, TypeMod: -1},
		{Name: "tm", TypeOID: oidTime, TypeMod: -1},
		{Name: "ts", TypeOID: oidTimestamp, TypeMod: 3},
		{Name: "tstz", TypeOID: oidTimestamptz, TypeMod: -1},
	}}
	for _, tc := range []struct {
		in   Tuple
		want [4]string
	}{
		{Tuple{text("2017-09-15"), text("04:05:11.789"), text("2019-07-09 02:28:57.1"), text("2019-07-09 01:28:10.123456+00")},
			[4]string{"2017-09-15Z", "04:05:11.789Z", "2019-07-09T02:28:57.1Z", "2019-07-09T01:28:10.123456Z"}},
		{Tuple{text("4713-12-31 BC"), text("24:00:00"), text("2019-07-09 02:28:57"), text("infinity")},
			[4]string{"-4712-12-31Z", "00:00:00Z", "2019-07-09T02:28:57Z", "infinity"}},
		{Tuple{text("infinity"), text("00:00:00"), text("infinity"), text("-infinity")},
			[4]string{"+292278994-08-16Z", "00:00:00Z", "+294247-01-10T04:00:25.2Z", "-infinity"}},
		{Tuple{text("-infinity"), text("13:51:30.000001"), text("-infinity"), text("2016-11-04 13:51:30+02")},
			[4]string{"+292269055-12-03Z", "13:51:30.000001Z", "-290308-12-21T19:59:27.6Z", "2016-11-04T11:51:30.000000Z"}},
	} {
		r := encodeRow(t, cfg, rel, tc.in)
		for i, col := range []string{"d", "tm", "ts", "tstz"} {
			if r.plain[col] != tc.want[i] || r.payload[col] != tc.want[i] {
				t.Errorf("%s (row %v): %v / %v, want %q", col, tc.want, r.plain[col], r.payload[col], tc.want[i])
			}
		}
		for col, name := range map[string]string{"d": "io.debezium.time.IsoDate", "tm": "io.debezium.time.IsoTime",
			"ts": "io.debezium.time.IsoTimestamp", "tstz": "io.debezium.time.ZonedTimestamp"} {
			if f := r.afterField(col); f["type"] != "string" || f["name"] != name {
				t.Errorf("%s: schema %v, want string %s", col, f, name)
			}
		}
	}
}
