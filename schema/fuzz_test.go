package schema

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Fuzz targets for every text parser and for the value encoder: no input
// may panic, and what is accepted must round-trip or agree with package
// time. Failing inputs are saved under testdata/fuzz/<Target>.

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2016-11-04", "0001-01-01 BC", "10000-01-01", "5874897-12-31",
		"infinity", "-infinity", "2016-02-30", "0000-01-01", "", "2016-11-04 BC ", "999999999-12-31"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		days, inf, err := ParseDate(s)
		if err != nil || inf != Finite {
			return
		}
		// Print the date the way Postgres does and parse it again.
		y, m, d := civilFromDays(int64(days))
		again := pgDate(y, m, d)
		days2, _, err := ParseDate([]byte(again))
		if err != nil || days2 != days {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, days, again, days2, err)
		}
	})
}

func pgDate(y, m, d int64) string {
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	s := strconv.FormatInt(y, 10)
	for len(s) < 4 {
		s = "0" + s
	}
	s += "-" + two(m) + "-" + two(d)
	if bc {
		s += " BC"
	}
	return s
}

func two(v int64) string { return string([]byte{byte('0' + v/10), byte('0' + v%10)}) }

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"13:51:30", "13:51:30.123456", "24:00:00", "24:00:01", "12:00:00.", "1:2:3", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		us, err := ParseTime(s)
		if err == nil && (us < 0 || us > microsPerDay) {
			t.Fatalf("%q -> %d, outside a day", s, us)
		}
	})
}

func FuzzParseTimetz(f *testing.F) {
	for _, s := range []string{"13:51:30+02", "13:51:30.123789-05:30:15", "24:00:00+00", "13:51:30+16", "13:51:30Z"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		us, off, err := ParseTimetz(s)
		if err != nil {
			return
		}
		if us < 0 || us > microsPerDay || off < -maxOffsetSeconds || off > maxOffsetSeconds {
			t.Fatalf("%q -> %d, %d out of range", s, us, off)
		}
		if utc := timetzToUTC(us, off); utc < 0 || utc > microsPerDay {
			t.Fatalf("%q -> UTC %d outside a day", s, utc)
		}
		out := appendZonedTime(nil, timetzToUTC(us, off))
		if !strings.HasSuffix(string(out), "Z") {
			t.Fatalf("%q -> %s", s, out)
		}
	})
}

func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{"2016-11-04 13:51:30.123456", "0001-01-01 00:00:00 BC", "294247-01-01 23:59:59.999999",
		"infinity", "2024-01-01 24:00:00", "2016-11-04T13:51:30", "2016-11-04 13:51"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		us, inf, err := ParseTimestamp(s)
		if err != nil || inf != Finite {
			return
		}
		// Where package time also understands the text, both must agree.
		if tm, terr := time.Parse("2006-01-02 15:04:05.999999", string(s)); terr == nil && tm.UnixMicro() != us {
			t.Fatalf("%q -> %d, package time says %d", s, us, tm.UnixMicro())
		}
	})
}

func FuzzParseTimestamptz(f *testing.F) {
	for _, s := range []string{"2016-11-04 13:51:30.123456+02", "1900-01-01 00:00:00+00:53:28",
		"0044-03-15 12:00:00+00 BC", "-infinity", "2016-11-04 13:51:30", "294247-01-09 23:00:00-15"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		us, inf, err := ParseTimestamptz(s)
		if err != nil || inf != Finite {
			return
		}
		// What we print must be the same instant for package time, for the
		// years RFC 3339 can carry.
		out := string(appendZonedTimestamp(nil, us, 6))
		if len(out) == len("2006-01-02T15:04:05.000000Z") && out[0] != '-' && out[0] != '+' && !strings.HasPrefix(out, "0000") {
			tm, terr := time.Parse(time.RFC3339Nano, out)
			if terr != nil || tm.UnixMicro() != us {
				t.Fatalf("%q -> %d -> %s -> %v, %v", s, us, out, tm.UnixMicro(), terr)
			}
		}
	})
}

func FuzzDecodeByteaHex(f *testing.F) {
	for _, s := range []string{`\x`, `\x0a0bFF`, `\x0`, `\xzz`, `abc`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		out, err := DecodeByteaHex(nil, s)
		if err != nil {
			if len(out) != 0 {
				t.Fatalf("%q: output %q with error", s, out)
			}
			return
		}
		if got, want := hex.EncodeToString(out), strings.ToLower(string(s[2:])); got != want {
			t.Fatalf("%q -> %x", s, out)
		}
	})
}

func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"b\\\n\x00\x1f", "héllo 😀", "\xff\xfe", "\xed\xa0\x80", "\xe2\x82"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		out := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q -> invalid JSON %s: %v", s, out, err)
		}
		// encoding/json replaces invalid UTF-8 the same way (one U+FFFD
		// per bad byte).
		ref, _ := json.Marshal(string(s))
		var want string
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%q -> %q, want %q", s, got, want)
		}
	})
}

// fuzzTypes are the column types FuzzAppendValue picks from.
var fuzzTypes = []uint32{oidBool, oidInt2, oidInt4, oidInt8, oidOID, oidFloat4, oidFloat8, oidNumeric,
	oidText, oidBytea, oidUUID, oidJSONB, oidDate, oidTime, oidTimestamp, oidTimestamptz, oidTimetz, 1186}

func FuzzAppendValue(f *testing.F) {
	seeds := []struct {
		typ    uint8
		typmod int8
		data   string
	}{
		{0, -1, "t"}, {3, -1, "-9223372036854775808"}, {6, -1, "1e+308"}, {7, -1, "NaN"},
		{9, -1, `\x0a0b`}, {12, -1, "infinity"}, {13, 3, "24:00:00"}, {14, 2, "1969-12-31 23:59:59.99"},
		{15, 0, "0044-03-15 12:00:00+00 BC"}, {16, -1, "24:00:00+01"}, {8, -1, "\xff\"\\"},
	}
	for _, s := range seeds {
		f.Add(s.typ, s.typmod, uint8(ValueText), []byte(s.data))
	}
	f.Add(uint8(9), int8(-1), uint8(ValueUnchangedToast), []byte(nil))
	f.Fuzz(func(t *testing.T, typ uint8, typmod int8, kind uint8, data []byte) {
		oid := fuzzTypes[int(typ)%len(fuzzTypes)]
		rel := &Relation{Schema: "public", Table: "t", Columns: []Column{{Name: "k", TypeOID: oid, TypeMod: int32(typmod), Key: true}}, KeyIndexes: []int{0}}
		v := Value{Kind: ValueKind(kind % 3), Data: data}
		ch := &Change{Op: OpCreate, Relation: rel, After: Tuple{v}}
		e := NewJSONEncoder(testJSONConfig)
		out, err := e.AppendValue([]byte("x"), e.Plan(rel), ch, time.UnixMilli(1))
		if err != nil {
			var ve *ValueError
			if !errors.As(err, &ve) || string(out) != "x" {
				t.Fatalf("error %v (%T), dst %q", err, err, out)
			}
		} else if !json.Valid(out[1:]) {
			t.Fatalf("oid %d %q -> invalid JSON %s", oid, data, out[1:])
		}
		key, ok, err := e.AppendKey(nil, e.Plan(ch.Relation), ch)
		if err == nil && ok && !json.Valid(key) {
			t.Fatalf("oid %d %q -> invalid key %s", oid, data, key)
		}
	})
}
