package schema

import "math"

// This file parses the text forms Postgres sends for date and time types
// with DateStyle=ISO (the session setting the replication and copy
// connections use). The parsers are pure, allocation-free and strict:
// malformed text is an error, never a guess. time.Parse is
// not used: it is slow, allocates, and knows neither "BC", years past 9999,
// "24:00:00" nor "infinity".
//
// Dates are proleptic Gregorian with astronomical year numbering, as in
// Postgres and java.time: "0001-01-01 BC" is year 0.

// Infinity marks Postgres' special values 'infinity' and '-infinity' of
// date, timestamp and timestamptz.
type Infinity int8

// The special values; Finite means an ordinary value.
const (
	NegInfinity Infinity = -1
	Finite      Infinity = 0
	PosInfinity Infinity = 1
)

const (
	microsPerSecond = 1_000_000
	microsPerDay    = 86_400 * microsPerSecond
	// maxOffsetSeconds is the largest UTC offset Postgres accepts
	// (TZDISP_LIMIT, 15:59:59).
	maxOffsetSeconds = 15*3600 + 59*60 + 59
	// maxTimestampDays bounds |days since 1970-01-01| of a timestamp so that
	// days*microsPerDay cannot overflow int64; the sum with the time of day
	// and the offset is checked separately. Postgres timestamps reach
	// 294276 AD, a little past what int64 microseconds since 1970 can hold
	// (294247 AD): those few values are a range error.
	maxTimestampDays = 106_751_990
	maxYearDigits    = 9
)

// special reports whether s is 'infinity' or '-infinity'.
func special(s []byte) Infinity {
	switch string(s) {
	case "infinity":
		return PosInfinity
	case "-infinity":
		return NegInfinity
	}
	return Finite
}

// ParseDate parses a date ("2024-01-02", "0044-03-15 BC", "10000-01-01",
// "infinity") into days since 1970-01-01.
func ParseDate(s []byte) (days int32, inf Infinity, err error) {
	if inf = special(s); inf != Finite {
		return 0, inf, nil
	}
	y, m, d, i, err := parseYMD(s, 0)
	if err != nil {
		return 0, Finite, err
	}
	if y, i, err = parseEra(s, i, y); err != nil {
		return 0, Finite, err
	}
	if i != len(s) {
		return 0, Finite, errSyntax
	}
	if err = checkDay(y, m, d); err != nil {
		return 0, Finite, err
	}
	n := daysFromCivil(y, m, d)
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, Finite, errRange
	}
	return int32(n), Finite, nil
}

// ParseTime parses a time of day ("13:51:30", "13:51:30.123456",
// "24:00:00") into microseconds since midnight, 0 to 86,400,000,000.
func ParseTime(s []byte) (micros int64, err error) {
	micros, i, err := parseClock(s, 0)
	if err != nil {
		return 0, err
	}
	if i != len(s) {
		return 0, errSyntax
	}
	return micros, nil
}

// ParseTimetz parses a time with time zone ("13:51:30.123+02",
// "01:02:03-05:30:15") into the local time of day in microseconds and the
// UTC offset in seconds east of Greenwich.
func ParseTimetz(s []byte) (micros int64, offset int32, err error) {
	micros, i, err := parseClock(s, 0)
	if err != nil {
		return 0, 0, err
	}
	offset, i, err = parseOffset(s, i)
	if err != nil {
		return 0, 0, err
	}
	if i != len(s) {
		return 0, 0, errSyntax
	}
	return micros, offset, nil
}

// ParseTimestamp parses a timestamp without time zone
// ("2024-01-02 03:04:05.123456", "0001-01-01 00:00:00 BC", "infinity") into
// microseconds since 1970-01-01 00:00:00, read as UTC.
func ParseTimestamp(s []byte) (micros int64, inf Infinity, err error) {
	return parseTimestamp(s, false)
}

// ParseTimestamptz parses a timestamp with time zone
// ("2024-01-02 03:04:05.123456+00", "1900-01-01 00:00:00+00:53:28",
// "0044-03-15 12:00:00+00 BC", "infinity") into microseconds since the Unix
// epoch, in UTC. Any offset Postgres can print is accepted.
func ParseTimestamptz(s []byte) (micros int64, inf Infinity, err error) {
	return parseTimestamp(s, true)
}

func parseTimestamp(s []byte, withZone bool) (int64, Infinity, error) {
	if inf := special(s); inf != Finite {
		return 0, inf, nil
	}
	y, m, d, i, err := parseYMD(s, 0)
	if err != nil {
		return 0, Finite, err
	}
	if i >= len(s) || s[i] != ' ' {
		return 0, Finite, errSyntax
	}
	clock, i, err := parseClock(s, i+1)
	if err != nil {
		return 0, Finite, err
	}
	var offset int32
	if withZone {
		if offset, i, err = parseOffset(s, i); err != nil {
			return 0, Finite, err
		}
	}
	if y, i, err = parseEra(s, i, y); err != nil {
		return 0, Finite, err
	}
	if i != len(s) {
		return 0, Finite, errSyntax
	}
	if err = checkDay(y, m, d); err != nil {
		return 0, Finite, err
	}
	days := daysFromCivil(y, m, d)
	if days > maxTimestampDays || days < -maxTimestampDays {
		return 0, Finite, errRange
	}
	micros, ok := addChecked(days*microsPerDay, clock)
	if ok {
		micros, ok = addChecked(micros, -int64(offset)*microsPerSecond)
	}
	if !ok {
		return 0, Finite, errRange
	}
	return micros, Finite, nil
}

