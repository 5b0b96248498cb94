package transform

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
)

// This file renders and parses numbers as Java does, for Cast: Cast's
// string target is Object.toString, its number targets Number.xxxValue
// and Byte.parseByte …

// JavaDouble is Double.toString (and Float.toString with bits 32) as Java
// 19+ writes it (Cast's string target here; connectformat's JSON numbers,
// as Jackson writes them, use it too): the shortest digits that round-trip; plain decimal with at
// least one fractional digit for 1e-3 ≤ |v| < 1e7, else d.dddE±n.
func JavaDouble(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	case v == 0:
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	abs := math.Abs(v)
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'e', -1, bits) // 1.2345e+10
	if !strings.Contains(s, ".") {
		// One digit is enough: Java then picks, among the decimals of one
		// or two digits that round to v, the closest (Double.toString's
		// Javadoc, JDK 19+): Double.MIN_VALUE is 4.9E-324, not 5.0E-324.
		// Only subnormals, whose rounding interval is wide, differ.
		if two := strconv.FormatFloat(v, 'e', 1, bits); parsesTo(two, v, bits) {
			s = two
		}
	}
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	exp = strings.TrimPrefix(exp, "+")
	neg := strings.HasPrefix(exp, "-")
	exp = strings.TrimLeft(strings.TrimPrefix(exp, "-"), "0")
	if neg {
		exp = "-" + exp
	}
	return mant + "E" + exp
}

// parsesTo reports whether the decimal s reads back as v in bits.
func parsesTo(s string, v float64, bits int) bool {
	f, err := strconv.ParseFloat(s, bits)
	return err == nil && f == v
}

// String is BigDecimal.toString: plain when the scale is ≥ 0 and the
// adjusted exponent ≥ -6, else scientific notation.
func (d Decimal) String() string {
	digits := new(big.Int).Abs(d.Unscaled).String()
	sign := ""
	if d.Unscaled.Sign() < 0 {
		sign = "-"
	}
	scale := int(d.Scale)
	adjusted := -scale + len(digits) - 1
	if scale >= 0 && adjusted >= -6 {
		if scale == 0 {
			return sign + digits
		}
		if len(digits) > scale {
			return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
		}
		return sign + "0." + strings.Repeat("0", scale-len(digits)) + digits
	}
	s := digits[:1]
	if len(digits) > 1 {
		s += "." + digits[1:]
	}
	s += "E"
	if adjusted >= 0 {
		s += "+"
	}
	return sign + s + strconv.Itoa(adjusted)
}

// rat returns d as an exact rational.
func (d Decimal) rat() *big.Rat {
	r := new(big.Rat).SetInt(d.Unscaled)
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(d.Scale))), nil)
	if d.Scale >= 0 {
		return r.Quo(r, new(big.Rat).SetInt(p))
	}
	return r.Mul(r, new(big.Rat).SetInt(p))
}

func abs32(n int32) int32 {
	if n < 0 {
		return -n
	}
	return n
}

// longValue is BigDecimal.longValue: the integer part, its low 64 bits.
func (d Decimal) longValue() int64 {
	r := d.rat()
	q := new(big.Int).Quo(r.Num(), r.Denom()) // toward zero
	return lowBits(q)
}

// lowBits is BigInteger.longValue: the low 64 bits of two's complement.
func lowBits(q *big.Int) int64 {
	m := new(big.Int).And(q, new(big.Int).SetUint64(math.MaxUint64))
	return int64(m.Uint64())
}

// float64Value is BigDecimal.doubleValue: the nearest double.
func (d Decimal) float64Value() float64 {
	f, _ := d.rat().Float64()
	return f
}

func (d Decimal) float32Value() float32 {
	f, _ := d.rat().Float32()
	return f
}

// javaD2I is Java's (int) of a double: toward zero, NaN 0, saturating.
func javaD2I(f float64) int32 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int32(f)
}

// javaD2L is Java's (long) of a double.
func javaD2L(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// parseJavaFloat is Double.parseDouble / Float.parseFloat for the forms
// Java accepts: surrounding whitespace, an optional f/F/d/D suffix, NaN
// and [+-]Infinity spelled exactly so, and hexadecimal floats
// ("0x1.8p1": a binary exponent required, as in Go).
func parseJavaFloat(s string, bits int) (float64, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	switch s {
	case "NaN", "+NaN", "-NaN":
		return math.NaN(), true
	case "Infinity", "+Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	if n := len(s); n > 0 && strings.ContainsRune("fFdD", rune(s[n-1])) {
		s = s[:n-1]
	}
	unsigned := strings.TrimLeft(s, "+-")
	hex := strings.HasPrefix(unsigned, "0x") || strings.HasPrefix(unsigned, "0X")
	for _, c := range s {
		ok := c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-'
		if hex {
			ok = ok || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == 'x' || c == 'X' || c == 'p' || c == 'P'
		} else {
			ok = ok || c == 'e' || c == 'E'
		}
		if !ok {
			return 0, false // also Go's underscores and inf/nan spellings Java has not
		}
	}
	f, err := strconv.ParseFloat(s, bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true // Java rounds to ±Infinity or 0, as ParseFloat does
		}
		return 0, false
	}
	return f, true
}

// parseJavaInt is Long.parseLong (Integer.parseInt … by bits): an optional
// sign and decimal digits, any Unicode decimal digit counting as Java's
// Character.digit counts it ("١٢" is 12), within the range of bits.
func parseJavaInt(s string, bits int) (int64, bool) {
	var b strings.Builder
	for i, r := range s {
		if i == 0 && (r == '-' || r == '+') {
			b.WriteRune(r)
			continue
		}
		d := javaDigit(r)
		if d < 0 || r > 0xFFFF {
			// Java reads chars: a digit outside the BMP is two surrogates,
			// neither a digit ("𝟙" fails).
			return 0, false
		}
		b.WriteByte(byte('0' + d))
	}
	// "+" or "-" alone, and "", fail here as in Java.
	n, err := strconv.ParseInt(b.String(), 10, bits)
	return n, err == nil
}

// javaDigit is Character.digit(r, 10): the value of a decimal digit of
// any script (Unicode category Nd, whose digits come in runs of ten from
// zero), -1 for anything else. The scripts known are those of Go's
// Unicode tables; a JVM of another Unicode version knows a few more or
// fewer (the values of the digits both know agree).
func javaDigit(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if r < 0x80 || !unicode.IsDigit(r) {
		return -1
	}
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) / int(rg.Stride) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) / int(rg.Stride) % 10
		}
	}
	return -1
}
