package schema

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	tests := []struct {
		in   string
		days int32
		inf  Infinity
		err  error
	}{
		{in: "1970-01-01", days: 0},
		{in: "1969-12-31", days: -1},
		{in: "2016-11-04", days: 17109},
		{in: "2000-02-29", days: 11016},
		{in: "2016-02-29", days: 16860},
		{in: "9999-12-31", days: 2932896},
		{in: "10000-01-01", days: 2932897},
		{in: "5874897-12-31", days: 2145042905}, // Postgres' last date
		{in: "0001-01-01", days: -719162},
		{in: "0001-12-31 BC", days: -719163}, // 1 BC is astronomical year 0
		{in: "0001-01-01 BC", days: -719528},
		{in: "0001-02-29 BC", days: -719469},  // year 0 is a leap year
		{in: "4714-11-24 BC", days: -2440588}, // Julian day 0, Postgres' first date
		{in: "infinity", inf: PosInfinity},
		{in: "-infinity", inf: NegInfinity},
		// Malformed.
		{in: "", err: errSyntax},
		{in: "2016-11-4", err: errSyntax},
		{in: "16-11-04", err: errSyntax},
		{in: "2016/11/04", err: errSyntax},
		{in: "2016-11-04 AD", err: errSyntax},
		{in: "2016-11-04 BC ", err: errSyntax},
		{in: "2016-11-04 ", err: errSyntax},
		{in: "2016-11-04x", err: errSyntax},
		{in: "-2016-11-04", err: errSyntax},
		{in: "2016-1a-04", err: errSyntax},
		{in: "Infinity", err: errSyntax},
		{in: "0000-01-01", err: errYear},
		{in: "1234567890-01-01", err: errYear},
		{in: "2016-00-04", err: errMonth},
		{in: "2016-13-04", err: errMonth},
		{in: "2016-11-00", err: errDay},
		{in: "2016-11-31", err: errDay},
		{in: "2015-02-29", err: errDay},
		{in: "1900-02-29", err: errDay},
		{in: "0002-02-29 BC", err: errDay}, // astronomical year -1
		{in: "999999999-12-31", err: errRange},
	}
	for _, tt := range tests {
		days, inf, err := ParseDate([]byte(tt.in))
		if !errors.Is(err, tt.err) || days != tt.days || inf != tt.inf {
			t.Errorf("ParseDate(%q) = %d, %d, %v; want %d, %d, %v", tt.in, days, inf, err, tt.days, tt.inf, tt.err)
		}
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in     string
		micros int64
		err    error
	}{
		{in: "00:00:00", micros: 0},
		{in: "13:51:30", micros: 49890000000},
		{in: "13:51:30.1", micros: 49890100000},
		{in: "13:51:30.123456", micros: 49890123456},
		{in: "13:51:30.000001", micros: 49890000001},
		{in: "23:59:59.999999", micros: 86399999999},
		{in: "24:00:00", micros: 86400000000},
		{in: "24:00:00.000000", micros: 86400000000},
		// Malformed.
		{in: "", err: errSyntax},
		{in: "12:00", err: errSyntax},
		{in: "1:00:00", err: errSyntax},
		{in: "12:00:00.", err: errSyntax},
		{in: "12:00:00,5", err: errSyntax},
		{in: "12:00:00 ", err: errSyntax},
		{in: "12:00:00+01", err: errSyntax},
		{in: "12-00-00", err: errSyntax},
		{in: "12:0a:00", err: errSyntax},
		{in: "12:00:00.1234567", err: errFraction},
		{in: "24:00:01", err: errClock},
		{in: "24:00:00.000001", err: errClock},
		{in: "25:00:00", err: errClock},
		{in: "12:60:00", err: errClock},
		{in: "12:00:60", err: errClock},
	}
	for _, tt := range tests {
		us, err := ParseTime([]byte(tt.in))
		if !errors.Is(err, tt.err) || us != tt.micros {
			t.Errorf("ParseTime(%q) = %d, %v; want %d, %v", tt.in, us, err, tt.micros, tt.err)
		}
	}
}

