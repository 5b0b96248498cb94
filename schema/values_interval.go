package schema

import (
	"errors"
	"math"
	"strconv"
)

// This file parses interval text (IntervalStyle=postgres) and writes the
// two forms Debezium emits for it.
//
// What Debezium does (PostgresValueConverter.convertInterval, checked
// against the sources): the text goes through pgjdbc's PGInterval, which
// splits it into int years, months, days, hours, minutes and a double
// seconds (wholeSeconds + microSeconds/1e6; a '-' before the time part
// negates hours, minutes and seconds). Postgres prints the months as
// months/12 years and months%12 mons, and the time as hours (not folded
// into days), minutes and seconds, each truncated toward zero with the
// sign of the whole.
//
//   - interval.handling.mode=numeric (default): io.debezium.time.MicroDuration,
//     INT64, MicroDuration.durationMicros with DAYS_PER_MONTH_AVG =
//     365.25/12 = 30.4375, computed in double:
//     days = (years*12 + months) * 30.4375 + days;
//     secs = ((days*24 + hours)*60 + minutes)*60 + seconds;
//     result = (long)(secs * 1e6), truncated toward zero and saturating.
//     The double seconds make it lose a microsecond now and then
//     ('1.003691 s' -> 1003690): intervalMicroDuration repeats the exact
//     double arithmetic, so it agrees with Debezium bit for bit.
//   - interval.handling.mode=string: io.debezium.time.Interval.toIsoString,
//     "P" + years + "Y" + months + "M" + days + "D" + "T" + hours + "H" +
//     minutes + "M" + seconds + "S", every field always present, each with
//     its own sign ("P-1Y-2M0DT-3H-4M-5.5S"; zero is "P0Y0M0DT0H0M0S").
//     seconds is BigDecimal.valueOf(double seconds) cut to 9 decimals
//     (RoundingMode.DOWN), then stripTrailingZeros().toPlainString(), so
//     it inherits the double's noise: '1.003691 s' -> "1.003690999".
//     Debezium releases before the 9-decimal change cut at 6 decimals
//     ("1.00369").
//
// Limits of Debezium that this code does not copy: PGInterval parses
// hours with Integer.parseInt, so an interval of more than 2147483647
// hours (about 245000 years) makes Debezium fail; here it is computed. The
// infinite intervals of Postgres 17 ("infinity", "-infinity") become 0 /
// "P0Y0M0DT0H0M0S" in Debezium (PGInterval finds no fields); parseInterval
// returns them as Postgres stores them (all fields at their maximum or
// minimum, see intervalInfinity) so that the caller can decide.

// errIntervalStyle is returned for interval text in another IntervalStyle.
var errIntervalStyle = errors.New(`interval is not in IntervalStyle postgres format ("1 year 2 mons 3 days 04:05:06"); set IntervalStyle to postgres for the replication and snapshot connections`)

// intervalInfinity reports whether an interval returned by parseInterval
// is Postgres 17's 'infinity' (1) or '-infinity' (-1), else 0.
func intervalInfinity(months, days int32, micros int64) int {
	switch {
	case months == math.MaxInt32 && days == math.MaxInt32 && micros == math.MaxInt64:
		return 1
	case months == math.MinInt32 && days == math.MinInt32 && micros == math.MinInt64:
		return -1
	}
	return 0
}

