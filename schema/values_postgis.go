package schema

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// This file converts PostGIS's geometry and geography columns.
//
// What Debezium 3.6.1 does (v3.6.1.Final, paths under
// debezium-connector-postgres/src/main/java/io/debezium/connector/postgresql/
// unless named):
//
//   - The schema is io.debezium.data.geometry.Geometry or …Geography,
//     version 1, a struct {wkb BYTES (required), srid optional INT32}, doc
//     "Geometry" / "Geography" (debezium-connector-common's
//     Geometry.java:36-44, Geography.java:33-40). Geometry's builder is
//     optional itself, so even a NOT NULL geometry column is an optional
//     field (mapColumn); Geography's is not.
//   - The value is PostgisGeometry.fromHexEwkb of the column's text
//     (PostgresValueConverter.java:1022-1070): the text Postgres prints
//     for both types is hex EWKB, the same in a COPY and in pgoutput.
//     fromHexEwkb decodes the hex and keeps the bytes as they are: wkb is
//     the whole EWKB, the SRID flag (0x20000000 in the type word) and the
//     four SRID bytes included, Z/M flags untouched (PostgisGeometry.java:
//     46-57, :74-77). AbstractRecordsProducerTest.java:931 expects wkb
//     0101000020730C0000… with srid 3187 for 'SRID=3187;POINT(…)'.
//   - srid is read from that EWKB: the first byte is the byte order (any
//     non-zero byte little-endian), the next four the type word; when its
//     SRID flag is set, the following four bytes are the SRID as a signed
//     int32 in that byte order, else srid is null (PostgisGeometry.java:
//     104-123). Fewer than 9 bytes is an IllegalArgumentException there.
//   - A NULL in a required field (a key-only old image of a NOT NULL
//     column) is GEOMETRYCOLLECTION EMPTY, hex EWKB 010700000000000000,
//     srid null (PostgisGeometry.java:24, :64-66;
//     PostgresValueConverter.java:1023-1024).
//   - Arrays: geometry[] and geography[] are arrays of the optional struct
//     (PostgresValueConverter.java:310-311, :331-332, :545-549). PostGIS
//     declares ':' as both types' typdelim, so their array text is
//     {0101…:0103…}; mooncdc splits it by the delimiter the catalog gives
//     (TypeInfo.Delim).
//
// Where Debezium cannot decode a value (not hex, too short) it logs "Error
// converting to a Geometry type" and writes null or fails on a required
// field (PostgresValueConverter.java:1041-1043). mooncdc reports a
// ValueError wrapping ErrInvalidEWKB instead, which parks the table: a
// null for a value that was there would be silent loss. It is also
// stricter on the byte order byte: only 0 and 1 are EWKB, anything else
// is an error rather than read as little-endian.

// Connect names of the PostGIS structs.
const (
	geometryName  = "io.debezium.data.geometry.Geometry"
	geographyName = "io.debezium.data.geometry.Geography"
)

func geometrySchema() *Schema  { return postgisSchema(geometryName, "Geometry") }
func geographySchema() *Schema { return postgisSchema(geographyName, "Geography") }

func postgisSchema(name, doc string) *Schema {
	return &Schema{Type: TypeStruct, Name: name, Version: 1, Doc: doc, Fields: []Field{
		{"wkb", &Schema{Type: TypeBytes}},
		{"srid", &Schema{Type: TypeInt32, Optional: true}},
	}}
}

// ErrInvalidEWKB is wrapped by the errors of a geometry or geography
// value that is not PostGIS hex EWKB. Debezium cannot decode such a value
// either; mooncdc parks the table rather than write a guess.
var ErrInvalidEWKB = errors.New("the value is not PostGIS hex EWKB")

var (
	errEWKBHex       = fmt.Errorf("%w: odd length or a byte that is not a hex digit", ErrInvalidEWKB)
	errEWKBShort     = fmt.Errorf("%w: shorter than 9 bytes (byte order, type, SRID)", ErrInvalidEWKB)
	errEWKBByteOrder = fmt.Errorf("%w: the byte order byte is neither 0 (big-endian) nor 1 (little-endian)", ErrInvalidEWKB)
)

// ewkbSRIDFlag is the SRID flag of an EWKB type word (PostgisGeometry.java:115).
const ewkbSRIDFlag = 0x20000000

// decodeEWKB appends to dst the bytes of hexEWKB, PostGIS's text of a
// geometry or geography, and reads its SRID: the wkb and srid Debezium's
// PostgisGeometry.fromHexEwkb gives. hasSRID is false when the SRID flag
// is clear (srid null).
func decodeEWKB(dst, hexEWKB []byte) (wkb []byte, srid int32, hasSRID bool, err error) {
	if len(hexEWKB)%2 != 0 {
		return dst, 0, false, errEWKBHex
	}
	start := len(dst)
	for i := 0; i < len(hexEWKB); i += 2 {
		hi, ok1 := fromHexDigit(hexEWKB[i])
		lo, ok2 := fromHexDigit(hexEWKB[i+1])
		if !ok1 || !ok2 {
			return dst[:start], 0, false, errEWKBHex
		}
		dst = append(dst, hi<<4|lo)
	}
	b := dst[start:]
	if len(b) < 9 {
		return dst[:start], 0, false, errEWKBShort
	}
	var order binary.ByteOrder
	switch b[0] {
	case 0:
		order = binary.BigEndian
	case 1:
		order = binary.LittleEndian
	default:
		return dst[:start], 0, false, errEWKBByteOrder
	}
	if order.Uint32(b[1:5])&ewkbSRIDFlag != 0 {
		return dst, int32(order.Uint32(b[5:9])), true, nil
	}
	return dst, 0, false, nil
}

func fromHexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// textEmptyGeometryCollection is GEOMETRYCOLLECTION EMPTY as PostGIS
// prints it: Debezium's fallback for a required geometry or geography.
var textEmptyGeometryCollection = []byte("010700000000000000")