func TestParseTimetz(t *testing.T) {
	tests := []struct {
		in     string
		micros int64
		off    int32
		err    error
	}{
		{in: "13:51:30+00", micros: 49890000000},
		{in: "13:51:30.123789+02", micros: 49890123789, off: 7200},
		{in: "13:51:30-05:30", micros: 49890000000, off: -19800},
		{in: "13:51:30+05:30:15", micros: 49890000000, off: 19815},
		{in: "24:00:00-15:59:59", micros: 86400000000, off: -57599},
		// Malformed.
		{in: "13:51:30", err: errOffset},
		{in: "13:51:30Z", err: errOffset},
		{in: "13:51:30+1", err: errOffset},
		{in: "13:51:30+16", err: errOffset},
		{in: "13:51:30+01:60", err: errOffset},
		{in: "13:51:30+01:00:60", err: errOffset},
		{in: "13:51:30+01:0", err: errOffset},
		{in: "13:51:30+01:00:00:00", err: errSyntax},
		{in: "13:51:30+0100", err: errSyntax},
	}
	for _, tt := range tests {
		us, off, err := ParseTimetz([]byte(tt.in))
		if !errors.Is(err, tt.err) || us != tt.micros || off != tt.off {
			t.Errorf("ParseTimetz(%q) = %d, %d, %v; want %d, %d, %v", tt.in, us, off, err, tt.micros, tt.off, tt.err)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	tests := []struct {
		in     string
		micros int64
		inf    Infinity
		err    error
	}{
		{in: "1970-01-01 00:00:00", micros: 0},
		{in: "2016-11-04 13:51:30.123456", micros: 1478267490123456},
		{in: "1936-10-25 22:10:12.608", micros: -1047174587392000},
		{in: "1969-12-31 23:59:59.999999", micros: -1},
		{in: "2024-01-01 24:00:00", micros: 1704153600000000}, // = next midnight
		{in: "21016-11-04 13:51:30.123456", micros: 601060312290123456},
		{in: "294247-01-01 23:59:59.999999", micros: 9223371331199999999}, // Debezium's ts_max
		{in: "0001-01-01 00:00:00 BC", micros: -62167219200000000},
		{in: "4714-11-24 00:00:00 BC", micros: -210866803200000000},
		{in: "infinity", inf: PosInfinity},
		{in: "-infinity", inf: NegInfinity},
		// Malformed.
		{in: "", err: errSyntax},
		{in: "2016-11-04", err: errSyntax},
		{in: "2016-11-04  13:51:30", err: errSyntax},
		{in: "2016-11-04T13:51:30", err: errSyntax},
		{in: "2016-11-04 13:51", err: errSyntax},
		{in: "2016-11-04 13:51:30+00", err: errSyntax},
		{in: "2016-11-04 13:51:30 bc", err: errSyntax},
		{in: "2016-02-30 13:51:30", err: errDay},
		{in: "2016-11-04 25:51:30", err: errClock},
		{in: "294277-01-01 00:00:00", err: errRange},
		{in: "300000-01-01 00:00:00", err: errRange},
		{in: "5874897-12-31 00:00:00", err: errRange},
	}
	for _, tt := range tests {
		us, inf, err := ParseTimestamp([]byte(tt.in))
		if !errors.Is(err, tt.err) || us != tt.micros || inf != tt.inf {
			t.Errorf("ParseTimestamp(%q) = %d, %d, %v; want %d, %d, %v", tt.in, us, inf, err, tt.micros, tt.inf, tt.err)
		}
	}
}

func TestParseTimestamptz(t *testing.T) {
	tests := []struct {
		in     string
		micros int64
		inf    Infinity
		err    error
	}{
		{in: "1970-01-01 00:00:00+00", micros: 0},
		{in: "2016-11-04 13:51:30.123456+02", micros: 1478260290123456},
		{in: "2016-11-04 13:51:30.123456-05:30", micros: 1478287290123456},
		{in: "1900-01-01 00:00:00+00:53:28", micros: -2208992008000000},
		{in: "0044-03-15 12:00:00+00 BC", micros: -63517780800000000},
		{in: "294247-01-02 02:00:00+03", micros: 9223371327600000000},
		{in: "infinity", inf: PosInfinity},
		{in: "-infinity", inf: NegInfinity},
		// Malformed.
		{in: "2016-11-04 13:51:30", err: errOffset},
		{in: "2016-11-04 13:51:30 BC", err: errOffset},
		{in: "2016-11-04 13:51:30+00 BC BC", err: errSyntax},
		{in: "2016-11-04 13:51:30+24", err: errOffset},
		{in: "2016-11-04 13:51:30.1234567+00", err: errFraction},
		{in: "294247-01-09 23:00:00-15", err: errRange}, // past int64 µs only once the offset is applied
		{in: "294247-01-10 00:00:00+00", err: errRange},
	}
	for _, tt := range tests {
		us, inf, err := ParseTimestamptz([]byte(tt.in))
		if !errors.Is(err, tt.err) || us != tt.micros || inf != tt.inf {
			t.Errorf("ParseTimestamptz(%q) = %d, %d, %v; want %d, %d, %v", tt.in, us, inf, err, tt.micros, tt.inf, tt.err)
		}
	}
}

// TestCivilMatchesTimePackage cross-checks the calendar arithmetic against
// package time for the years both know (time uses the proleptic Gregorian
// calendar with astronomical years too).
func TestCivilMatchesTimePackage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		y := int64(r.IntN(20000) - 5000)
		m := int64(r.IntN(12) + 1)
		d := int64(r.IntN(daysIn(y, m)) + 1)
		want := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC).Unix() / 86400
		got := daysFromCivil(y, m, d)
		if got != want {
			t.Fatalf("daysFromCivil(%d, %d, %d) = %d, want %d", y, m, d, got, want)
		}
		if y2, m2, d2 := civilFromDays(got); y2 != y || m2 != m || d2 != d {
			t.Fatalf("civilFromDays(%d) = %d-%d-%d, want %d-%d-%d", got, y2, m2, d2, y, m, d)
		}
	}
}

