package schema

import (
	"errors"
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// This file parses numeric and money text into the forms Debezium emits.
//
// What Debezium does (PostgresValueConverter, JdbcValueConverters and
// SpecialValueDecimal in debezium-core; checked against the sources):
//
//   - numeric, decimal.handling.mode=precise: a column with a declared
//     scale becomes org.apache.kafka.connect.data.Decimal (BYTES, the
//     unscaled value as BigInteger.toByteArray(): minimal big-endian two's
//     complement; schema parameters scale and connect.decimal.precision),
//     the value rescaled to the column scale (setScale, which Postgres'
//     output already has). A numeric without precision and scale becomes
//     io.debezium.data.VariableScaleDecimal, a struct {scale int32, value
//     bytes}, after BigDecimal.stripTrailingZeros() (a negative scale is
//     set back to 0): see trimDecimalZeros. NaN and ±Infinity have no
//     precise form: Debezium throws ("Got a special value (NaN/Infinity)
//     for Decimal type ... set decimal handling mode to 'string'").
//   - numeric, mode=double: BigDecimal.doubleValue(), NaN/±Infinity as the
//     double specials (SpecialValueDecimal.toDouble): decimalToFloat.
//   - numeric, mode=string: BigDecimal.toString(), which switches to
//     scientific notation when the adjusted exponent is below -6
//     ("0.00000010" -> "1.0E-7"): appendJavaDecimalString. Specials are
//     the enum names "NAN", "POSITIVE_INFINITY", "NEGATIVE_INFINITY".
//   - money: the text is parsed into a BigDecimal (PostgresMoney.parse:
//     strips parentheses or a leading '-', one leading currency character
//     and every ','). precise: Decimal with scale money.fraction.digits
//     (default 2), setScale(..., HALF_UP); double: doubleValue(); string:
//     BigDecimal.toPlainString(), i.e. the digits as Postgres printed
//     them ("$1,234.50" -> "1234.50"). Debezium releases before
//     debezium/dbz#2100 (mid 2026) went through PGmoney's double instead,
//     so their string mode printed String.valueOf(double) ("1234.5",
//     "1.0E7") and lost precision past 2^53 cents.

// numSpecial tells a finite numeric from Postgres' special values.
type numSpecial uint8

// The numeric special values; Infinity and -Infinity exist since
// Postgres 14.
const (
	numFinite numSpecial = iota
	numNaN
	numPosInf
	numNegInf
)

// errMoneyFormat is returned for money text outside the C/en_US format.
var errMoneyFormat = errors.New(`money is not in the C/en_US format ("$1,234.56", "-$1,234.56" or "($1,234.56)"); set lc_monetary to C or en_US for the replication connection`)

// numericSpecial maps Postgres' special numeric texts.
func numericSpecial(s []byte) numSpecial {
	switch string(s) {
	case "NaN":
		return numNaN
	case "Infinity":
		return numPosInf
	case "-Infinity":
		return numNegInf
	}
	return numFinite
}

// scanNumeric checks numeric_out's grammar -?[0-9]+(\.[0-9]+)? (it never
// prints an exponent or a '+') and returns where the integer digits start,
// where the '.' is (len(s) if none) and the number of significant digits
// (digits after the leading zeros of the integer part).
func scanNumeric(s []byte) (neg bool, start, dot, sig int, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	start = i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == start {
		return
	}
	dot = i
	if i < len(s) {
		if s[i] != '.' {
			return
		}
		i++
		if i == len(s) {
			return
		}
		for ; i < len(s); i++ {
			if !isDigit(s[i]) {
				return
			}
		}
	}
	// Significant digits: skip leading zeros across the point.
	j := start
	for j < len(s) && (s[j] == '0' || s[j] == '.') {
		j++
	}
	sig = len(s) - j
	if dot < len(s) && j < dot {
		sig-- // the '.' lies inside the significant digits
	}
	return neg, start, dot, sig, true
}

// parseDecimal parses Postgres' numeric output ("-12.340", "0", "NaN",
// "Infinity", "-Infinity") and appends to dst the unscaled value in the
// form Kafka Connect's Decimal and Avro's decimal logical type carry:
// java.math.BigInteger.toByteArray(), the minimal big-endian two's
// complement bytes (0 -> 00, 127 -> 7F, 128 -> 00 80, -1 -> FF, -129 ->
// FF 7F). scale is the number of digits after the point. For the special
// values it returns special != numFinite and dst unchanged. An exponent
// ("1e5"), a '+', a missing digit on either side of the point or any other
// byte is errSyntax: numeric_out never prints them.
//
// Values with up to 18 significant digits take an allocation-free path;
// longer ones (numeric has up to 131072 digits before the point and 16383
// after) go through math/big.
func parseDecimal(s []byte, dst []byte) (unscaled []byte, scale int32, special numSpecial, err error) {
	if sp := numericSpecial(s); sp != numFinite {
		return dst, 0, sp, nil
	}
	neg, start, dot, sig, ok := scanNumeric(s)
	if !ok {
		return dst, 0, numFinite, errSyntax
	}
	frac := 0
	if dot < len(s) {
		frac = len(s) - dot - 1
	}
	if frac > math.MaxInt32 {
		return dst, 0, numFinite, errRange
	}
	scale = int32(frac)
	if sig <= 18 {
		var u uint64
		for i := start; i < len(s); i++ {
			if c := s[i]; c != '.' {
				u = u*10 + uint64(c-'0')
			}
		}
		v := int64(u)
		if neg {
			v = -v
		}
		return appendTwosComplement(dst, v), scale, numFinite, nil
	}
	digits := make([]byte, 0, len(s)-start)
	for i := start; i < len(s); i++ {
		if s[i] != '.' {
			digits = append(digits, s[i])
		}
	}
	var z big.Int
	if _, ok := z.SetString(string(digits), 10); !ok {
		return dst, 0, numFinite, errSyntax
	}
	if neg {
		z.Neg(&z)
	}
	return appendBigTwosComplement(dst, &z), scale, numFinite, nil
}

// appendTwosComplement appends v as BigInteger.valueOf(v).toByteArray():
// the fewest big-endian bytes whose top bit is the sign.
func appendTwosComplement(dst []byte, v int64) []byte {
	m := uint64(v)
	if v < 0 {
		m = ^m // |v|-1, whose bit length decides the size as for v >= 0
	}
	n := bits.Len64(m)/8 + 1
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(uint64(v)>>(8*uint(i))))
	}
	return dst
}

