package schema

import (
	"math"
	"strconv"
)

// This file turns the text of box, circle, line, lseg, path and polygon
// into the text Debezium 3.6.1 sends for them with
// include.unknown.datatypes=true.
//
// What Debezium 3.6.1 does (debezium-connector-postgres, v3.6.1.Final):
//
//   - PostgresValueConverter.schemaBuilder has no case for these six types
//     (nor for their arrays); they reach JdbcValueConverters.schemaBuilder
//     with JDBC type OTHER, which has no schema (debezium-connector-common
//     JdbcValueConverters.java:242-249). So by default the column is left
//     out of the record ("Unexpected JDBC type ... will be ignored",
//     TableSchemaBuilder.java:455), and with include.unknown.datatypes=true
//     it becomes binary.handling.mode's schema: BYTES, or STRING for
//     base64, base64-url-safe and hex (PostgresValueConverter.java:368-374,
//     converter at :565-567).
//   - The value is pgjdbc's object for the type (PGbox, PGcircle, PGline,
//     PGlseg, PGpath, PGpolygon: ReplicationMessageColumnValueResolver.java
//     :128-145 when streaming, ResultSet.getObject in the snapshot), and
//     convertBinaryToBytes sends its PGobject.getValue()
//     (PostgresValueConverter.java:1275-1283): the same shape as Postgres'
//     text, every coordinate printed by Java's Double.toString. The tests
//     expect "<(10.0,20.0),10.0>" for '((10, 20),10)'::circle
//     (AbstractRecordsProducerTest.java:462-476) and
//     "(1.0,1.0),(0.0,0.0)", "<(10.0,4.0),10.0>", "{-1.0,0.0,0.0}",
//     "[(0.0,0.0),(0.0,1.0)]", "((0.0,0.0),(0.0,1.0),(0.0,2.0))",
//     "((0.0,0.0),(0.0,1.0),(1.0,0.0),(0.0,0.0))" for the six types
//     (AbstractRecordsProducerTest.java:1007-1013).
//
// So appendJavaGeometric checks the text against the type's output
// grammar and rewrites each number with appendJavaDouble.

// appendJavaGeometric appends the pgjdbc getValue() text of a value of
// geometric type oid (box, circle, line, lseg, path, polygon) whose
// Postgres text is s. Text that is not the type's output form is
// errSyntax (dst unchanged); a coordinate past float64 is errRange.
func appendJavaGeometric(dst []byte, oid uint32, s []byte) ([]byte, error) {
	g := geoText{s: s, out: dst}
	var ok bool
	switch oid {
	case oidBox: // (x1,y1),(x2,y2)
		ok = g.point() && g.lit(',') && g.point()
	case oidLseg: // [(x1,y1),(x2,y2)]
		ok = g.lit('[') && g.point() && g.lit(',') && g.point() && g.lit(']')
	case oidPath: // [(x,y),…] open, ((x,y),…) closed
		if len(s) > 0 && s[0] == '[' {
			ok = g.lit('[') && g.points() && g.lit(']')
		} else {
			ok = g.lit('(') && g.points() && g.lit(')')
		}
	case oidPolygon: // ((x,y),…)
		ok = g.lit('(') && g.points() && g.lit(')')
	case oidCircle: // <(x,y),r>
		ok = g.lit('<') && g.point() && g.lit(',') && g.num() && g.lit('>')
	case oidLine: // {A,B,C}
		ok = g.lit('{') && g.num() && g.lit(',') && g.num() && g.lit(',') && g.num() && g.lit('}')
	}
	switch {
	case g.err != nil:
		return dst, g.err
	case !ok || g.i != len(s):
		return dst, errSyntax
	}
	return g.out, nil
}

// geoText is a cursor over geometric output text that copies the
// punctuation and rewrites the numbers.
type geoText struct {
	s   []byte
	i   int
	out []byte
	err error
}

