package schema

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
)

// Errors of ParseCopyRow. They are static; ParseCopyRow wraps them with the
// column number (only on the error path, which may allocate).
var (
	errCopyColumns   = errors.New("wrong number of columns")
	errCopyBackslash = errors.New("row ends in a lone backslash")
	errCopyNull      = errors.New(`\N is not the whole field`)
	errCopyOctal     = errors.New("octal escape above \\377")
	errCopyHex       = errors.New(`\x is not followed by a hex digit`)
)

// ParseCopyRow parses one row of COPY TEXT output (Postgres' default COPY
// format: tab delimiter, NULL as \N), with or without its trailing "\n",
// into dst[:0], one Value per column. A field that is exactly \N is
// ValueNull; every other field is ValueText whose Data is the field with its
// escapes undone, which is the column's text output, byte for byte what
// pgoutput sends for the same value.
//
// Escapes: \b \f \n \r \t \v \\, a backslash followed by 1-3 octal digits
// (at most \377), \x followed by 1-2 hex digits, and a backslash before any
// other character (a tab, a newline, ...) means that character. Only an
// unescaped tab separates columns. Exactly one trailing "\n" is taken as the
// row terminator and removed; a raw "\r" is data (Postgres escapes both in
// its output, so neither occurs raw in a row it sent).
//
// want is the number of columns the row must have; want < 0 accepts any
// number. An empty line is one empty column, except when want == 0, where
// it is the row of a table without columns.
//
// Data of a field without a backslash aliases line: no copy. The unescaped
// bytes of the other fields are appended to buf, which is returned so the
// caller can reuse it (pass buf[:0] for the next row once the previous row
// is no longer needed), and their Data points into the returned buf. Every
// Data has cap == len, so appending to one never overwrites another. With
// enough capacity in dst and buf, ParseCopyRow does not allocate.
//
// ParseCopyRow returns an error, never panics, for a column count other than
// want, a row that ends in a lone backslash, an \N escape in a field that is
// not exactly \N, an octal escape above \377 and an \x without a hex digit.
// On error it returns dst[:0] and buf at its original length (its capacity
// possibly grown).
func ParseCopyRow(line []byte, want int, dst Tuple, buf []byte) (Tuple, []byte, error) {
	dst = dst[:0]
	base := len(buf)
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if want == 0 && len(line) == 0 {
		return dst, buf, nil
	}
	grown := false
	pos := 0
	for {
		if len(dst) == want {
			return dst[:0], buf[:base], fmt.Errorf("copy row: more than %d columns: %w", want, errCopyColumns)
		}
		rest := line[pos:]
		end := bytes.IndexByte(rest, '\t')
		if end < 0 {
			end = len(rest)
		}
		field := rest[:end:end]
		bs := bytes.IndexByte(field, '\\')
		switch {
		case bs < 0:
			dst = append(dst, Value{Kind: ValueText, Data: field})
		case end == 2 && bs == 0 && field[1] == 'N':
			dst = append(dst, Value{Kind: ValueNull})
		default:
			if !grown {
				// The unescaped rest of the row is never longer than the
				// raw rest, so after this one grow appending to buf never
				// reallocates and the Data slices handed out stay in buf.
				buf = slices.Grow(buf, len(rest))
				grown = true
			}
			start := len(buf)
			var err error
			if buf, end, err = unescapeCopyField(buf, rest, bs, end); err != nil {
				return dst[:0], buf[:base], fmt.Errorf("copy row: column %d: %w", len(dst)+1, err)
			}
			dst = append(dst, Value{Kind: ValueText, Data: buf[start:len(buf):len(buf)]})
		}
		pos += end
		if pos == len(line) {
			break
		}
		pos++ // the tab
	}
	if want >= 0 && len(dst) != want {
		return dst[:0], buf[:base], fmt.Errorf("copy row: %d columns, want %d: %w", len(dst), want, errCopyColumns)
	}
	return dst, buf, nil
}

// unescapeCopyField appends to buf the unescaped field that starts at
// rest[0]. rest[bs] is its first backslash and end the index of the first
// raw tab in rest (len(rest) if none). It returns the index in rest where
// the field ends: an unescaped tab or len(rest).
func unescapeCopyField(buf, rest []byte, bs, end int) ([]byte, int, error) {
	i := 0
	for {
		buf = append(buf, rest[i:i+bs]...)
		i += bs + 1
		if i >= len(rest) {
			return buf, 0, errCopyBackslash
		}
		c := rest[i]
		i++
		switch c {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'v':
			c = '\v'
		case 'N':
			return buf, 0, errCopyNull
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := uint(c - '0')
			for k := 0; k < 2 && i < len(rest) && rest[i] >= '0' && rest[i] <= '7'; k++ {
				v = v<<3 | uint(rest[i]-'0')
				i++
			}
			if v > 0xff {
				return buf, 0, errCopyOctal
			}
			c = byte(v)
		case 'x':
			if i >= len(rest) || unhex[rest[i]] == 0xff {
				return buf, 0, errCopyHex
			}
			c = unhex[rest[i]]
			i++
			if i < len(rest) && unhex[rest[i]] != 0xff {
				c = c<<4 | unhex[rest[i]]
				i++
			}
		}
		// Any other character, a tab or a backslash among them, stands for
		// itself.
		buf = append(buf, c)
		if i > end {
			// The escape took the tab that looked like the field's end.
			if j := bytes.IndexByte(rest[i:], '\t'); j >= 0 {
				end = i + j
			} else {
				end = len(rest)
			}
		}
		if bs = bytes.IndexByte(rest[i:end], '\\'); bs < 0 {
			return append(buf, rest[i:end]...), end, nil
		}
	}
}
