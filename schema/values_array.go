package schema

import (
	"errors"
	"slices"
)

// This file splits Postgres' array text into its elements.
//
// What Debezium does (PostgresValueConverter.createArrayConverter /
// convertArray, checked against the sources): a one-dimensional array of
// a type it maps becomes a Kafka Connect ARRAY whose items are the
// element type's schema made optional; a NULL element is a null item. The
// element values come from pgjdbc's PgArray (array_out text parsed by the
// driver), then go through the element type's own converter. Arrays of
// money, name, interval, varbit, xml, point and refcursor have no
// converter in Debezium (DBZ-459) and are left out of the record. The
// array bounds ("[0:1]=" decoration) are dropped: only the elements are
// kept. Multi-dimensional arrays are not mapped (per the brief; not
// checked against Debezium's code here): parseArray rejects them with
// errMultiDimArray instead of flattening them.

// errMultiDimArray is returned for an array with more than one dimension.
var errMultiDimArray = errors.New("multi-dimensional arrays are not supported (Debezium does not map them); change the column to a one-dimensional array or exclude the table")

// arrayElem is one element of a parsed array: its text after unquoting,
// or Null for an unquoted NULL.
type arrayElem struct {
	Data []byte
	Null bool
}

// arrayIsSpace is array_in's array_isspace: the ASCII whitespace set.
func arrayIsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// parseArray parses a one-dimensional array as array_out prints it and
// array_in reads it: "{1,2,NULL}", `{"a b","c\"d",NULL,"NULL"}`, "{}",
// "[0:1]={1,2}". delim is the element type's typdelim: ',' for every
// built-in type except box, which uses ';'.
//
// Rules, as in array_in: whitespace around elements and delimiters is
// skipped; an element in double quotes keeps everything inside, with a
// backslash escaping the next byte; an unquoted element runs up to the
// next delimiter or '}', a backslash escaping the next byte and trailing
// unescaped whitespace dropped; an unquoted NULL (any case, no escapes) is
// a null element, a quoted "NULL" is the text NULL. An optional dimension
// decoration [lb:ub]= must agree with the number of elements. A nested
// '{' is errMultiDimArray.
//
// The elements are appended to elems. Their unescaped text is appended to
// buf, which is grown by len(s) up front so that it does not move while
// the Data slices into it are taken; each Data is capped at its own
// length. Reuse elems and buf between calls (pass elems[:0], buf[:0]) to
// parse without allocating.
func parseArray(s []byte, delim byte, elems []arrayElem, buf []byte) ([]arrayElem, []byte, error) {
	first, orig := len(elems), len(buf)
	i := skipArraySpace(s, 0)
	// Optional dimension decoration.
	var lb, ub int64
	decorated := false
	if i < len(s) && s[i] == '[' {
		var err error
		if lb, ub, i, err = parseArrayBounds(s, i); err != nil {
			return elems, buf, err
		}
		decorated = true
		i = skipArraySpace(s, i)
		if i < len(s) && s[i] == '[' {
			return elems, buf, errMultiDimArray
		}
		if i == len(s) || s[i] != '=' {
			return elems, buf, errSyntax
		}
		i++
		i = skipArraySpace(s, i)
	}
	if i == len(s) || s[i] != '{' {
		return elems, buf, errSyntax
	}
	i++
	buf = slices.Grow(buf, len(s))
	i = skipArraySpace(s, i)
	if i < len(s) && s[i] == '}' {
		i++
	} else {
		for {
			i = skipArraySpace(s, i)
			if i == len(s) {
				return elems[:first], buf[:orig], errSyntax
			}
			c := s[i]
			if c == '{' {
				return elems[:first], buf[:orig], errMultiDimArray
			}
			start := len(buf)
			null := false
			if c == '"' {
				i++
				closed := false
				for i < len(s) {
					c := s[i]
					if c == '\\' {
						if i+1 == len(s) {
							break
						}
						buf = append(buf, s[i+1])
						i += 2
						continue
					}
					if c == '"' {
						i++
						closed = true
						break
					}
					buf = append(buf, c)
					i++
				}
				if !closed {
					return elems[:first], buf[:orig], errSyntax
				}
				i = skipArraySpace(s, i)
			} else {
				// Unquoted: up to the delimiter or '}'; remember where the
				// last escaped byte ended so that trailing whitespace before
				// it is kept.
				keep := len(buf)
				escaped := false
				for i < len(s) {
					c := s[i]
					if c == delim || c == '}' {
						break
					}
					if c == '"' || c == '{' {
						return elems[:first], buf[:orig], errSyntax
					}
					if c == '\\' {
						if i+1 == len(s) {
							return elems[:first], buf[:orig], errSyntax
						}
						buf = append(buf, s[i+1])
						i += 2
						keep = len(buf)
						escaped = true
						continue
					}
					buf = append(buf, c)
					i++
					if !arrayIsSpace(c) {
						keep = len(buf)
					}
				}
				buf = buf[:keep]
				if len(buf) == start {
					return elems[:first], buf[:orig], errSyntax // empty unquoted element
				}
				if !escaped && isNullWord(buf[start:]) {
					null = true
					buf = buf[:start]
				}
			}
			if null {
				elems = append(elems, arrayElem{Null: true})
			} else {
				elems = append(elems, arrayElem{Data: buf[start:len(buf):len(buf)]})
			}
			if i == len(s) {
				return elems[:first], buf[:orig], errSyntax
			}
			if s[i] == '}' {
				i++
				break
			}
			if s[i] != delim {
				return elems[:first], buf[:orig], errSyntax
			}
			i++
		}
	}
	i = skipArraySpace(s, i)
	if i != len(s) {
		return elems[:first], buf[:orig], errSyntax
	}
	if decorated && ub-lb+1 != int64(len(elems)-first) {
		return elems[:first], buf[:orig], errSyntax
	}
	return elems, buf, nil
}

// skipArraySpace returns the index of the first non-whitespace byte of s
// at or after i.
func skipArraySpace(s []byte, i int) int {
	for i < len(s) && arrayIsSpace(s[i]) {
		i++
	}
	return i
}

// parseArrayBounds reads "[lb:ub]" (or "[ub]", lower bound 1) at s[i:].
func parseArrayBounds(s []byte, i int) (lb, ub int64, next int, err error) {
	i++ // '['
	j := i
	for j < len(s) && s[j] != ']' {
		j++
	}
	if j == len(s) {
		return 0, 0, i, errSyntax
	}
	inner := s[i:j]
	colon := -1
	for k, c := range inner {
		if c == ':' {
			colon = k
			break
		}
	}
	lb = 1
	if colon >= 0 {
		if lb, err = parseInt(inner[:colon], -1<<31, 1<<31-1); err != nil {
			return 0, 0, i, errSyntax
		}
		inner = inner[colon+1:]
	}
	if ub, err = parseInt(inner, -1<<31, 1<<31-1); err != nil {
		return 0, 0, i, errSyntax
	}
	if ub < lb-1 {
		return 0, 0, i, errSyntax
	}
	return lb, ub, j + 1, nil
}

// isNullWord reports whether s is NULL in any letter case.
func isNullWord(s []byte) bool {
	return len(s) == 4 && s[0]|0x20 == 'n' && s[1]|0x20 == 'u' && s[2]|0x20 == 'l' && s[3]|0x20 == 'l'
}
