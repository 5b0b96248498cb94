package transform

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// TestDateFormatAsJava: what java.text.SimpleDateFormat (lenient, UTC, as
// TimestampConverter sets it: TimestampConverter.java:311-319) gives for
// these patterns and texts. The expected values were printed by
// SimpleDateFormat itself (OpenJDK 17.0.15 and Temurin 25, the same on
// both), with its default century starting 80 years before now.
func TestDateFormatAsJava(t *testing.T) {
	now := time.Date(2026, 12, 7, 6, 2, 0, 0, time.UTC)
	for _, c := range []struct {
		pattern, text string
		want          int64 // Date.getTime()
	}{
		// h is Calendar.HOUR: 12 is 0, 13 is kept (lenient), PM adds 12.
		{"yyyy-MM-dd hh:mm a", "2026-12-07 13:05 AM", 1796648700000},
		{"yyyy-MM-dd hh:mm a", "2026-12-07 12:05 AM", 1796601900000},
		{"yyyy-MM-dd hh:mm a", "2026-12-07 12:05 PM", 1796645100000},
		{"yyyy-MM-dd hh:mm a", "2026-12-07 13:05 PM", 1796691900000},
		// With H, a is read and does not count.
		{"yyyy-MM-dd HH:mm a", "2026-12-07 05:04 PM", 1796619840000},
		// Spaces before a field are skipped.
		{"yyyy-MM-dd HH:mm", "2026- 12-  7 05:04", 1796619840000},
		{"yyyy-MM-dd HH:mm", "2026-12-07  05:04", 1796619840000},
		// d and D: the later one decides; E is not checked.
		{"D yyyy-MM-dd", "341 2026-01-05", 1767571200000},
		{"yyyy-MM-dd D", "2026-01-05 341", 1796601600000},
		{"yyyy-MM D", "2026-01 341", 1796601600000},
		{"dd MMM yyyy EEE", "07 Dec 2026 Fri", 1796601600000},
		{"yyyy-MMM-dd", "2026-DECEMBER-05", 1796428800000},
		// Two-digit years: 1946-12-07 starts the century, so 46 is 2046
		// (1946-01-01 is before the start) and 47 is 1947.
		{"yy-MM-dd", "47-01-01", -725846400000},
		{"yy-MM-dd", "45-01-01", 2366841600000},
		{"yy-MM-dd", "46-01-01", 2398377600000},
		{"yy-MM-dd", "146-01-01", -57559939200000},
		{"y-MM-dd", "26-01-01", 1767225600000},
		{"H:m:s.SSS", "5:4:3.1234", 18244234},
		// The Julian calendar before 1582-10-15; the ten missing days
		// read as Julian dates (lenient).
		{"yyyy-MM-dd", "0001-01-01", -62135769600000},
		{"yyyy-MM-dd", "0000-01-01", -62167392000000},
		{"yyyy-MM-dd", "1000-02-29", -30604694400000},
		{"yyyy-MM-dd", "1582-02-29", -12238128000000},
		{"yyyy-MM-dd", "1582-10-04", -12219379200000},
		{"yyyy-MM-dd", "1582-10-05", -12219292800000},
		{"yyyy-MM-dd", "1582-10-14", -12218515200000},
		{"yyyy-MM-dd", "1582-10-15", -12219292800000},
	} {
		df, err := parseDateFormat(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		got, err := df.parse(c.text, now)
		if err != nil {
			t.Errorf("parse %q with %q: %v", c.text, c.pattern, err)
			continue
		}
		eq(t, fmt.Sprintf("parse %q with %q", c.text, c.pattern), millis(got), c.want)
	}
	df, err := parseDateFormat("yyyy-MM-dd HH:mm:ss.SSS EEE D yy")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ms   int64
		want string
	}{
		{-62135596800000, "0001-01-03 00:00:00.000 Mon 3 01"}, // 0001-01-01 proleptic Gregorian
		{-62135596800001, "0001-01-02 23:59:59.999 Sun 2 01"},
		{-62167219200000, "0001-01-03 00:00:00.000 Sat 3 01"}, // 1 BC
		{-62198755200000, "0002-01-03 00:00:00.000 Fri 3 02"}, // 2 BC
		{-100000000000000, "1200-02-26 14:13:20.000 Thu 57 00"},
		{-12219379200000, "1582-10-04 00:00:00.000 Thu 277 82"},
		{-12219292800001, "1582-10-04 23:59:59.999 Thu 277 82"},
		{-12219292800000, "1582-10-15 00:00:00.000 Fri 278 82"},
		{253402300800000, "10000-01-01 00:00:00.000 Sat 1 00"},
		{-1, "1969-12-31 23:59:59.999 Wed 365 69"},
	} {
		eq(t, fmt.Sprintf("format %d", c.ms), df.format(fromMillis(c.ms)), c.want)
	}
}