// appendBigTwosComplement is appendTwosComplement for a big.Int.
func appendBigTwosComplement(dst []byte, z *big.Int) []byte {
	if z.IsInt64() {
		return appendTwosComplement(dst, z.Int64())
	}
	var m big.Int
	if z.Sign() < 0 {
		m.Neg(z)
		m.Sub(&m, big.NewInt(1)) // |z|-1; its inverted bytes are z
	} else {
		m.Set(z)
	}
	n := m.BitLen()/8 + 1
	start := len(dst)
	for range n {
		dst = append(dst, 0)
	}
	m.FillBytes(dst[start:])
	if z.Sign() < 0 {
		for i := start; i < len(dst); i++ {
			dst[i] = ^dst[i]
		}
	}
	return dst
}

// decimalToFloat converts numeric text for decimal.handling.mode=double:
// BigDecimal.doubleValue() (correctly rounded, like strconv.ParseFloat),
// or NaN/±Inf for the special values (SpecialValueDecimal.toDouble). A
// magnitude past float64's range becomes ±Inf as in Java, not an error,
// and -0 becomes +0 (BigDecimal has no negative zero).
func decimalToFloat(s []byte) (float64, error) {
	switch numericSpecial(s) {
	case numNaN:
		return math.NaN(), nil
	case numPosInf:
		return math.Inf(1), nil
	case numNegInf:
		return math.Inf(-1), nil
	}
	if _, _, _, _, ok := scanNumeric(s); !ok {
		return 0, errSyntax
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		var ne *strconv.NumError
		if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
			return 0, errSyntax
		}
		// f is ±Inf on overflow, 0 on underflow: what doubleValue gives.
	}
	if f == 0 {
		f = 0 // drop the sign of -0
	}
	return f, nil
}

