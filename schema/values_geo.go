package schema

import (
	"encoding/binary"
	"math"
	"strconv"
)

// This file parses the geometric point type and writes its WKB.
//
// What Debezium does with Postgres' built-in geometric types (checked
// against PostgresValueConverter's sources):
//
//   - point: io.debezium.data.geometry.Point, a struct {x FLOAT64,
//     y FLOAT64, wkb optional BYTES, srid optional INT32}, filled by
//     Point.createValue(schema, x, y): x and y from pgjdbc's PGpoint (the
//     text parsed with Double.parseDouble, so NaN and ±Infinity pass), wkb
//     = Point.buildWKBPoint(x, y), srid null. See appendPointWKB.
//   - box, circle, line, lseg, path, polygon, in the older
//     PostgresValueConverter versions (the 1.x/2.x-era source read for
//     this; the exact release of the change below was not pinned down):
//     no mapping at all. They fall through to the JDBC default, which has
//     no schema for their JDBC type (OTHER), so the column is left out of
//     the record (with a warning), or, with include.unknown.datatypes=true,
//     sent as BYTES holding the text.
//   - In the newest PostgresValueConverter source (main branch, 2026):
//     box, lseg, path and polygon become io.debezium.data.geometry.Geometry
//     {wkb, srid null} plus an extensions map naming the source type (box
//     as a closed 5-point POLYGON ring (x1,y1),(x1,y2),(x2,y2),(x2,y1),
//     (x1,y1); lseg as a 2-point LINESTRING; path as a LINESTRING with
//     "closed" in the extensions; polygon as a POLYGON whose ring is
//     closed by repeating the first point), circle becomes
//     io.debezium.data.geometry.Circle {x, y, r} and line becomes
//     io.debezium.data.geometry.Line {a, b, c}. Arrays of point are not
//     mapped in any version (DBZ-459).
//
// mooncdc follows Debezium 3.6.1, which is still the older behaviour for
// those six types (see values_geotext.go for the sources): left out, or
// with include_unknown_datatypes pgjdbc's text as binary.handling.mode.

// parsePoint parses point_out's text "(x,y)", each coordinate in
// float8out's form ("1.5", "-2", "1e+100", "NaN", "Infinity",
// "-Infinity"). Anything else, including the spaces and missing
// parentheses that point_in tolerates, is errSyntax; a number past
// float64's range is errRange.
func parsePoint(s []byte) (x, y float64, err error) {
	if len(s) < 5 || s[0] != '(' || s[len(s)-1] != ')' {
		return 0, 0, errSyntax
	}
	inner := s[1 : len(s)-1]
	comma := -1
	for i, c := range inner {
		if c == ',' {
			if comma >= 0 {
				return 0, 0, errSyntax
			}
			comma = i
		}
	}
	if comma < 0 {
		return 0, 0, errSyntax
	}
	if x, err = parseFloat8(inner[:comma]); err != nil {
		return 0, 0, err
	}
	if y, err = parseFloat8(inner[comma+1:]); err != nil {
		return 0, 0, err
	}
	return x, y, nil
}

// parseFloat8 parses one float8out number: a JSON-style number or NaN,
// Infinity, -Infinity (the spellings Java's Double.parseDouble accepts
// too). NaN is returned as Java's canonical NaN.
func parseFloat8(s []byte) (float64, error) {
	switch string(s) {
	case "NaN":
		return math.Float64frombits(javaNaNBits), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	if !validJSONNumber(s) {
		return 0, errSyntax
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return 0, errRange
	}
	return f, nil
}

// javaNaNBits is Double.NaN's bit pattern, 0x7ff8000000000000L (Go's
// math.NaN() is 0x7ff8000000000001).
const javaNaNBits = 0x7ff8000000000000

// appendPointWKB appends the 21-byte OGC WKB point Debezium puts in
// Point's wkb field (Point.buildWKBPoint): byte order 01 (little-endian),
// geometry type 1 as a little-endian uint32, then x and y as
// little-endian IEEE 754 doubles (ByteBuffer.putDouble, which keeps the
// raw bits; any NaN is written as Java's canonical NaN, what
// Double.parseDouble("NaN") gives). No SRID: Point.createValue passes
// srid null.
func appendPointWKB(dst []byte, x, y float64) []byte {
	dst = append(dst, 1)
	dst = binary.LittleEndian.AppendUint32(dst, 1)
	dst = binary.LittleEndian.AppendUint64(dst, javaDoubleBits(x))
	return binary.LittleEndian.AppendUint64(dst, javaDoubleBits(y))
}

// javaDoubleBits returns f's bits with any NaN made Java's canonical NaN.
func javaDoubleBits(f float64) uint64 {
	if f != f {
		return javaNaNBits
	}
	return math.Float64bits(f)
}