func TestAppendZonedTimestamp(t *testing.T) {
	tests := []struct {
		micros int64
		prec   int
		want   string
	}{
		{0, 6, "1970-01-01T00:00:00.000000Z"},
		{1478260290123456, 6, "2016-11-04T11:51:30.123456Z"},
		{1478260290123000, 3, "2016-11-04T11:51:30.123Z"},
		{1478260290120000, 3, "2016-11-04T11:51:30.120Z"},
		{1478260290000000, 0, "2016-11-04T11:51:30Z"},
		{1478260290100000, 0, "2016-11-04T11:51:30.1Z"}, // more digits than the precision: kept
		{1478260290123456, 2, "2016-11-04T11:51:30.123456Z"},
		{-1, 6, "1969-12-31T23:59:59.999999Z"},
		{601060287090123456, 6, "+21016-11-04T06:51:30.123456Z"},
		{-63517780800000000, 6, "-0043-03-15T12:00:00.000000Z"},
		{-62167219200000000, 6, "0000-01-01T00:00:00.000000Z"},
		{253402300799999999, 6, "9999-12-31T23:59:59.999999Z"},
		{9223371331199999999, 6, "+294247-01-01T23:59:59.999999Z"}, // Debezium's tz_max
	}
	for _, tt := range tests {
		if got := string(appendZonedTimestamp(nil, tt.micros, tt.prec)); got != tt.want {
			t.Errorf("appendZonedTimestamp(%d, %d) = %s, want %s", tt.micros, tt.prec, got, tt.want)
		}
	}
}

func TestDecodeByteaHex(t *testing.T) {
	tests := []struct {
		in   string
		want string
		err  error
	}{
		{in: `\x`, want: ""},
		{in: `\x00`, want: "\x00"},
		{in: `\x0a0BfF`, want: "\x0a\x0b\xff"},
		{in: "", err: errByteaFormat},
		{in: `\`, err: errByteaFormat},
		{in: `x0a`, err: errByteaFormat},
		{in: `\X0a`, err: errByteaFormat},
		{in: `abc\000`, err: errByteaFormat},
		{in: `\x0`, err: errByteaHex},
		{in: `\x0g`, err: errByteaHex},
		{in: `\x 0a`, err: errByteaHex},
		{in: `\x0a\x`, err: errByteaHex},
	}
	for _, tt := range tests {
		got, err := DecodeByteaHex([]byte("keep"), []byte(tt.in))
		if !errors.Is(err, tt.err) {
			t.Errorf("DecodeByteaHex(%q) error = %v, want %v", tt.in, err, tt.err)
			continue
		}
		want := "keep" + tt.want
		if string(got) != want {
			t.Errorf("DecodeByteaHex(%q) = %q, want %q (appended to dst, dst kept on error)", tt.in, got, want)
		}
	}
}
