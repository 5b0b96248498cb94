package schema

import "slices"

// DecodeByteaHex appends to dst the bytes of a bytea in Postgres' hex
// output format ("\x0a0bff", bytea_output=hex, the default since 9.0 and the
// only format Debezium supports). The escape format is rejected.
func DecodeByteaHex(dst, src []byte) ([]byte, error) {
	if len(src) < 2 || src[0] != '\\' || src[1] != 'x' {
		return dst, errByteaFormat
	}
	src = src[2:]
	if len(src)%2 != 0 {
		return dst, errByteaHex
	}
	start := len(dst)
	dst = slices.Grow(dst, len(src)/2)[:start+len(src)/2]
	out := dst[start:]
	for i := range out {
		hi, lo := unhex[src[2*i]], unhex[src[2*i+1]]
		if hi|lo == 0xff {
			return dst[:start], errByteaHex
		}
		out[i] = hi<<4 | lo
	}
	return dst, nil
}

// unhex maps an ASCII hex digit to its value and anything else to 0xff.
// Valid values are below 16, so hi|lo == 0xff exactly when one is invalid.
var unhex = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
		t[c-'a'+'A'] = byte(c - 'a' + 10)
	}
	return t
}()
