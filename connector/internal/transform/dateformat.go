package transform

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// This file holds the part of Java's SimpleDateFormat that
// TimestampConverter's `format` uses, always in UTC as TimestampConverter
// sets it (TimestampConverter.java:311-319): the pattern letters G y M L
// d D E u a H k K h m s S z Z X and quoted text. A pattern with any other letter is
// refused when configured, never formatted approximately.

type dfItem struct {
	letter byte   // 0 for literal text
	count  int    // how many times the letter repeats
	text   string // literal text
}

type dateFormat struct {
	pattern string
	items   []dfItem
}

const dfLetters = "GyMLdDEuaHkKhmsSzZX"

func parseDateFormat(pattern string) (*dateFormat, error) {
	df := &dateFormat{pattern: pattern}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			// Quoted text; '' is a single quote, inside or outside quotes.
			if i+1 < len(pattern) && pattern[i+1] == '\'' {
				df.items = append(df.items, dfItem{text: "'"})
				i += 2
				continue
			}
			var b strings.Builder
			j := i + 1
			for ; j < len(pattern); j++ {
				if pattern[j] == '\'' {
					if j+1 < len(pattern) && pattern[j+1] == '\'' {
						b.WriteByte('\'')
						j++
						continue
					}
					break
				}
				b.WriteByte(pattern[j])
			}
			if j >= len(pattern) {
				return nil, fmt.Errorf("unterminated quote in %q", pattern)
			}
			df.items = append(df.items, dfItem{text: b.String()})
			i = j + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if !strings.ContainsRune(dfLetters, rune(c)) {
				return nil, fmt.Errorf("the pattern letter %q of %q is not supported (supported: %s and quoted text)", c, pattern, dfLetters)
			}
			j := i
			for j < len(pattern) && pattern[j] == c {
				j++
			}
			if c == 'X' && j-i > 3 {
				// SimpleDateFormat.compile: "invalid ISO 8601 format".
				return nil, fmt.Errorf("invalid ISO 8601 format in %q: X repeats at most 3 times", pattern)
			}
			df.items = append(df.items, dfItem{letter: c, count: j - i})
			i = j
		default:
			df.items = append(df.items, dfItem{text: string(c)})
			i++
		}
	}
	return df, nil
}

var (
	monthsLong  = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	monthsShort = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	daysLong    = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	daysShort   = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
)

