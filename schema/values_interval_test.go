package schema

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

// pgIntervalOut prints an interval the way Postgres' interval_out does
// with IntervalStyle=postgres (EncodeInterval, INTSTYLE_POSTGRES).
func pgIntervalOut(months, days int32, micros int64) string {
	switch intervalInfinity(months, days, micros) {
	case 1:
		return "infinity"
	case -1:
		return "-infinity"
	}
	var b strings.Builder
	isZero, isBefore := true, false
	part := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if !isZero {
			b.WriteByte(' ')
		}
		if isBefore && v > 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.FormatInt(v, 10))
		b.WriteString(" " + unit)
		if v != 1 {
			b.WriteByte('s')
		}
		isBefore, isZero = v < 0, false
	}
	part(int64(months/12), "year")
	part(int64(months%12), "mon")
	part(int64(days), "day")
	if isZero || micros != 0 {
		if !isZero {
			b.WriteByte(' ')
		}
		switch {
		case micros < 0:
			b.WriteByte('-')
		case isBefore:
			b.WriteByte('+')
		}
		abs := func(v int64) uint64 {
			if v < 0 {
				return uint64(-v)
			}
			return uint64(v)
		}
		h := abs(micros / 3600e6)
		rem := micros % 3600e6
		m := abs(rem / 60e6)
		rem %= 60e6
		sec, frac := abs(rem/1e6), abs(rem%1e6)
		pad2 := func(v uint64) {
			if v < 10 {
				b.WriteByte('0')
			}
			b.WriteString(strconv.FormatUint(v, 10))
		}
		pad2(h)
		b.WriteByte(':')
		pad2(m)
		b.WriteByte(':')
		pad2(sec)
		if frac != 0 {
			f := strconv.FormatUint(frac+1e6, 10)[1:]
			b.WriteString("." + strings.TrimRight(f, "0"))
		}
	}
	return b.String()
}

func TestParseInterval(t *testing.T) {
	tests := []struct {
		in     string
		months int32
		days   int32
		micros int64
	}{
		{"00:00:00", 0, 0, 0},
		{"1 year 2 mons 3 days 04:05:06.789", 14, 3, 14706789000},
		{"-1 days +02:03:00", 0, -1, 7380000000},
		{"-178000000 years", -2136000000, 0, 0},
		{"1 day -00:00:01", 0, 1, -1000000},
		{"6 mons", 6, 0, 0},
		{"1 mon", 1, 0, 0},
		{"1 year", 12, 0, 0},
		{"-1 years -2 mons +3 days -04:05:06.5", -14, 3, -14706500000},
		{"1000:00:00", 0, 0, 3600e9},
		{"-00:00:00.000001", 0, 0, -1},
		{"2562047788:00:54.775807", 0, 0, math.MaxInt64},
		{"-2562047788:00:54.775808", 0, 0, math.MinInt64},
		{"178956970 years 7 mons", math.MaxInt32, 0, 0},
		{"-178956970 years -8 mons", math.MinInt32, 0, 0},
		{"2147483647 days", 0, math.MaxInt32, 0},
		{"3 days 00:00:00.1", 0, 3, 100000},
		{"infinity", math.MaxInt32, math.MaxInt32, math.MaxInt64},
		{"-infinity", math.MinInt32, math.MinInt32, math.MinInt64},
	}
	for _, tc := range tests {
		m, d, us, err := parseInterval([]byte(tc.in))
		if err != nil || m != tc.months || d != tc.days || us != tc.micros {
			t.Errorf("%q = %d, %d, %d, %v; want %d, %d, %d", tc.in, m, d, us, err, tc.months, tc.days, tc.micros)
			continue
		}
		if out := pgIntervalOut(m, d, us); out != tc.in && tc.in != "1000:00:00" {
			t.Errorf("%q prints back as %q", tc.in, out)
		}
	}
}

func TestParseIntervalErrors(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"", errSyntax},
		{"@ 1 year", errIntervalStyle},
		{"@ 0", errIntervalStyle},
		{"P1Y2M3DT4H5M6S", errIntervalStyle},
		{"1-2", errIntervalStyle},
		{"-1-2 +3 -4:05:06", errIntervalStyle},
		{"1 2:03:04", errSyntax},
		{"1 days 2 mons", errSyntax},
		{"1 day 1 day", errSyntax},
		{"1 days  00:00:00", errSyntax},
		{"1 days ", errSyntax},
		{" 1 day", errSyntax},
		{"1 fortnight", errSyntax},
		{"1days", errSyntax},
		{"1", errSyntax},
		{"day", errSyntax},
		{"+-1 day", errSyntax},
		{"00:60:00", errClock},
		{"00:00:60", errClock},
		{"00:00:00.1234567", errFraction},
		{"00:00:00.", errSyntax},
		{"00:00", errSyntax},
		{"0:0:0", errSyntax},
		{"04:05:06 1 day", errSyntax},
		{"00:00:00 00:00:00", errSyntax},
		{"2562047788:00:54.775808", errRange},
		{"-2562047788:00:54.775809", errRange},
		{"99999999999999999999:00:00", errRange},
		{"178956970 years 8 mons", errRange},
		{"2147483648 days", errRange},
	}
	for _, tc := range tests {
		if _, _, _, err := parseInterval([]byte(tc.in)); !errors.Is(err, tc.want) {
			t.Errorf("%q: err %v, want %v", tc.in, err, tc.want)
		}
	}
}

