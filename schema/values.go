package schema

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"unsafe"
)

// This file converts one scalar column value from its Postgres text form
// into a datum, the format-neutral value both encoders write. Arrays and
// hstore maps are walked by the encoders, which convert their elements
// here one at a time.

// dkind is the kind of a datum.
type dkind uint8

const (
	dNull   dkind = iota
	dBool         // i: 0 or 1
	dInt          // i
	dFloat        // f, and b: Postgres' text when it came from one
	dString       // b: UTF-8 text
	dBytes        // b
	dVarDec       // VariableScaleDecimal: i scale, b unscaled bytes
	dPoint        // f x, g y, b WKB
	dGeom         // PostGIS {wkb, srid}: b wkb, i srid when hasSRID
)

// datum is one converted value. Its bytes live in the converter's scratch
// buffers and are valid until the next conversion.
type datum struct {
	k       dkind
	hasSRID bool // dGeom: srid (i) is set, else null
	i       int64
	f, g    float64
	b       []byte
}

// converter holds the scratch buffers of conversions; one per encoder.
type converter struct {
	buf  []byte // decoded bytes, decimal digits
	txt  []byte // formatted text
	tmp  []byte
	elem []arrayElem
	ebuf []byte
	hs   []hstorePair
	hbuf []byte
	// vec and sparse hold a pgvector value's elements (values_vector.go).
	vec    []float64
	sparse []sparseEntry
	// mapped holds the last column mapper's result (plan.go rewrites).
	mapped []byte
}

// mappable converts v, a value of a scalar column, for a column mapper:
// its datum, or null; an unchanged TOASTed value is the placeholder ph as
// a string.
func (cv *converter) mappable(t *colType, v Value, ph []byte) (datum, bool, error) {
	switch v.Kind {
	case ValueNull:
		return datum{k: dNull}, true, nil
	case ValueUnchangedToast:
		return datum{k: dString, b: ph}, false, nil
	}
	d, err := cv.scalar(t, v.Data)
	return d, d.k == dNull, err
}

// Errors of conversions that are not syntax errors.
var (
	errDecimalSpecial = errors.New("NaN or infinity cannot be a Decimal in a NOT NULL column; set format.decimal_handling_mode to double or string")
	errScale          = errors.New("more fractional digits than the column's scale")
)