func pad(dst []byte, n, width int) []byte {
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// format is SimpleDateFormat.format in UTC, with the symbols of Locale.ROOT
// and the calendar of java.util.GregorianCalendar (see civil).
func (df *dateFormat) format(t time.Time) string {
	c := civilOf(millis(t))
	var b []byte
	for _, it := range df.items {
		n := it.count
		switch it.letter {
		case 0:
			b = append(b, it.text...)
		case 'y':
			y := c.year
			if y <= 0 {
				y = 1 - y // era years: 1 BC is year 1
			}
			if n == 2 {
				b = pad(b, y%100, 2)
			} else {
				b = pad(b, y, n)
			}
		case 'G':
			if c.year <= 0 {
				b = append(b, "BC"...)
			} else {
				b = append(b, "AD"...)
			}
		case 'M', 'L':
			switch {
			case n >= 4:
				b = append(b, monthsLong[c.month-1]...)
			case n == 3:
				b = append(b, monthsShort[c.month-1]...)
			default:
				b = pad(b, c.month, n)
			}
		case 'd':
			b = pad(b, c.day, n)
		case 'D':
			b = pad(b, c.yday, n)
		case 'E':
			if n >= 4 {
				b = append(b, daysLong[c.weekday]...)
			} else {
				b = append(b, daysShort[c.weekday]...)
			}
		case 'a':
			if c.hour < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'u':
			d := c.weekday
			if d == 0 {
				d = 7 // Sunday is 7, Monday 1
			}
			b = pad(b, d, n)
		case 'H':
			b = pad(b, c.hour, n)
		case 'k':
			h := c.hour
			if h == 0 {
				h = 24
			}
			b = pad(b, h, n)
		case 'K':
			b = pad(b, c.hour%12, n)
		case 'h':
			h := c.hour % 12
			if h == 0 {
				h = 12
			}
			b = pad(b, h, n)
		case 'm':
			b = pad(b, c.minute, n)
		case 's':
			b = pad(b, c.second, n)
		case 'S':
			b = pad(b, c.milli, n) // milliseconds, not a fraction
		case 'z':
			if n >= 4 {
				b = append(b, "Coordinated Universal Time"...)
			} else {
				b = append(b, "UTC"...)
			}
		case 'Z':
			b = append(b, "+0000"...)
		case 'X':
			b = append(b, 'Z')
		}
	}
	return string(b)
}

// parse is SimpleDateFormat.parse(String) in UTC, lenient as its default:
// numbers out of range roll over (month 13 is January of the next year),
// spaces and tabs before a field are skipped, text after the pattern is
// ignored (DateFormat.parse reads a prefix). A numeric field followed
// directly by another takes exactly its width of digits; otherwise all
// digits there. Where two fields say the same thing (d and D, H and h),
// the later one in the pattern decides, as Calendar resolves fields by
// when they were set; E is read and, as in Java, not checked.
func (df *dateFormat) parse(s string, now time.Time) (time.Time, error) {
	year, month, day, hour, minute, sec, ms := 1970, 1, 1, 0, 0, 0, 0
	yday, pm, hour12 := -1, -1, -1
	bc, oneBased := false, false // era BC; hour12 read by h (12 is 0), not K
	dayAt, ydayAt, hourAt, hour12At := -1, -1, -1, -1
	ambiguous := false // a two-digit year equal to the default century's start
	offset := int64(0) // ms east of UTC, from z Z X
	centuryStart := now.AddDate(-80, 0, 0)
	pos := 0
	fail := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("could not parse timestamp: value (%s) does not match pattern (%s)", s, df.pattern)
	}
	numeric := func(c byte, n int) bool {
		return c != 0 && c != 'G' && c != 'E' && c != 'a' && c != 'z' && c != 'Z' && c != 'X' && !((c == 'M' || c == 'L') && n >= 3)
	}
	for k, it := range df.items {
		if it.letter == 0 {
			if !strings.HasPrefix(s[pos:], it.text) {
				return fail()
			}
			pos += len(it.text)
			continue
		}
		for pos < len(s) && (s[pos] == ' ' || s[pos] == '\t') {
			pos++ // SimpleDateFormat.subParse skips them before a field
		}
		if numeric(it.letter, it.count) {
			end := pos
			abut := k+1 < len(df.items) && numeric(df.items[k+1].letter, df.items[k+1].count)
			for end < len(s) && s[end] >= '0' && s[end] <= '9' && (!abut || end-pos < it.count) {
				end++
			}
			if end == pos {
				return fail()
			}
			v, err := strconv.Atoi(s[pos:end])
			if err != nil {
				return fail()
			}
			digits := end - pos
			pos = end
			switch it.letter {
			case 'y':
				year = v
				if it.count <= 2 && digits == 2 {
					// Two-digit years fall within 80 years before and 20
					// after now (SimpleDateFormat's default century): the
					// start's two digits are its century, smaller ones the
					// next, and equal ones are decided by the whole date.
					start := centuryStart.Year()
					year = start/100*100 + v
					if v < start%100 {
						year += 100
					}
					ambiguous = v == start%100
				}
			case 'M', 'L':
				month = v
			case 'd':
				day, dayAt = v, k
			case 'D':
				yday, ydayAt = v, k
			case 'H':
				hour, hourAt = v, k
			case 'k':
				if v == 24 {
					v = 0 // SimpleDateFormat.subParse, pattern k
				}
				hour, hourAt = v, k
			case 'h', 'K':
				hour12, hour12At, oneBased = v, k, it.letter == 'h'
			case 'u':
				// The day of the week: read, and (as E) not checked.
			case 'm':
				minute = v
			case 's':
				sec = v
			case 'S':
				ms = v
			}
			continue
		}
		rest := s[pos:]
		match := func(names ...[]string) int {
			for _, list := range names {
				for i, name := range list {
					if len(rest) >= len(name) && strings.EqualFold(rest[:len(name)], name) {
						pos += len(name)
						return i
					}
				}
			}
			return -1
		}
		switch it.letter {
		case 'G':
			i := match([]string{"AD", "BC"})
			if i < 0 {
				return fail()
			}
			bc = i == 1
		case 'M', 'L':
			i := match(monthsLong, monthsShort)
			if i < 0 {
				return fail()
			}
			month = i + 1
		case 'E':
			if match(daysLong, daysShort) < 0 {
				return fail()
			}
		case 'a':
			i := match([]string{"AM", "PM"})
			if i < 0 {
				return fail()
			}
			pm = i
		case 'z', 'Z', 'X':
			n, off, ok := parseZone(rest, it.letter, it.count)
			if !ok {
				return fail()
			}
			pos += n
			offset = off
		}
	}
	if hour12At > hourAt {
		// Calendar.HOUR: by h 12 is 0 (SimpleDateFormat.subParse, pattern
		// h), any other value is kept, lenient (13 AM is 13:00, K 12 AM is
		// noon); PM adds 12.
		hour = hour12
		if hour == 12 && oneBased {
			hour = 0
		}
		if pm == 1 {
			hour += 12
		}
	}
	if ydayAt > dayAt {
		month, day = 1, yday
	}
	if bc {
		year = 1 - year // 1 BC is year 0
	}
	msOfDay := ((int64(hour)*60+int64(minute))*60+int64(sec))*1000 + int64(ms)
	out := civilMillis(year, month, day, msOfDay) - offset
	if ambiguous && out < millis(centuryStart) {
		out = civilMillis(year+100, month, day, msOfDay) - offset
	}
	return fromMillis(out), nil
}