func TestIntervalMicroDuration(t *testing.T) {
	tests := []struct {
		months int32
		days   int32
		micros int64
		want   int64
	}{
		{0, 0, 0, 0},
		// Debezium's own test: 'P1Y2M3DT4H5M0S' is durationMicros(1, 2,
		// 3, 4, 5, 0, DAYS_PER_MONTH_AVG).
		{14, 3, 4*3600e6 + 5*60e6, 37091100000000},
		{14, 3, 14706789000, 37091106789000},
		{1, 0, 0, 2629800000000}, // 30.4375 days
		{12, 0, 0, 31557600000000},
		{0, -1, 7380000000, -79020000000},
		{-14, 3, -14706500000, -36572706500000},
		// 1.003691 s is 1.0036909999999999 as a double: Debezium's (long)
		// cast gives 1003690.
		{0, 0, 1003691, 1003690},
		{0, 0, 4003691, 4003691},
		{0, 0, -1, -1},
		{0, 0, math.MaxInt64, math.MaxInt64},
		{math.MaxInt32, math.MaxInt32, math.MaxInt64, math.MaxInt64},
		{math.MinInt32, math.MinInt32, math.MinInt64, math.MinInt64},
	}
	for _, tc := range tests {
		if got := intervalMicroDuration(tc.months, tc.days, tc.micros); got != tc.want {
			t.Errorf("(%d, %d, %d) = %d, want %d", tc.months, tc.days, tc.micros, got, tc.want)
		}
	}
}

func TestJavaDoubleToLong(t *testing.T) {
	for f, want := range map[float64]int64{
		0: 0, 1.9: 1, -1.9: -1, math.Inf(1): math.MaxInt64, math.Inf(-1): math.MinInt64,
		1e19: math.MaxInt64, -1e19: math.MinInt64, 9223372036854775807.0: math.MaxInt64,
		-9223372036854775808.0: math.MinInt64, 4611686018427387904.0: 1 << 62,
	} {
		if got := javaDoubleToLong(f); got != want {
			t.Errorf("%v = %d, want %d", f, got, want)
		}
	}
	if got := javaDoubleToLong(math.NaN()); got != 0 {
		t.Errorf("NaN = %d", got)
	}
}

func TestAppendISOInterval(t *testing.T) {
	tests := []struct {
		months int32
		days   int32
		micros int64
		want   string
	}{
		{0, 0, 0, "P0Y0M0DT0H0M0S"},
		{14, 3, 14706789000, "P1Y2M3DT4H5M6.789S"},
		{14, 3, 4*3600e6 + 5*60e6, "P1Y2M3DT4H5M0S"},
		{0, -1, 7380000000, "P0Y0M-1DT2H3M0S"},
		{-14, 3, -14706500000, "P-1Y-2M3DT-4H-5M-6.5S"},
		{-1, 0, 0, "P0Y-1M0DT0H0M0S"},
		{25, 0, 0, "P2Y1M0DT0H0M0S"},
		{0, 0, -1, "P0Y0M0DT0H0M-0.000001S"},
		{0, 0, -3600e6, "P0Y0M0DT-1H0M0S"},
		{0, 0, 59999999, "P0Y0M0DT0H0M59.999999S"},
		{0, 0, 3600e9, "P0Y0M0DT1000H0M0S"},
		// The double 1.0036909999999999 cut to 9 decimals.
		{0, 0, 1003691, "P0Y0M0DT0H0M1.003690999S"},
		{0, 0, math.MaxInt64, "P0Y0M0DT2562047788H0M54.775807S"},
		{math.MinInt32, 0, 0, "P-178956970Y-8M0DT0H0M0S"},
	}
	for _, tc := range tests {
		got := appendISOInterval([]byte("x"), tc.months, tc.days, tc.micros)
		if string(got) != "x"+tc.want {
			t.Errorf("(%d, %d, %d) = %q, want %q", tc.months, tc.days, tc.micros, got, tc.want)
		}
	}
}

func TestAppendJavaSeconds(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0", 6.789: "6.789", -6.5: "-6.5", 1e-6: "0.000001", 59.999999: "59.999999",
		1.0036909999999999: "1.003690999", 1.123456789123: "1.123456789", 2.0000000001: "2",
		-2.0000000001: "-2", 1.5e-10: "0",
	} {
		if got := string(appendJavaSeconds(nil, f)); got != want {
			t.Errorf("%v = %q, want %q", f, got, want)
		}
	}
}

func TestIntervalNoAllocs(t *testing.T) {
	in := []byte("-1 years -2 mons +3 days -04:05:06.5")
	dst := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		m, d, us, err := parseInterval(in)
		if err != nil {
			t.Fatal(err)
		}
		_ = intervalMicroDuration(m, d, us)
		dst = appendISOInterval(dst[:0], m, d, us)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run", allocs)
	}
}