// bstr views b as a string without copying, for parsers that do not keep
// their argument (their errors are replaced, never returned).
func bstr(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// scalar converts s, the text of a non-NULL value of type t (not an array
// or a map). A NaN or infinite decimal in precise mode converts to dNull
// when the schema is optional (Debezium's SpecialValueDecimal has no
// Decimal form).
func (cv *converter) scalar(t *colType, s []byte) (datum, error) {
	switch t.conv {
	case convString:
		return datum{k: dString, b: s}, nil
	case convBool:
		b, err := parseBool(s)
		if err != nil {
			return datum{}, err
		}
		return boolDatum(b), nil
	case convBitBool:
		b, err := parseBitBool(s)
		if err != nil {
			return datum{}, err
		}
		return boolDatum(b), nil
	case convInt16, convInt32, convInt64, convOID:
		n, err := intValue(t.conv, s)
		if err != nil {
			return datum{}, err
		}
		return datum{k: dInt, i: n}, nil
	case convFloat32, convFloat64:
		bits := 64
		if t.conv == convFloat32 {
			bits = 32
		}
		f, err := parseFloat(s, bits)
		if err != nil {
			return datum{}, err
		}
		return datum{k: dFloat, f: f, b: s}, nil
	case convDecimal, convMoney:
		if t.conv == convMoney {
			var err error
			if cv.txt, err = parseMoney(s, cv.txt[:0]); err != nil {
				return datum{}, err
			}
			s = cv.txt
		}
		want := decimalScale(t.schema)
		if t.conv == convMoney {
			// money_fraction_digits below the value's digits: Debezium
			// rounds (HALF_UP) where numeric(p,s) text never needs it.
			s = roundHalfUp(s, want, &cv.tmp)
		}
		var err error
		if s, err = fixScale(s, want, &cv.tmp); err != nil {
			return datum{}, err
		}
		unscaled, _, special, err := parseDecimal(s, cv.buf[:0])
		if err != nil {
			return datum{}, err
		}
		cv.buf = unscaled
		if special != numFinite {
			return specialDecimal(t)
		}
		return datum{k: dBytes, b: unscaled}, nil
	case convVarDecimal:
		// Debezium strips trailing zeros before building the
		// VariableScaleDecimal: 1.500 is {scale 1, 15}.
		if !validNumeric(s) {
			return datum{}, errSyntax
		}
		unscaled, scale, special, err := parseDecimal(trimDecimalZeros(s), cv.buf[:0])
		if err != nil {
			return datum{}, err
		}
		cv.buf = unscaled
		if special != numFinite {
			return specialDecimal(t)
		}
		return datum{k: dVarDec, i: int64(scale), b: unscaled}, nil
	case convDecimalDouble, convMoneyDouble:
		if t.conv == convMoneyDouble {
			var err error
			if cv.txt, err = parseMoney(s, cv.txt[:0]); err != nil {
				return datum{}, err
			}
			s = cv.txt
		}
		f, err := decimalToFloat(s)
		if err != nil {
			return datum{}, err
		}
		return datum{k: dFloat, f: f}, nil
	case convDecimalString:
		// Java's BigDecimal.toString(), as Debezium writes it: plain, or
		// scientific below 1E-6; NaN and the infinities by enum name.
		var err error
		if cv.txt, err = appendJavaDecimalString(cv.txt[:0], s); err != nil {
			return datum{}, err
		}
		return datum{k: dString, b: cv.txt}, nil
	case convMoneyString:
		var err error
		if cv.txt, err = parseMoney(s, cv.txt[:0]); err != nil {
			return datum{}, err
		}
		return datum{k: dString, b: cv.txt}, nil
	case convBytes, convBytesBase64, convBytesBase64URL, convBytesHex:
		var err error
		if cv.buf, err = DecodeByteaHex(cv.buf[:0], s); err != nil {
			return datum{}, err
		}
		return cv.binary(t.conv, cv.buf), nil
	case convDate:
		days, inf, err := ParseDate(s)
		switch {
		case err != nil:
			return datum{}, err
		case inf == PosInfinity:
			days = datePosInfinity
		case inf == NegInfinity:
			days = dateNegInfinity
		}
		return datum{k: dInt, i: int64(days)}, nil
	case convTimeMillis, convTimeMicros, convTimeNanos:
		us, err := ParseTime(s)
		if err != nil {
			return datum{}, err
		}
		switch t.conv {
		case convTimeMillis:
			us /= 1000
		case convTimeNanos:
			us *= 1000 // at most 24:00:00, 8.64e13 ns
		}
		return datum{k: dInt, i: us}, nil
	case convTimestampMillis, convTimestampMicros, convTimestampNanos:
		us, inf, err := ParseTimestamp(s)
		nanos := t.conv == convTimestampNanos
		switch {
		case err != nil:
			return datum{}, err
		case inf == PosInfinity && nanos:
			// PostgresValueConverter.java:1234-1256: Long.MAX_VALUE / MIN_VALUE.
			return datum{k: dInt, i: math.MaxInt64}, nil
		case inf == NegInfinity && nanos:
			return datum{k: dInt, i: math.MinInt64}, nil
		case inf == PosInfinity:
			return datum{k: dInt, i: timestampPosInfinity}, nil
		case inf == NegInfinity:
			return datum{k: dInt, i: timestampNegInfinity}, nil
		}
		switch t.conv {
		case convTimestampMillis:
			us = floorDiv(us, 1000)
		case convTimestampNanos:
			// Nanoseconds since 1970 fit in an int64 from 1677 to 2262;
			// beyond, Debezium's Math.multiplyExact throws
			// (NanoTimestamp.java:104) and mooncdc reports a value error.
			if us > math.MaxInt64/1000 || us < math.MinInt64/1000 {
				return datum{}, errRange
			}
			us *= 1000
		}
		return datum{k: dInt, i: us}, nil
	case convDateISO, convTimeISO, convTimestampISO:
		b, err := appendISOTemporal(cv.txt[:0], t.conv, s)
		if err != nil {
			return datum{}, err
		}
		cv.txt = b
		return datum{k: dString, b: b}, nil
	case convTimestamptz:
		us, inf, err := ParseTimestamptz(s)
		switch {
		case err != nil:
			return datum{}, err
		case inf == PosInfinity:
			return datum{k: dString, b: textInfinity}, nil
		case inf == NegInfinity:
			return datum{k: dString, b: textNegInfinity}, nil
		}
		cv.txt = appendZonedTimestamp(cv.txt[:0], us, int(t.prec))
		return datum{k: dString, b: cv.txt}, nil
	case convTimetz:
		us, off, err := ParseTimetz(s)
		if err != nil {
			return datum{}, err
		}
		cv.txt = appendZonedTime(cv.txt[:0], timetzToUTC(us, off))
		return datum{k: dString, b: cv.txt}, nil
	case convIntervalMicros, convIntervalString:
		months, days, us, err := parseInterval(s)
		if err != nil {
			return datum{}, err
		}
		if intervalInfinity(months, days, us) != 0 {
			months, days, us = 0, 0, 0 // Postgres 17's infinite interval: Debezium gives 0
		}
		if t.conv == convIntervalMicros {
			return datum{k: dInt, i: intervalMicroDuration(months, days, us)}, nil
		}
		cv.txt = appendISOInterval(cv.txt[:0], months, days, us)
		return datum{k: dString, b: cv.txt}, nil
	case convBits:
		var err error
		if cv.buf, err = parseBits(s, cv.buf[:0]); err != nil {
			return datum{}, err
		}
		return datum{k: dBytes, b: cv.buf}, nil
	case convHstoreJSON:
		var err error
		if cv.hs, cv.hbuf, err = parseHstore(s, cv.hs[:0], cv.hbuf[:0]); err != nil {
			return datum{}, err
		}
		javaHashMapOrder(cv.hs) // Debezium goes through a java.util.HashMap
		cv.txt = appendHstoreJSON(cv.txt[:0], cv.hs)
		return datum{k: dString, b: cv.txt}, nil
	case convGeoText:
		var err error
		if cv.tmp, err = appendJavaGeometric(cv.tmp[:0], t.geo, s); err != nil {
			return datum{}, err
		}
		return cv.binary(t.bin, cv.tmp), nil
	case convPoint:
		x, y, err := parsePoint(s)
		if err != nil {
			return datum{}, err
		}
		cv.buf = appendPointWKB(cv.buf[:0], x, y)
		return datum{k: dPoint, f: x, g: y, b: cv.buf}, nil
	case convGeometry:
		wkb, srid, has, err := decodeEWKB(cv.buf[:0], s)
		if err != nil {
			return datum{}, err
		}
		cv.buf = wkb
		return datum{k: dGeom, b: wkb, i: int64(srid), hasSRID: has}, nil
	}
	return datum{}, errors.New("internal: composite type converted as a scalar")
}

var (
	textInfinity    = []byte("infinity")
	textNegInfinity = []byte("-infinity")
)

func boolDatum(b bool) datum {
	if b {
		return datum{k: dBool, i: 1}
	}
	return datum{k: dBool}
}

func specialDecimal(t *colType) (datum, error) {
	if t.schema.Optional {
		return datum{k: dNull}, nil
	}
	return datum{}, errDecimalSpecial
}

// decimalScale reads the scale parameter of a Decimal schema.
func decimalScale(s *Schema) int {
	for _, p := range s.Params {
		if p.Key == "scale" {
			n, _ := strconv.Atoi(p.Value)
			return n
		}
	}
	return 0
}

// fixScale returns numeric text s with exactly want fractional digits,
// padding with zeros (in *buf) when it has fewer. More digits than want is
// an error: dropping them would change the value. NaN and the infinities
// pass through.
func fixScale(s []byte, want int, buf *[]byte) ([]byte, error) {
	have := -1
	for i, c := range s {
		if c == '.' {
			have = len(s) - i - 1
			break
		}
	}
	if len(s) > 0 && (s[0] == 'N' || s[0] == 'I' || (len(s) > 1 && s[1] == 'I')) {
		return s, nil
	}
	switch {
	case have == want || (have < 0 && want == 0):
		return s, nil
	case have > want:
		return nil, errScale
	}
	b := append((*buf)[:0], s...)
	if have < 0 {
		b = append(b, '.')
		have = 0
	}
	for ; have < want; have++ {
		b = append(b, '0')
	}
	*buf = b
	return b, nil
}

// parseFloat parses float4/float8 output, including NaN and the
// infinities.
func parseFloat(s []byte, bits int) (float64, error) {
	switch string(s) {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	if !validJSONNumber(s) {
		return 0, errSyntax
	}
	f, err := strconv.ParseFloat(bstr(s), bits)
	if err != nil {
		return 0, errRange
	}
	return f, nil
}

// appendHstoreJSON writes hstore pairs as the JSON object text Debezium's
// hstore.handling.mode=json produces: {"key":"value","k2":null}.
func appendHstoreJSON(dst []byte, pairs []hstorePair) []byte {
	dst = append(dst, '{')
	for i, p := range pairs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, p.Key)
		dst = append(dst, ':')
		if p.Null {
			dst = append(dst, "null"...)
		} else {
			dst = appendJSONString(dst, p.Value)
		}
	}
	return append(dst, '}')
}

