package schema

import "math"

// This file checks and writes the numeric types. Postgres' text output of
// integers, floats (extra_float_digits=3: shortest exact form) and numerics
// is already valid JSON number text (floats apart from NaN and the
// infinities), so a checked value is copied, not reformatted.

// parseInt parses Postgres' integer output: an optional '-' and decimal
// digits, within [lo, hi].
func parseInt(s []byte, lo, hi int64) (int64, error) {
	neg := len(s) > 0 && s[0] == '-'
	i := 0
	if neg {
		i = 1
	}
	if i == len(s) {
		return 0, errSyntax
	}
	var u uint64
	for ; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) {
			return 0, errSyntax
		}
		if u > (math.MaxUint64-9)/10 {
			return 0, errRange
		}
		u = u*10 + uint64(c-'0')
	}
	var v int64
	switch {
	case !neg && u <= math.MaxInt64:
		v = int64(u)
	case neg && u <= math.MaxInt64:
		v = -int64(u)
	case neg && u == math.MaxInt64+1:
		v = math.MinInt64
	default:
		return 0, errRange
	}
	if v < lo || v > hi {
		return 0, errRange
	}
	return v, nil
}

// validJSONNumber reports whether s matches RFC 8259's number grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validJSONNumber(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i == len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i == len(s)
}

// validNumeric reports whether s is Postgres' numeric output: NaN,
// Infinity, -Infinity (Postgres 14+) or -?[0-9]+(\.[0-9]+)? (numeric_out
// never uses an exponent).
func validNumeric(s []byte) bool {
	switch string(s) {
	case "NaN", "Infinity", "-Infinity":
		return true
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == start {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// parseBool parses Postgres' boolean output "t"/"f" (and "true"/"false").
func parseBool(s []byte) (bool, error) {
	switch string(s) {
	case "t", "true":
		return true, nil
	case "f", "false":
		return false, nil
	}
	return false, errSyntax
}
