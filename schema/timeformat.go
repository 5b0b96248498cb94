package schema

import "strconv"

// This file formats instants the way Debezium's io.debezium.time.ZonedTimestamp
// and ZonedTime do (java.time's ISO formatters, in UTC):
//
//   - the year has at least 4 digits; years past 9999 get a '+' sign and
//     years before 1 are negative ("-0044"), as ISO_LOCAL_DATE prints them;
//   - a timestamptz has exactly as many fractional digits as the column's
//     precision (Debezium passes the column scale as the fractional width,
//     so "2020-04-01T11:51:02.000000Z" for timestamptz(6)); precision 0
//     prints no fraction;
//   - a timetz uses ISO_OFFSET_TIME, which drops trailing zeros
//     ("11:51:30.123Z", "11:51:02Z");
//   - the offset is always "Z".

// appendZonedTimestamp appends the ISO-8601 UTC form of micros since the
// epoch with prec (0-6) fractional digits. Digits beyond prec that are not
// zero are kept rather than cut (Postgres never sends them).
func appendZonedTimestamp(dst []byte, micros int64, prec int) []byte {
	days := floorDiv(micros, microsPerDay)
	tod := micros - days*microsPerDay
	y, m, d := civilFromDays(days)
	dst = appendYear(dst, y)
	dst = append(dst, '-')
	dst = append2(dst, int(m))
	dst = append(dst, '-')
	dst = append2(dst, int(d))
	dst = append(dst, 'T')
	dst = appendClock(dst, tod, prec)
	return append(dst, 'Z')
}

// appendZonedTime appends "HH:MM:SS[.f]Z" for micros since midnight in UTC,
// trailing fractional zeros dropped. 86,400,000,000 prints as "24:00:00Z",
// as Debezium does (PostgresTimeBoundary).
func appendZonedTime(dst []byte, micros int64) []byte {
	dst = appendClock(dst, micros, 0)
	return append(dst, 'Z')
}

// appendClock appends "HH:MM:SS" and at least minFrac fractional digits.
func appendClock(dst []byte, tod int64, minFrac int) []byte {
	frac := tod % microsPerSecond
	secs := tod / microsPerSecond
	dst = append2(dst, int(secs/3600))
	dst = append(dst, ':')
	dst = append2(dst, int(secs/60%60))
	dst = append(dst, ':')
	dst = append2(dst, int(secs%60))
	return appendFraction(dst, frac, minFrac)
}

// appendFraction appends ".ffffff" cut to the digits that matter, but never
// fewer than minDigits; nothing when both are zero.
func appendFraction(dst []byte, frac int64, minDigits int) []byte {
	n := 6
	if frac == 0 {
		n = 0
	} else {
		for f := frac; f%10 == 0; f /= 10 {
			n--
		}
	}
	n = max(n, minDigits)
	if n == 0 {
		return dst
	}
	var buf [7]byte
	buf[0] = '.'
	for i := 6; i >= 1; i-- {
		buf[i] = byte('0' + frac%10)
		frac /= 10
	}
	return append(dst, buf[:n+1]...)
}

// appendYear prints a year like java.time's ISO_LOCAL_DATE
// (appendValue(YEAR, 4, 10, SignStyle.EXCEEDS_PAD)).
func appendYear(dst []byte, y int64) []byte {
	if y < 0 {
		dst = append(dst, '-')
		y = -y
	} else if y > 9999 {
		dst = append(dst, '+')
	}
	if y < 1000 {
		dst = append(dst, '0')
		if y < 100 {
			dst = append(dst, '0')
			if y < 10 {
				dst = append(dst, '0')
			}
		}
	}
	return strconv.AppendInt(dst, y, 10)
}

func append2(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/10), byte('0'+v%10))
}