// timetzToUTC shifts a local time of day by its offset into UTC, wrapping
// around midnight like java.time's OffsetTime.withOffsetSameInstant. The
// end-of-day boundary 24:00:00 at UTC stays 24:00:00, as in Debezium.
func timetzToUTC(local int64, offset int32) int64 {
	if offset == 0 {
		return local
	}
	us := (local - int64(offset)*microsPerSecond) % microsPerDay
	if us < 0 {
		us += microsPerDay
	}
	return us
}

// intValue is the value of an integer column (convInt16, convInt32,
// convInt64, convOID) of text s.
func intValue(k conv, s []byte) (int64, error) {
	lo, hi := intRange(k)
	return parseInt(s, lo, hi)
}

func intRange(k conv) (lo, hi int64) {
	switch k {
	case convInt16:
		return -1 << 15, 1<<15 - 1
	case convInt32:
		return -1 << 31, 1<<31 - 1
	case convOID:
		return 0, 1<<32 - 1
	}
	return -1 << 63, 1<<63 - 1
}

// binary is b in binary_handling_mode form mode (one of the convBytes*
// conversions): bytes, or a base64, base64-url-safe or hex string.
func (cv *converter) binary(mode conv, b []byte) datum {
	switch mode {
	case convBytesBase64:
		cv.txt = base64.StdEncoding.AppendEncode(cv.txt[:0], b)
	case convBytesBase64URL:
		cv.txt = base64.URLEncoding.AppendEncode(cv.txt[:0], b)
	case convBytesHex:
		cv.txt = hex.AppendEncode(cv.txt[:0], b)
	default:
		return datum{k: dBytes, b: b}
	}
	return datum{k: dString, b: cv.txt}
}