// parseInterval parses interval_out's text for IntervalStyle=postgres:
// "1 year 2 mons 3 days 04:05:06.789", "-1 days +02:03:00", "00:00:00",
// "-178000000 years", "1 day -00:00:01", "6 mons", "-1 years -2 mons
// +3 days -04:05:06". The fields come in the order year(s), mon(s),
// day(s), then the time [+-]HH:MM:SS[.ffffff] (hours may have more than
// two digits). The result is Postgres' own representation: months, days
// and microseconds, each with its own sign. The other IntervalStyles
// ("@ 1 year" postgres_verbose, "1-2" sql_standard, "P1Y2M" iso_8601)
// are errIntervalStyle.
func parseInterval(s []byte) (months int32, days int32, micros int64, err error) {
	switch string(s) {
	case "infinity":
		return math.MaxInt32, math.MaxInt32, math.MaxInt64, nil
	case "-infinity":
		return math.MinInt32, math.MinInt32, math.MinInt64, nil
	}
	if len(s) == 0 {
		return 0, 0, 0, errSyntax
	}
	if s[0] == '@' || s[0] == 'P' || looksSQLStandard(s) {
		return 0, 0, 0, errIntervalStyle
	}
	var years, mons, dd int64
	stage := 0 // fields seen so far: 1 years, 2 mons, 3 days, 4 time
	i := 0
	for i < len(s) {
		if i > 0 {
			if s[i] != ' ' || stage == 4 {
				return 0, 0, 0, errSyntax
			}
			i++
		}
		// A signed number, then either ':' (the time) or " unit".
		j := i
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k == j {
			return 0, 0, 0, errSyntax
		}
		if k < len(s) && s[k] == ':' {
			us, err := parseIntervalTime(s[i:])
			if err != nil {
				return 0, 0, 0, err
			}
			micros = us
			stage = 4
			break // the time part ends the text
		}
		num := s[i:k]
		if num[0] == '+' {
			num = num[1:]
		}
		if k == len(s) || s[k] != ' ' {
			return 0, 0, 0, errSyntax
		}
		u := k + 1
		e := u
		for e < len(s) && s[e] != ' ' {
			e++
		}
		unit := string(s[u:e])
		var next int
		var lo, hi int64 = math.MinInt32, math.MaxInt32
		switch unit {
		case "year", "years":
			next = 1
		case "mon", "mons":
			next = 2
		case "day", "days":
			next = 3
		default:
			return 0, 0, 0, errSyntax
		}
		if next <= stage {
			return 0, 0, 0, errSyntax
		}
		v, err := parseInt(num, lo, hi)
		if err != nil {
			return 0, 0, 0, err
		}
		switch next {
		case 1:
			years = v
		case 2:
			mons = v
		case 3:
			dd = v
		}
		stage = next
		i = e
	}
	m := years*12 + mons
	if m < math.MinInt32 || m > math.MaxInt32 {
		return 0, 0, 0, errRange
	}
	return int32(m), int32(dd), micros, nil
}

// looksSQLStandard reports a '-' right after a digit ("1-2", "-1-2
// +3 4:05:06"), which only IntervalStyle sql_standard prints.
func looksSQLStandard(s []byte) bool {
	for i := 1; i < len(s); i++ {
		if s[i] == '-' && isDigit(s[i-1]) {
			return true
		}
	}
	return false
}

// parseIntervalTime parses the time part of an interval, [+-]H+:MM:SS and
// an optional fraction of 1 to 6 digits, into signed microseconds.
func parseIntervalTime(s []byte) (int64, error) {
	neg := false
	i := 0
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		i++
	}
	var h uint64
	start := i
	for ; i < len(s) && isDigit(s[i]); i++ {
		if h > (math.MaxUint64-9)/10 {
			return 0, errRange
		}
		h = h*10 + uint64(s[i]-'0')
	}
	if i == start || i+6 > len(s) || s[i] != ':' || s[i+3] != ':' {
		return 0, errSyntax
	}
	mi, ok1 := twoDigits(s, i+1)
	se, ok2 := twoDigits(s, i+4)
	if !ok1 || !ok2 {
		return 0, errSyntax
	}
	if mi > 59 || se > 59 {
		return 0, errClock
	}
	i += 6
	var frac uint64
	if i < len(s) {
		if s[i] != '.' {
			return 0, errSyntax
		}
		i++
		n := len(s) - i
		if n == 0 {
			return 0, errSyntax
		}
		if n > 6 {
			return 0, errFraction
		}
		for ; i < len(s); i++ {
			if !isDigit(s[i]) {
				return 0, errSyntax
			}
			frac = frac*10 + uint64(s[i]-'0')
		}
		frac *= uint64(pow10[6-n])
	}
	const usPerHour = 3600 * microsPerSecond
	if h > (1<<63)/usPerHour {
		return 0, errRange
	}
	mag := h*usPerHour + uint64(mi)*60*microsPerSecond + uint64(se)*microsPerSecond + frac
	switch {
	case !neg && mag <= math.MaxInt64:
		return int64(mag), nil
	case neg && mag <= 1<<63:
		return int64(-mag), nil // -(1<<63) wraps to MinInt64, as wanted
	}
	return 0, errRange
}