// parseZone reads a zone at the start of s as SimpleDateFormat.subParse
// does for z and Z (a general zone: GMT, GMT+h:mm, a zone name, or RFC
// 822's +hhmm) and X (ISO 8601 by count: Z, +hh, +hhmm, +hh:mm). It
// returns the bytes read and the offset in ms east of UTC. Of the zone
// names only UTC and GMT are known here: another name (PST, Europe/Paris)
// is refused, not guessed.
func parseZone(s string, letter byte, count int) (n int, offset int64, ok bool) {
	if s == "" {
		return 0, 0, false
	}
	sign := int64(0)
	switch s[0] {
	case '+':
		sign = 1
	case '-':
		sign = -1
	}
	if letter == 'X' {
		if s[0] == 'Z' {
			return 1, 0, true
		}
		if sign == 0 {
			return 0, 0, false
		}
		n, off, ok := numericZone(s[1:], count, count == 3)
		return n + 1, sign * off, ok
	}
	if sign != 0 { // RFC 822
		n, off, ok := numericZone(s[1:], 0, false)
		return n + 1, sign * off, ok
	}
	if len(s) >= 3 && strings.EqualFold(s[:3], "GMT") {
		if len(s) > 3 && (s[3] == '+' || s[3] == '-') {
			sign = 1
			if s[3] == '-' {
				sign = -1
			}
			n, off, ok := numericZone(s[4:], 0, true)
			return n + 4, sign * off, ok
		}
		return 3, 0, true
	}
	for _, name := range []string{"Coordinated Universal Time", "UTC"} {
		if len(s) >= len(name) && strings.EqualFold(s[:len(name)], name) {
			return len(name), 0, true
		}
	}
	return 0, 0, false
}

