package transform

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mooncdc/mooncdc/schema"
)

// This file reads JSON under a Connect schema in one pass (FromJSON): the
// schema says what each value must be, so nothing is decoded twice and no
// generic tree is built. It reads what encoding/json reads (strings with
// their escapes, invalid UTF-8 as U+FFFD byte by byte, surrogates paired
// or U+FFFD) and gives what JsonConverter.toConnectData gives
// (values_test.go holds it to a reference built on encoding/json, also
// under fuzzing).

type jsonReader struct {
	b []byte
	i int
}

var errJSONEnd = errors.New("unexpected end of JSON input")

func (r *jsonReader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space (0 at the end).
func (r *jsonReader) peek() byte {
	r.space()
	if r.i >= len(r.b) {
		return 0
	}
	return r.b[r.i]
}

func (r *jsonReader) literal(lit string) error {
	if len(r.b)-r.i < len(lit) || string(r.b[r.i:r.i+len(lit)]) != lit {
		return r.syntax()
	}
	r.i += len(lit)
	return nil
}

func (r *jsonReader) syntax() error {
	if r.i >= len(r.b) {
		return errJSONEnd
	}
	return fmt.Errorf("invalid character %q at offset %d", r.b[r.i], r.i)
}

// number returns the text of a JSON number.
func (r *jsonReader) number() ([]byte, error) {
	start := r.i
	if r.i < len(r.b) && r.b[r.i] == '-' {
		r.i++
	}
	digits := func() int {
		n := 0
		for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
			r.i++
			n++
		}
		return n
	}
	if r.i < len(r.b) && r.b[r.i] == '0' {
		r.i++
	} else if digits() == 0 {
		return nil, r.syntax()
	}
	if r.i < len(r.b) && r.b[r.i] == '.' {
		r.i++
		if digits() == 0 {
			return nil, r.syntax()
		}
	}
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i++
		if r.i < len(r.b) && (r.b[r.i] == '+' || r.b[r.i] == '-') {
			r.i++
		}
		if digits() == 0 {
			return nil, r.syntax()
		}
	}
	return r.b[start:r.i], nil
}

// str reads a JSON string (r.b[r.i] is its quote).
func (r *jsonReader) str() (string, error) {
	r.i++ // "
	start := r.i
	for r.i < len(r.b) {
		c := r.b[r.i]
		if c == '"' {
			seg := r.b[start:r.i]
			r.i++
			if utf8.Valid(seg) {
				return string(seg), nil
			}
			return string(appendValid(nil, seg)), nil
		}
		if c == '\\' {
			return r.strSlow(start)
		}
		if c < 0x20 {
			return "", r.syntax()
		}
		r.i++
	}
	return "", errJSONEnd
}

// strSlow reads the rest of a string with escapes, from start.
func (r *jsonReader) strSlow(start int) (string, error) {
	out := appendValid(make([]byte, 0, r.i-start+16), r.b[start:r.i])
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			return string(out), nil
		case c < 0x20:
			return "", r.syntax()
		case c != '\\':
			j := r.i
			for j < len(r.b) && r.b[j] != '"' && r.b[j] != '\\' && r.b[j] >= 0x20 {
				j++
			}
			out = appendValid(out, r.b[r.i:j])
			r.i = j
			continue
		}
		if r.i+1 >= len(r.b) {
			return "", errJSONEnd
		}
		e := r.b[r.i+1]
		r.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			c1, ok := r.hex4()
			if !ok {
				return "", r.syntax()
			}
			if utf16.IsSurrogate(c1) {
				// a pair, when a \u of the low half follows; else U+FFFD
				save := r.i
				if r.i+1 < len(r.b) && r.b[r.i] == '\\' && r.b[r.i+1] == 'u' {
					r.i += 2
					if c2, ok := r.hex4(); ok {
						if p := utf16.DecodeRune(c1, c2); p != utf8.RuneError {
							out = utf8.AppendRune(out, p)
							continue
						}
					}
				}
				r.i = save
				c1 = utf8.RuneError
			}
			out = utf8.AppendRune(out, c1)
		default:
			r.i--
			return "", r.syntax()
		}
	}
	return "", errJSONEnd
}