func (g *geoText) lit(c byte) bool {
	if g.i < len(g.s) && g.s[g.i] == c {
		g.out = append(g.out, c)
		g.i++
		return true
	}
	return false
}

// num reads one float8out number up to the next ',', ')', ']', '}' or '>'.
func (g *geoText) num() bool {
	start := g.i
	for g.i < len(g.s) {
		c := g.s[g.i]
		if c == ',' || c == ')' || c == ']' || c == '}' || c == '>' {
			break
		}
		g.i++
	}
	f, err := parseFloat8(g.s[start:g.i])
	if err != nil {
		if err != errSyntax {
			g.err = err
		}
		return false
	}
	g.out = appendJavaDouble(g.out, f)
	return true
}

func (g *geoText) point() bool {
	return g.lit('(') && g.num() && g.lit(',') && g.num() && g.lit(')')
}

// points reads one or more points separated by ','.
func (g *geoText) points() bool {
	if !g.point() {
		return false
	}
	for g.i < len(g.s) && g.s[g.i] == ',' {
		if !g.lit(',') || !g.point() {
			return false
		}
	}
	return true
}

// appendJavaDouble appends f as Java's Double.toString prints it (JDK 19
// and later, the JDKs Debezium 3.x images run): the shortest decimal that
// reads back as f, the closer one when a 2-digit decimal does and a
// 1-digit one does too (4.9E-324, not 5E-324); plain notation with at
// least one fractional digit when 10^-3 <= |f| < 10^7 ("1.0", "0.001",
// "1234567.5"), else d.dddE±n ("1.0E7", "1.0E-4"); "NaN", "Infinity",
// "-Infinity", "-0.0".
func appendJavaDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	if math.Signbit(f) {
		dst = append(dst, '-')
		f = -f
	}
	if f == 0 {
		return append(dst, "0.0"...)
	}
	var tmp [32]byte
	digits, exp := decimalDigits(tmp[:0], f, -1)
	if len(digits) == 1 {
		// Java considers 2-digit decimals too when 1 digit is enough,
		// and takes the closest.
		var tmp2 [32]byte
		d2, e2 := decimalDigits(tmp2[:0], f, 1)
		if len(d2) == 2 && d2[1] != '0' {
			if back, err := strconv.ParseFloat(string(d2[:1])+"."+string(d2[1:])+"e"+strconv.Itoa(e2), 64); err == nil && back == f {
				digits, exp = append(tmp[:0], d2...), e2
			}
		}
	}
	return appendJavaDigits(dst, f, digits, exp)
}

// appendJavaDigits formats f > 0, whose significant digits and decimal
// exponent are given, as Java's Double.toString and Float.toString do.
func appendJavaDigits(dst []byte, f float64, digits []byte, exp int) []byte {
	if f >= 1e-3 && f < 1e7 {
		if exp >= 0 {
			for i := 0; i <= exp; i++ {
				if i < len(digits) {
					dst = append(dst, digits[i])
				} else {
					dst = append(dst, '0')
				}
			}
			dst = append(dst, '.')
			if exp+1 < len(digits) {
				return append(dst, digits[exp+1:]...)
			}
			return append(dst, '0')
		}
		dst = append(dst, "0."...)
		for i := -1; i > exp; i-- {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[0], '.')
	if len(digits) > 1 {
		dst = append(dst, digits[1:]...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(exp), 10)
}

// decimalDigits returns the significant digits of f > 0 (shortest when
// prec is -1, else prec+1 digits, correctly rounded) without trailing
// zeros, and the decimal exponent of the first: f ≈ d.ddd × 10^exp.
func decimalDigits(dst []byte, f float64, prec int) ([]byte, int) {
	b := strconv.AppendFloat(dst, f, 'e', prec, 64) // d.ddde±xx
	e := len(b) - 1
	for b[e] != 'e' {
		e--
	}
	exp, _ := strconv.Atoi(string(b[e+1:]))
	digits := b[:0]
	for _, c := range b[:e] {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	return digits, exp
}
