package schema

import (
	"encoding/base64"
	"unicode/utf8"
)

// appendJSONString appends s as a quoted JSON string. Quotes, backslashes
// and control characters are escaped; invalid UTF-8 becomes U+FFFD, as
// Postgres text can hold no invalid UTF-8 in a UTF8 database but a
// SQL_ASCII one can, and a record must stay valid JSON. Like Jackson (and
// unlike encoding/json) it does not escape '<', '>', '&', U+2028 or U+2029:
// that is valid JSON and keeps the bytes Debezium would write.
func appendJSONString[T ~string | ~[]byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	dst = appendJSONStringBody(dst, s)
	return append(dst, '"')
}

// appendJSONStringBody is appendJSONString without the quotes.
func appendJSONStringBody[T ~string | ~[]byte](dst []byte, s T) []byte {
	start := 0 // s[start:i] is pending, needing no escape
	// Eight bytes at a time while they need no care; from a word that
	// does, up to wordAt, one at a time.
	wordAt := 0
	for i := 0; i < len(s); {
		if i >= wordAt && i+8 <= len(s) {
			if jsonPlain8(load8(s, i)) {
				i += 8
				continue
			}
			wordAt = i + 8
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		// A multi-byte sequence: keep it if valid, else write U+FFFD for
		// the first byte and resync on the next one. The conversion of at
		// most 4 bytes to string does not escape, so it does not allocate.
		end := min(i+utf8.UTFMax, len(s))
		r, size := utf8.DecodeRuneInString(string(s[i:end]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// load8 is s[i:i+8] as a little-endian word.
func load8[T ~string | ~[]byte](s T, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// jsonPlain8 reports whether each byte of w goes into a JSON string
// unchanged (jsonSafe): no control character, quote, backslash or byte of
// a multi-byte sequence. Each test sets a byte's high bit when the byte
// matches, and a borrow between bytes only starts from a match, so there
// is neither a false "plain" nor, when no byte matches, a false alarm.
func jsonPlain8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := w^('"'*ones), w^('\\'*ones)
	match := (w - 0x20*ones) & ^w // a byte below 0x20
	match |= (quote - ones) & ^quote
	match |= (backslash - ones) & ^backslash
	return (match|w)&highs == 0
}

const hexDigits = "0123456789abcdef"

// jsonSafe marks the ASCII bytes that go into a JSON string unchanged.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendBase64String appends the standard base64 of b as a JSON string
// (Kafka Connect's JsonConverter writes BYTES this way).
func appendBase64String(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}