func (r *jsonReader) hex4() (rune, bool) {
	if len(r.b)-r.i < 4 {
		return 0, false
	}
	var v rune
	for _, c := range r.b[r.i : r.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | rune(c)
	}
	r.i += 4
	return v, true
}

// appendValid appends b with each byte of an invalid UTF-8 sequence as
// U+FFFD, as encoding/json decodes it.
func appendValid(dst, b []byte) []byte {
	for len(b) > 0 {
		c, n := utf8.DecodeRune(b)
		if c == utf8.RuneError && n == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, b[:n]...)
		}
		b = b[n:]
	}
	return dst
}

// skip reads past one JSON value of any shape.
func (r *jsonReader) skip() error {
	switch c := r.peek(); {
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		r.i++
		if r.peek() == end {
			r.i++
			return nil
		}
		for {
			if c == '{' {
				if r.peek() != '"' {
					return r.syntax()
				}
				if _, err := r.str(); err != nil {
					return err
				}
				if r.peek() != ':' {
					return r.syntax()
				}
				r.i++
			}
			if err := r.skip(); err != nil {
				return err
			}
			switch r.peek() {
			case ',':
				r.i++
			case end:
				r.i++
				return nil
			default:
				return r.syntax()
			}
		}
	case c == '"':
		_, err := r.str()
		return err
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		_, err := r.number()
		return err
	}
	return r.syntax()
}

// describe names the JSON value at r.i for an error, and skips it.
func (r *jsonReader) describe() string {
	start := r.i
	if r.skip() != nil {
		return "invalid JSON"
	}
	v := r.b[start:r.i]
	if len(v) > 40 {
		return string(v[:40]) + "…"
	}
	return string(v)
}