// numericZone is SimpleDateFormat.subParseNumericZone: hh (one h allowed
// only with a colon and no count), then, unless count is 1, [:]mm.
func numericZone(s string, count int, colon bool) (n int, offset int64, ok bool) {
	digit := func(i int) (int, bool) {
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			return int(s[i] - '0'), true
		}
		return 0, false
	}
	h, ok := digit(0)
	if !ok {
		return 0, 0, false
	}
	i := 1
	if d, ok := digit(1); ok {
		h, i = h*10+d, 2
	} else if count > 0 || !colon {
		return 0, 0, false
	}
	if h > 23 {
		return 0, 0, false
	}
	m := 0
	if count != 1 {
		if colon {
			if i >= len(s) || s[i] != ':' {
				return 0, 0, false
			}
			i++
		}
		d1, ok1 := digit(i)
		d2, ok2 := digit(i + 1)
		if !ok1 || !ok2 || d1*10+d2 > 59 {
			return 0, 0, false
		}
		m, i = d1*10+d2, i+2
	}
	return i, int64(h*60+m) * 60000, true
}

// The calendar SimpleDateFormat uses is java.util.GregorianCalendar: the
// Julian calendar before its cutover, 1582-10-15 (Gregorian), and the
// Gregorian one from it. Java's dates before 1582 are so 10 and more days
// from proleptic Gregorian ones (time.Time's): 0001-01-01T00:00Z is
// 0001-01-03 to Java.
const (
	gregorianCutover = -12219292800000 // 1582-10-15T00:00Z in ms
	unixEpochJDN     = 2440588         // the Julian day number of 1970-01-01
)

// civil is an instant's calendar fields in UTC.
type civil struct {
	year, month, day, yday, weekday int // astronomical year (0 is 1 BC), weekday 0 = Sunday
	hour, minute, second, milli     int
}

// civilOf returns the fields of ms as GregorianCalendar gives them.
func civilOf(ms int64) civil {
	days := floorDiv(ms, epochDay)
	rest := int(ms - days*epochDay)
	c := civil{hour: rest / 3600000, minute: rest / 60000 % 60, second: rest / 1000 % 60, milli: rest % 1000,
		weekday: int(floorMod(days+4, 7))} // 1970-01-01 was a Thursday
	if ms >= gregorianCutover {
		t := time.UnixMilli(ms).UTC()
		c.year, c.month, c.day, c.yday = t.Year(), int(t.Month()), t.Day(), t.YearDay()
		if c.year == 1582 {
			// The days of 1582 are counted from its Julian January 1:
			// 1582-10-15 is day 278, not 288.
			c.yday = int(days+unixEpochJDN-julianJDN(1582, 1, 1)) + 1
		}
		return c
	}
	c.year, c.month, c.day = julianFromJDN(days + unixEpochJDN)
	c.yday = int(days+unixEpochJDN-julianJDN(int64(c.year), 1, 1)) + 1
	return c
}

// civilMillis is GregorianCalendar.computeTime for lenient fields: the
// Gregorian reading when it falls on or after the cutover (and the year
// is not before 1582), else the Julian one.
func civilMillis(year, month, day int, msOfDay int64) int64 {
	g := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC).UnixMilli() + msOfDay
	if year >= 1582 && g >= gregorianCutover {
		return g
	}
	y := int64(year) + floorDiv(int64(month)-1, 12)
	m := floorMod(int64(month)-1, 12) + 1
	days := julianJDN(y, m, 1) - unixEpochJDN + int64(day) - 1
	return days*epochDay + msOfDay
}

// julianJDN is the Julian day number of a Julian calendar date.
func julianJDN(y, m, d int64) int64 {
	a := floorDiv(14-m, 12)
	yy := y + 4800 - a
	mm := m + 12*a - 3
	return d + floorDiv(153*mm+2, 5) + 365*yy + floorDiv(yy, 4) - 32083
}

// julianFromJDN is the Julian calendar date of a Julian day number.
func julianFromJDN(jdn int64) (year, month, day int) {
	c := jdn + 32082
	d := floorDiv(4*c+3, 1461)
	e := c - floorDiv(1461*d, 4)
	m := floorDiv(5*e+2, 153)
	return int(d - 4800 + floorDiv(m, 10)), int(m + 3 - 12*floorDiv(m, 10)), int(e - floorDiv(153*m+2, 5) + 1)
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
