package schema

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// refJSONString is appendJSONString's rules written out one rune at a
// time, with nothing skipped.
func refJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString("\uFFFD")
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestJSONStringAtEveryOffset puts each kind of byte that needs care (and
// a few that do not) at every offset of strings of up to 20 bytes, so
// that it falls in and across the eight-byte words appendJSONStringBody
// skips, and at their edges.
func TestJSONStringAtEveryOffset(t *testing.T) {
	specials := []string{`"`, `\`, "\n", "\x00", "\x01", "\x1f", " ", "\x7f", "~", "é", "€", "😀", "\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80"}
	for n := 0; n <= 20; n++ {
		for p := 0; p <= n; p++ {
			for _, sp := range specials {
				s := strings.Repeat("a", p) + sp + strings.Repeat("z", n-p)
				want := refJSONString(s)
				if got := string(appendJSONString(nil, s)); got != want {
					t.Errorf("string %q: %s, want %s", s, got, want)
				}
				if got := string(appendJSONString([]byte("x"), []byte(s))); got != "x"+want {
					t.Errorf("[]byte %q: %s, want x%s", s, got, want)
				}
			}
		}
	}
}

func TestJSONPlain8(t *testing.T) {
	for c := range 256 {
		for pos := range 8 {
			w := uint64(0x6161616161616161) // "aaaaaaaa"
			w = w&^(0xff<<(8*pos)) | uint64(c)<<(8*pos)
			want := c < utf8.RuneSelf && jsonSafe[c]
			if got := jsonPlain8(w); got != want {
				t.Errorf("byte %#02x at %d: plain %v, want %v", c, pos, got, want)
			}
		}
	}
}