// trimDecimalZeros removes trailing zeros after the point (and the point
// if nothing is left after it) from numeric text: BigDecimal's
// stripTrailingZeros() followed by setScale(0) for a negative scale, as
// Debezium does before building a VariableScaleDecimal. "1.500" -> "1.5",
// "100" -> "100", "0.000" -> "0". Special values are returned unchanged.
func trimDecimalZeros(s []byte) []byte {
	dot := -1
	for i, c := range s {
		if c == '.' {
			dot = i
			break
		}
	}
	if dot < 0 {
		return s
	}
	end := len(s)
	for end > dot+1 && s[end-1] == '0' {
		end--
	}
	if end == dot+1 {
		end = dot
	}
	return s[:end]
}

// appendJavaDecimalString appends numeric text the way Debezium writes it
// for decimal.handling.mode=string: java.math.BigDecimal.toString() of
// new BigDecimal(text). That is the plain text unless the adjusted
// exponent (-scale + digits-1) is below -6, where Java switches to
// scientific notation: "0.0000001" -> "1E-7", "0.00000010" -> "1.0E-7",
// "0.0000000" -> "0E-7", "-0.000000123" -> "-1.23E-7". Specials become
// Debezium's enum names NAN, POSITIVE_INFINITY and NEGATIVE_INFINITY.
func appendJavaDecimalString(dst, s []byte) ([]byte, error) {
	switch numericSpecial(s) {
	case numNaN:
		return append(dst, "NAN"...), nil
	case numPosInf:
		return append(dst, "POSITIVE_INFINITY"...), nil
	case numNegInf:
		return append(dst, "NEGATIVE_INFINITY"...), nil
	}
	neg, _, dot, sig, ok := scanNumeric(s)
	if !ok {
		return dst, errSyntax
	}
	scale := 0
	if dot < len(s) {
		scale = len(s) - dot - 1
	}
	// The coefficient's digit count; a zero coefficient has one digit.
	ndig := sig
	if ndig == 0 {
		ndig = 1
	}
	adjusted := int64(ndig-1) - int64(scale)
	if scale == 0 || adjusted >= -6 {
		// Plain: Postgres' text already is BigDecimal's layout except for a
		// negative zero, which BigDecimal does not have.
		if neg && sig == 0 {
			return append(dst, s[1:]...), nil
		}
		return append(dst, s...), nil
	}
	// Scientific: the significant digits (they all follow the point here,
	// as adjusted < -6 means the integer part is 0) with a point after the
	// first, then E and the exponent.
	if neg && sig > 0 {
		dst = append(dst, '-')
	}
	first := true
	if sig == 0 {
		dst = append(dst, '0')
	} else {
		for i := len(s) - sig; i < len(s); i++ {
			dst = append(dst, s[i])
			if first && i+1 < len(s) {
				dst = append(dst, '.')
			}
			first = false
		}
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, adjusted, 10), nil
}

