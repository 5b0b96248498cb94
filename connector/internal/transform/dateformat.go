package transform

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// This file holds the part of Java's SimpleDateFormat that
// TimestampConverter's `format` uses, always in UTC as TimestampConverter
// sets it (TimestampConverter.java:311-319): the pattern letters y M d D E
// a H h m s S z Z X and quoted text. A pattern with any other letter is
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

const dfLetters = "yMdDEaHhmsSzZX"

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

// format is SimpleDateFormat.format in UTC, with the symbols of Locale.ROOT.
func (df *dateFormat) format(t time.Time) string {
	t = t.UTC()
	var b []byte
	for _, it := range df.items {
		n := it.count
		switch it.letter {
		case 0:
			b = append(b, it.text...)
		case 'y':
			y := t.Year()
			if y <= 0 {
				y = 1 - y // era years: 1 BC is year 1
			}
			if n == 2 {
				b = pad(b, y%100, 2)
			} else {
				b = pad(b, y, n)
			}
		case 'M':
			switch {
			case n >= 4:
				b = append(b, monthsLong[t.Month()-1]...)
			case n == 3:
				b = append(b, monthsShort[t.Month()-1]...)
			default:
				b = pad(b, int(t.Month()), n)
			}
		case 'd':
			b = pad(b, t.Day(), n)
		case 'D':
			b = pad(b, t.YearDay(), n)
		case 'E':
			if n >= 4 {
				b = append(b, daysLong[t.Weekday()]...)
			} else {
				b = append(b, daysShort[t.Weekday()]...)
			}
		case 'a':
			if t.Hour() < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'H':
			b = pad(b, t.Hour(), n)
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			b = pad(b, h, n)
		case 'm':
			b = pad(b, t.Minute(), n)
		case 's':
			b = pad(b, t.Second(), n)
		case 'S':
			b = pad(b, t.Nanosecond()/1e6, n) // milliseconds, not a fraction
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
// text after the pattern is ignored (DateFormat.parse reads a prefix). A
// numeric field followed directly by another takes exactly its width of
// digits; otherwise all digits there.
func (df *dateFormat) parse(s string, now time.Time) (time.Time, error) {
	year, month, day, hour, minute, sec, ms := 1970, 1, 1, 0, 0, 0, 0
	yday, pm, hour12 := -1, -1, -1
	pos := 0
	fail := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("could not parse timestamp: value (%s) does not match pattern (%s)", s, df.pattern)
	}
	numeric := func(c byte, n int) bool {
		return c != 0 && c != 'E' && c != 'a' && c != 'z' && c != 'Z' && c != 'X' && !(c == 'M' && n >= 3)
	}
	for k, it := range df.items {
		if it.letter == 0 {
			if !strings.HasPrefix(s[pos:], it.text) {
				return fail()
			}
			pos += len(it.text)
			continue
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
					// after now (SimpleDateFormat's default century).
					start := now.Year() - 80
					year = start/100*100 + v
					if year < start {
						year += 100
					}
				}
			case 'M':
				month = v
			case 'd':
				day = v
			case 'D':
				yday = v
			case 'H':
				hour = v
			case 'h':
				hour12 = v
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
		case 'M':
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
		case 'z':
			if match([]string{"Coordinated Universal Time", "UTC", "GMT"}) < 0 {
				return fail()
			}
		case 'Z', 'X':
			if match([]string{"Z", "+0000", "+00:00", "+00", "-0000", "-00:00", "-00"}) < 0 {
				return fail()
			}
		}
	}
	if hour12 >= 0 {
		hour = hour12 % 12
		if pm == 1 {
			hour += 12
		}
	}
	if yday >= 0 {
		month, day = 1, yday
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, ms*1e6, time.UTC), nil
}