// parseYMD parses "Y...Y-MM-DD" at s[i:]: at least 4 year digits (Postgres
// pads to 4), a year from 1 (the era is applied later), month 1-12 and day
// 1-31 (checked against the month by checkDay once the era is known).
func parseYMD(s []byte, i int) (y, m, d int64, next int, err error) {
	start := i
	for i < len(s) && isDigit(s[i]) {
		if i-start == maxYearDigits {
			return 0, 0, 0, 0, errYear
		}
		y = y*10 + int64(s[i]-'0')
		i++
	}
	if i-start < 4 {
		return 0, 0, 0, 0, errSyntax
	}
	if y == 0 {
		return 0, 0, 0, 0, errYear // there is no year 0 AD or BC
	}
	if i+6 > len(s) || s[i] != '-' || s[i+3] != '-' {
		return 0, 0, 0, 0, errSyntax
	}
	mm, ok1 := twoDigits(s, i+1)
	dd, ok2 := twoDigits(s, i+4)
	if !ok1 || !ok2 {
		return 0, 0, 0, 0, errSyntax
	}
	if mm < 1 || mm > 12 {
		return 0, 0, 0, 0, errMonth
	}
	if dd < 1 || dd > 31 {
		return 0, 0, 0, 0, errDay
	}
	return y, int64(mm), int64(dd), i + 6, nil
}

// parseEra consumes an optional " BC" at s[i:] and turns the year into an
// astronomical year (1 BC is year 0).
func parseEra(s []byte, i int, y int64) (int64, int, error) {
	if i == len(s) {
		return y, i, nil
	}
	if len(s)-i == 3 && s[i] == ' ' && s[i+1] == 'B' && s[i+2] == 'C' {
		return 1 - y, i + 3, nil
	}
	return 0, 0, errSyntax
}

// checkDay checks the day against the month of astronomical year y.
func checkDay(y, m, d int64) error {
	if d > int64(daysIn(y, m)) {
		return errDay
	}
	return nil
}

// parseClock parses "HH:MM:SS[.ffffff]" at s[i:] into microseconds since
// midnight. 24:00:00 is valid (Postgres allows it for time and timetz).
func parseClock(s []byte, i int) (micros int64, next int, err error) {
	if i+8 > len(s) || s[i+2] != ':' || s[i+5] != ':' {
		return 0, 0, errSyntax
	}
	hh, ok1 := twoDigits(s, i)
	mi, ok2 := twoDigits(s, i+3)
	ss, ok3 := twoDigits(s, i+6)
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, errSyntax
	}
	i += 8
	var frac int64
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && isDigit(s[i]) {
			if i-start == 6 {
				return 0, 0, errFraction
			}
			frac = frac*10 + int64(s[i]-'0')
			i++
		}
		n := i - start
		if n == 0 {
			return 0, 0, errSyntax
		}
		frac *= pow10[6-n]
	}
	if hh > 24 || mi > 59 || ss > 59 || (hh == 24 && (mi != 0 || ss != 0 || frac != 0)) {
		return 0, 0, errClock
	}
	micros = (int64(hh)*3600+int64(mi)*60+int64(ss))*microsPerSecond + frac
	return micros, i, nil
}

// parseOffset parses a UTC offset "+HH[:MM[:SS]]" at s[i:] into seconds
// east of Greenwich.
func parseOffset(s []byte, i int) (secs int32, next int, err error) {
	if i+3 > len(s) || (s[i] != '+' && s[i] != '-') {
		return 0, 0, errOffset
	}
	neg := s[i] == '-'
	hh, ok := twoDigits(s, i+1)
	if !ok {
		return 0, 0, errOffset
	}
	i += 3
	total := hh * 3600
	for unit := 60; unit >= 1 && i < len(s) && s[i] == ':'; unit /= 60 {
		v, ok := twoDigits(s, i+1)
		if !ok || v > 59 {
			return 0, 0, errOffset
		}
		total += v * unit
		i += 3
	}
	if total > maxOffsetSeconds {
		return 0, 0, errOffset
	}
	if neg {
		total = -total
	}
	return int32(total), i, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// twoDigits reads exactly two decimal digits at s[i:].
func twoDigits(s []byte, i int) (int, bool) {
	if i+2 > len(s) || !isDigit(s[i]) || !isDigit(s[i+1]) {
		return 0, false
	}
	return int(s[i]-'0')*10 + int(s[i+1]-'0'), true
}

var pow10 = [...]int64{1, 10, 100, 1000, 10000, 100000, 1000000}

// addChecked returns a+b and whether it did not overflow.
func addChecked(a, b int64) (int64, bool) {
	c := a + b
	return c, (c > a) == (b > 0)
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

var monthDays = [13]int8{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func daysIn(y, m int64) int {
	if m == 2 && isLeap(y) {
		return 29
	}
	return int(monthDays[m])
}

// floorDiv divides rounding toward negative infinity (Go's / truncates).
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date with astronomical year y (Howard Hinnant's days_from_civil).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400                     // [0, 399]
	mp := (m + 9) % 12                     // March = 0
	doy := (153*mp+2)/5 + d - 1            // [0, 365]
	doe := yoe*365 + yoe/4 - yoe/100 + doy // [0, 146096]
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}