// parseMoney parses Postgres' money output into plain numeric text
// appended to dst: "$1,234.56" -> "1234.56", "-$1,234.56" -> "-1234.56",
// "($1,234.56)" -> "-1234.56", "$0.00" -> "0.00". It keeps the fractional
// digits as printed, which is what Debezium's string mode emits
// (BigDecimal.toPlainString of the parsed text); the caller rescales to
// money.fraction.digits for the precise mode.
//
// Supported: the C and en_US lc_monetary formats, i.e. an optional '-'
// before the amount or parentheses around it, an optional '$', digits
// grouped by ',' in threes and an optional '.' with fractional digits
// (money text without a currency symbol is accepted too). Other locales
// ("1.234,56 €", "EUR 1 234,56") are errMoneyFormat: Debezium itself only
// strips one leading currency character and ',' separators, so they fail
// or go wrong there as well.
func parseMoney(s []byte, dst []byte) ([]byte, error) {
	neg := false
	switch {
	case len(s) >= 2 && s[0] == '(' && s[len(s)-1] == ')':
		neg = true
		s = s[1 : len(s)-1]
	case len(s) >= 1 && s[0] == '-':
		neg = true
		s = s[1:]
	}
	if len(s) > 0 && s[0] == '$' {
		s = s[1:]
	}
	// Integer part: 1-3 digits, then groups of ",ddd".
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == 0 || i > 3 && hasComma(s) {
		return dst, errMoneyFormat
	}
	for i < len(s) && s[i] == ',' {
		if i+4 > len(s) || !isDigit(s[i+1]) || !isDigit(s[i+2]) || !isDigit(s[i+3]) {
			return dst, errMoneyFormat
		}
		i += 4
	}
	intEnd := i
	if i < len(s) {
		if s[i] != '.' || i+1 == len(s) {
			return dst, errMoneyFormat
		}
		for i++; i < len(s); i++ {
			if !isDigit(s[i]) {
				return dst, errMoneyFormat
			}
		}
	}
	if neg {
		dst = append(dst, '-')
	}
	for j := 0; j < intEnd; j++ {
		if s[j] != ',' {
			dst = append(dst, s[j])
		}
	}
	return append(dst, s[intEnd:]...), nil
}

// roundHalfUp returns plain decimal text s ("-?d+(.d+)?", as parseMoney
// writes it) with at most scale fractional digits, rounded as Debezium
// rounds money in precise mode: BigDecimal.setScale(money.fraction.digits,
// RoundingMode.HALF_UP), i.e. away from zero when the first dropped digit
// is 5 or more ($123.46 at scale 1 is 123.5, -$0.05 at scale 1 is -0.1,
// $0.04 at scale 0 is 0). A rounded zero loses its sign, as BigDecimal has
// no negative zero. s is returned as is when it has scale or fewer
// fractional digits; otherwise the result is written to *buf.
func roundHalfUp(s []byte, scale int, buf *[]byte) []byte {
	num := s
	neg := len(num) > 0 && num[0] == '-'
	if neg {
		num = num[1:]
	}
	dot := -1
	for i, c := range num {
		if c == '.' {
			dot = i
			break
		}
	}
	if dot < 0 || len(num)-dot-1 <= scale {
		return s
	}
	kept := num[:dot+1+scale]
	if scale == 0 {
		kept = num[:dot]
	}
	up := num[dot+1+scale] >= '5'
	b := (*buf)[:0]
	if neg {
		b = append(b, '-')
	}
	start := len(b)
	b = append(b, kept...)
	if up {
		i := len(b) - 1
		for ; i >= start; i-- {
			if b[i] == '.' {
				continue
			}
			if b[i] < '9' {
				b[i]++
				break
			}
			b[i] = '0'
		}
		if i < start { // carried out of the top digit: 9.96 -> 10.0
			b = append(b, 0)
			copy(b[start+1:], b[start:])
			b[start] = '1'
		}
	}
	if neg && !up && onlyZeros(b[start:]) {
		b = append(b[:0], b[start:]...)
	}
	*buf = b
	return b
}

// onlyZeros reports whether decimal text s has no digit but 0.
func onlyZeros(s []byte) bool {
	for _, c := range s {
		if c != '0' && c != '.' {
			return false
		}
	}
	return true
}

// hasComma reports whether s contains a ','.
func hasComma(s []byte) bool {
	for _, c := range s {
		if c == ',' {
			return true
		}
	}
	return false
}