// TestDateFormatZonesAsJava: z, Z and X read a zone as SimpleDateFormat
// does (subParse, subParseNumericZone) and the offset moves the instant;
// the values and refusals are what OpenJDK 17.0.15 and Temurin 25 print.
// A zone name other than UTC/GMT (Java reads PST as -08:00) is refused
// here, loudly.
func TestDateFormatZonesAsJava(t *testing.T) {
	const refused = int64(math.MinInt64)
	now := time.Date(2026, 12, 7, 6, 2, 0, 0, time.UTC)
	for _, c := range []struct {
		pattern, text string
		want          int64
	}{
		{"HH:mmZ", "05:04Z", refused},
		{"HH:mmZ", "05:04+0130", 12840000},
		{"HH:mmZ", "05:04+00:00", refused},
		{"HH:mmZ", "05:04-0930", 52440000},
		{"HH:mmZ", "05:04GMT", 18240000},
		{"HH:mmZ", "05:04utc", 18240000},
		{"HH:mmZ", "05:04+2400", refused},
		{"HH:mmZ", "05:04+0060", refused},
		{"HH:mmX", "05:04Z", 18240000},
		{"HH:mmX", "05:04+01", 14640000},
		{"HH:mmX", "05:04-0130", 21840000}, // X reads -01; "30" is left over
		{"HH:mmX", "05:04+1", refused},
		{"HH:mmXX", "05:04+0130", 12840000},
		{"HH:mmXX", "05:04+01:30", refused},
		{"HH:mmXXX", "05:04+01:30", 12840000},
		{"HH:mmXXX", "05:04-0130", refused},
		{"HH:mmXXX", "05:04Z", 18240000},
		{"HH:mmX'h'", "05:04+01h", 14640000},
		{"HH:mmX'h'", "05:04+0130h", refused},
		{"HH:mm z", "05:04 GMT", 18240000},
		{"HH:mm z", "05:04 GMT+1:30", 12840000},
		{"HH:mm z", "05:04 GMT-01:30", 23640000},
		{"HH:mm z", "05:04 GMT+0130", refused},
		{"HH:mm z", "05:04 Coordinated Universal Time", 18240000},
		{"HH:mm z", "05:04 utc", 18240000},
		{"HH:mm z", "05:04 Z", refused},
		{"HH:mm z", "05:04 +0200", 11040000},
		{"yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2026-12-07T05:04:03.021+05:30", 1796600043021},
		{"yyyy-MM-dd'T'HH:mm:ssZ", "1582-10-15T00:30:00+0100", -12219294600000},
	} {
		df, err := parseDateFormat(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		got, err := df.parse(c.text, now)
		name := fmt.Sprintf("parse %q with %q", c.text, c.pattern)
		switch {
		case c.want == refused && err == nil:
			t.Errorf("%s = %d, want the error Java gives", name, millis(got))
		case c.want != refused && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.want != refused:
			eq(t, name, millis(got), c.want)
		}
	}
	// SimpleDateFormat("XXXX") throws "invalid ISO 8601 format: length=4".
	if _, err := parseDateFormat("HH:mmXXXX"); err == nil {
		t.Error("XXXX accepted")
	}
}

// TestDateFormatMoreLettersAsJava: G, L, u, k and K as SimpleDateFormat
// formats and parses them (OpenJDK 17.0.15, Locale en-US).
func TestDateFormatMoreLettersAsJava(t *testing.T) {
	df, err := parseDateFormat("G yyyy-LL-dd kk KK a u LLL LLLL uu")
	if err != nil {
		t.Fatal(err)
	}
	for ms, want := range map[int64]string{
		1796619843021:   "AD 2026-12-07 05 05 AM 1 Dec December 01",
		-62198755200000: "BC 0002-01-03 24 00 AM 5 Jan January 05",
		1796601600000:   "AD 2026-12-07 24 00 AM 1 Dec December 01",
		1796644800000:   "AD 2026-12-07 12 00 PM 1 Dec December 01",
		1796648400000:   "AD 2026-12-07 13 01 PM 1 Dec December 01",
	} {
		eq(t, fmt.Sprintf("format %d", ms), df.format(fromMillis(ms)), want)
	}
	now := time.Date(2026, 12, 7, 6, 2, 0, 0, time.UTC)
	for _, c := range []struct {
		pattern, text string
		want          int64
	}{
		{"G yyyy-MM-dd", "BC 0002-01-03", -62198755200000},
		{"G yyyy-MM-dd", "ad 2026-12-07", 1796601600000},
		{"yyyy-MM-dd G", "2026-12-07 BC", -126042134400000},
		{"yyyy-MM-dd kk:mm", "2026-12-07 24:05", 1796601900000},
		{"yyyy-MM-dd kk:mm", "2026-12-07 25:05", 1796691900000},
		{"yyyy-MM-dd KK:mm a", "2026-12-07 12:05 AM", 1796645100000},
		{"yyyy-MM-dd KK:mm a", "2026-12-07 11:05 PM", 1796684700000},
		{"yyyy-MM-dd KK:mm", "2026-12-07 05:05", 1796619900000},
		{"yyyy-LLL-dd", "2026-Dec-07", 1796601600000},
		{"yyyy-MM-dd u", "2026-12-07 3", 1796601600000},
		{"yyyy-MM-dd HH:mm KK a", "2026-12-07 05:04 03 PM", 1796655840000},
		{"yyyy-MM-dd KK a HH:mm", "2026-12-07 03 PM 05:04", 1796619840000},
	} {
		df, err := parseDateFormat(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		got, err := df.parse(c.text, now)
		if err != nil {
			t.Errorf("parse %q with %q: %v", c.text, c.pattern, err)
			continue
		}
		eq(t, fmt.Sprintf("parse %q with %q", c.text, c.pattern), millis(got), c.want)
	}
}