// intervalFields splits an interval the way Postgres prints it and
// PGInterval reads it back: years and months from the month count, hours,
// minutes, whole seconds and microseconds from the time, each truncated
// toward zero and carrying the sign of its source.
func intervalFields(months int32, micros int64) (years, mons int32, hours, minutes, secs, us int64) {
	years, mons = months/12, months%12
	hours = micros / (3600 * microsPerSecond)
	rem := micros % (3600 * microsPerSecond)
	minutes = rem / (60 * microsPerSecond)
	rem %= 60 * microsPerSecond
	return years, mons, hours, minutes, rem / microsPerSecond, rem % microsPerSecond
}

// pgIntervalSeconds is PGInterval.getSeconds(): wholeSeconds +
// (double) microSeconds / 1e6.
func pgIntervalSeconds(secs, us int64) float64 {
	return float64(secs) + float64(us)/1e6
}

// daysPerMonthAvg is MicroDuration.DAYS_PER_MONTH_AVG, 365.25 / 12.
const daysPerMonthAvg = 365.25 / 12.0

// intervalMicroDuration is Debezium's io.debezium.time.MicroDuration for
// interval.handling.mode=numeric: MicroDuration.durationMicros(years,
// months, days, hours, minutes, seconds, DAYS_PER_MONTH_AVG) on the fields
// PGInterval reads from Postgres' text. Each step is rounded to float64 as
// in Java (the explicit conversions keep the compiler from fusing a
// multiply and an add), and the final (long) cast truncates toward zero
// and saturates.
func intervalMicroDuration(months, days int32, micros int64) int64 {
	years, mons, hours, minutes, secs, us := intervalFields(months, micros)
	// Java: ((years * 12) + months) * daysPerMonthAvg + days, the first
	// product in int arithmetic (exact here).
	nd := float64(float64(years*12+mons)*daysPerMonthAvg) + float64(days)
	ns := float64(float64(float64(float64(float64(nd*24)+float64(hours))*60)+float64(minutes))*60) + pgIntervalSeconds(secs, us)
	return javaDoubleToLong(float64(ns * 1e6))
}

// javaDoubleToLong is Java's (long) cast: NaN is 0, out-of-range values
// saturate, the rest truncate toward zero.
func javaDoubleToLong(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= 9223372036854775807.0: // 2^63, the first double past MaxInt64
		return math.MaxInt64
	case f <= -9223372036854775808.0:
		return math.MinInt64
	}
	return int64(f)
}

// appendISOInterval appends Debezium's io.debezium.time.Interval text for
// interval.handling.mode=string: Interval.toIsoString(years, months, days,
// hours, minutes, BigDecimal.valueOf(seconds)) =
// "P<y>Y<m>M<d>DT<h>H<min>M<s>S" with every field written, e.g.
// "P1Y2M3DT4H5M6.789S", "P0Y0M-1DT2H3M0S", "P0Y0M0DT0H0M0S". The seconds
// are formatted as Java does: the shortest decimal of the double (what
// Double.toString gives on JDK 19 and later), cut to 9 decimals toward
// zero, trailing zeros removed.
func appendISOInterval(dst []byte, months, days int32, micros int64) []byte {
	years, mons, hours, minutes, secs, us := intervalFields(months, micros)
	dst = append(dst, 'P')
	dst = strconv.AppendInt(dst, int64(years), 10)
	dst = append(dst, 'Y')
	dst = strconv.AppendInt(dst, int64(mons), 10)
	dst = append(dst, 'M')
	dst = strconv.AppendInt(dst, int64(days), 10)
	dst = append(dst, 'D', 'T')
	dst = strconv.AppendInt(dst, hours, 10)
	dst = append(dst, 'H')
	dst = strconv.AppendInt(dst, minutes, 10)
	dst = append(dst, 'M')
	dst = appendJavaSeconds(dst, pgIntervalSeconds(secs, us))
	return append(dst, 'S')
}

// appendJavaSeconds appends BigDecimal.valueOf(f) with its scale cut to 9
// (RoundingMode.DOWN), stripTrailingZeros().toPlainString().
func appendJavaSeconds(dst []byte, f float64) []byte {
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
	dot := -1
	for i := start; i < len(dst); i++ {
		if dst[i] == '.' {
			dot = i
			break
		}
	}
	if dot < 0 {
		if string(dst[start:]) == "-0" {
			dst = append(dst[:start], '0')
		}
		return dst
	}
	if len(dst) > dot+10 {
		dst = dst[:dot+10]
	}
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if dst[len(dst)-1] == '.' {
		dst = dst[:len(dst)-1]
	}
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}