// value reads a value of s; a null is nil whatever s says (toConnectData
// leaves a required field's null to the caller).
func (r *jsonReader) value(s *schema.Schema) (any, error) {
	c := r.peek()
	if c == 'n' {
		return nil, r.literal("null")
	}
	integer := func(bits int) (int64, error) {
		if c != '-' && (c < '0' || c > '9') {
			return 0, fmt.Errorf("%s is not a number", r.describe())
		}
		n, err := r.number()
		if err != nil {
			return 0, err
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || i < -(1<<(bits-1)) || i > 1<<(bits-1)-1 {
			return 0, fmt.Errorf("%s is not an int%d", n, bits)
		}
		return i, nil
	}
	base64Bytes := func() ([]byte, error) {
		if c != '"' {
			return nil, fmt.Errorf("%s is not a base64 string", r.describe())
		}
		str, err := r.str()
		if err != nil {
			return nil, err
		}
		return base64.StdEncoding.DecodeString(str)
	}
	switch logicalKind(s) {
	case TimestampName:
		i, err := integer(64)
		return fromMillis(i), err
	case DateName:
		i, err := integer(32)
		return fromMillis(i * epochDay), err
	case TimeName:
		i, err := integer(32)
		return fromMillis(i), err
	case DecimalName:
		b, err := base64Bytes()
		if err != nil {
			return nil, err
		}
		scale, err := decimalScale(s)
		return Decimal{Unscaled: signedBig(b), Scale: scale}, err
	}
	switch s.Type {
	case schema.TypeInt8:
		i, err := integer(8)
		return int8(i), err
	case schema.TypeInt16:
		i, err := integer(16)
		return int16(i), err
	case schema.TypeInt32:
		i, err := integer(32)
		return int32(i), err
	case schema.TypeInt64:
		return integer(64)
	case schema.TypeFloat32, schema.TypeFloat64:
		var f float64
		switch {
		case c == '"':
			// mooncdc's encoders write a non-finite double as Jackson does
			// with QUOTE_NON_NUMERIC_NUMBERS (its default): the strings
			// "NaN", "Infinity" and "-Infinity" (schema/json_values.go);
			// the record's Connect value is the double itself.
			str, err := r.str()
			if err != nil {
				return nil, err
			}
			var ok bool
			if f, ok = nonFinite[str]; !ok {
				return nil, fmt.Errorf("%q is not a number", str)
			}
		case c == '-' || c >= '0' && c <= '9':
			n, err := r.number()
			if err != nil {
				return nil, err
			}
			if f, err = strconv.ParseFloat(string(n), 64); err != nil && !errors.Is(err, strconv.ErrRange) {
				return nil, err
			} else if err != nil && !math.IsInf(f, 0) {
				err = nil // underflow: the nearest, as encoding/json reads it
			} else if err != nil {
				return nil, fmt.Errorf("%s is out of the range of a double", n)
			}
		default:
			return nil, fmt.Errorf("%s is not a number", r.describe())
		}
		if s.Type == schema.TypeFloat32 {
			return float32(f), nil
		}
		return f, nil
	case schema.TypeBoolean:
		switch c {
		case 't':
			return true, r.literal("true")
		case 'f':
			return false, r.literal("false")
		}
		return nil, fmt.Errorf("%s is not a boolean", r.describe())
	case schema.TypeString:
		if c != '"' {
			return nil, fmt.Errorf("%s is not a string", r.describe())
		}
		return r.str()
	case schema.TypeBytes:
		return base64Bytes()
	case schema.TypeArray:
		if c != '[' {
			return nil, fmt.Errorf("%s is not an array", r.describe())
		}
		r.i++
		out := []any{}
		if r.peek() == ']' {
			r.i++
			return out, nil
		}
		for {
			v, err := r.value(s.Items)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			switch r.peek() {
			case ',':
				r.i++
			case ']':
				r.i++
				return out, nil
			default:
				return nil, r.syntax()
			}
		}
	case schema.TypeMap:
		if s.Keys.Type != schema.TypeString {
			return nil, fmt.Errorf("a map with %s keys is not supported", s.Keys.Type)
		}
		if c != '{' {
			return nil, fmt.Errorf("%s is not an object", r.describe())
		}
		m := &Map{}
		err := r.object(func(k string) error {
			v, err := r.value(s.Values)
			if err == nil {
				m.Put(k, v)
			}
			return err
		})
		return m, err
	case schema.TypeStruct:
		if c != '{' {
			return nil, fmt.Errorf("%s is not an object", r.describe())
		}
		st := NewStruct(s)
		next := 0 // the field expected next: the writer's order is the schema's
		err := r.object(func(k string) error {
			i := -1
			if next < len(s.Fields) && s.Fields[next].Name == k {
				i = next
			} else {
				i = index(s, k)
			}
			if i < 0 {
				return r.skip() // JsonConverter reads the schema's fields only
			}
			next = i + 1
			v, err := r.value(s.Fields[i].Schema)
			if err != nil {
				return fmt.Errorf("field %q: %w", k, err)
			}
			st.Values[i] = v
			return nil
		})
		return st, err
	}
	return nil, fmt.Errorf("unknown schema type %q", s.Type)
}

// object reads an object (r.b[r.i] is its '{'), calling member for each
// key with r at its value, which member reads.
func (r *jsonReader) object(member func(k string) error) error {
	r.i++
	if r.peek() == '}' {
		r.i++
		return nil
	}
	for {
		if r.peek() != '"' {
			return r.syntax()
		}
		k, err := r.str()
		if err != nil {
			return err
		}
		if r.peek() != ':' {
			return r.syntax()
		}
		r.i++
		if err := member(k); err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.i++
		case '}':
			r.i++
			return nil
		default:
			return r.syntax()
		}
	}
}
