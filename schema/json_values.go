package schema

import (
	"errors"
	"math"
	"strconv"
)

// This file writes one column value as JSON, the way Kafka Connect's
// JsonConverter writes the Connect value Debezium builds for it: bytes as
// base64, Decimal as base64 of its unscaled bytes (decimal.format=BASE64,
// the default), structs as objects, maps with string keys as objects,
// non-finite doubles as the strings "NaN", "Infinity", "-Infinity".

// ErrUnchangedToastType is an unchanged TOASTed value in a column whose
// type cannot carry the placeholder (a Decimal, a struct, a number) and
// whose old value was not sent either.
var ErrUnchangedToastType = errors.New("an unchanged TOASTed value cannot be represented for this column type; " +
	"set REPLICA IDENTITY FULL on the table so that Postgres sends the old value")

// appendColumn appends the JSON of value v of a column of type t.
func (e *JSONEncoder) appendColumn(dst []byte, t *colType, v Value) ([]byte, error) {
	switch v.Kind {
	case ValueNull:
		return append(dst, "null"...), nil
	case ValueUnchangedToast:
		return e.appendToast(dst, t)
	}
	switch t.conv {
	case convArray:
		return e.appendArray(dst, t, v.Data)
	case convHstoreMap:
		return e.appendHstoreMap(dst, v.Data)
	case convDoubleVector, convFloatVector, convSparseVector:
		return e.appendVector(dst, t, v.Data)
	// The commonest columns go straight to JSON, as appendDatumJSON
	// writes their datum: handing a datum back from scalar costs a copy
	// through the stack as long as the rest of the row.
	case convString:
		return appendJSONString(dst, v.Data), nil
	case convInt16, convInt32, convInt64, convOID:
		n, err := intValue(t.conv, v.Data)
		if err != nil {
			return dst, err
		}
		return strconv.AppendInt(dst, n, 10), nil
	}
	d, err := e.cv.scalar(t, v.Data)
	if err != nil {
		return dst, err
	}
	return appendDatumJSON(dst, &d), nil
}

// appendRewritten writes value v of a column whose values mapper b
// rewrites: the converted value, then the mapper (a mask also replaces a
// null; an unchanged TOASTed string is its placeholder text, which
// Debezium's mapper sees too).
func (e *JSONEncoder) appendRewritten(dst []byte, t *colType, v Value, b *BoundRewrite) ([]byte, error) {
	d, null, err := e.cv.mappable(t, v, e.phBytes)
	if err != nil {
		return dst, err
	}
	if d, null = b.rewriteDatum(d, null, &e.cv.mapped); null {
		return append(dst, "null"...), nil
	}
	return appendDatumJSON(dst, &d), nil
}

// appendArray writes a one-dimensional array as a JSON array; NULL
// elements are null.
func (e *JSONEncoder) appendArray(dst []byte, t *colType, s []byte) ([]byte, error) {
	cv := &e.cv
	var err error
	if cv.elem, cv.ebuf, err = parseArray(s, arrayDelim(t.elem), cv.elem[:0], cv.ebuf[:0]); err != nil {
		return dst, err
	}
	if t.elem.conv == convArray {
		return dst, errNestedArray
	}
	dst = append(dst, '[')
	for i, el := range cv.elem {
		if i > 0 {
			dst = append(dst, ',')
		}
		if el.Null {
			if !t.elem.schema.Optional {
				return dst, nullElementError(t.elem)
			}
			dst = append(dst, "null"...)
			continue
		}
		if t.elem.conv == convHstoreMap {
			if dst, err = e.appendHstoreMap(dst, el.Data); err != nil {
				return dst, err
			}
			continue
		}
		if isVector(t.elem) {
			if dst, err = e.appendVector(dst, t.elem, el.Data); err != nil {
				return dst, err
			}
			continue
		}
		d, err := cv.scalar(t.elem, el.Data)
		if err != nil {
			return dst, err
		}
		dst = appendDatumJSON(dst, &d)
	}
	return append(dst, ']'), nil
}

var errNestedArray = errors.New("arrays of arrays are not supported")

// errNullEnumElement: an enum array's items are required in Debezium's
// schema (PostgresValueConverter.java:349-351), so a NULL element fails
// its Struct's validation there, and a Connect sink would refuse it here.
var errNullEnumElement = errors.New("a NULL element in an enum array, whose items are required as in Debezium's schema: " +
	"remove the NULLs from the column, or leave it out (postgres.columns_exclude)")

// nullElementError is the error of a NULL element in an array whose items
// are required: enums and pgvector's types.
func nullElementError(elem *colType) error {
	if isVector(elem) {
		return errNullVectorElement
	}
	return errNullEnumElement
}

// appendHstoreMap writes hstore text as a JSON object, the way
// JsonConverter writes the MAP<STRING, optional STRING> of
// hstore_handling_mode map: entries in java.util.HashMap order (see
// javaHashMapOrder), NULL values as null. hstore[] columns write each
// element this way (Debezium: an array of those maps).
func (e *JSONEncoder) appendHstoreMap(dst, s []byte) ([]byte, error) {
	cv := &e.cv
	var err error
	if cv.hs, cv.hbuf, err = parseHstore(s, cv.hs[:0], cv.hbuf[:0]); err != nil {
		return dst, err
	}
	javaHashMapOrder(cv.hs)
	return appendHstoreJSON(dst, cv.hs), nil
}

// arrayDelim is the element delimiter of an array's text form: the
// element type's typdelim (from the catalog for types that are not built
// in; ';' for box), ',' when none is recorded.
func arrayDelim(elem *colType) byte {
	if elem.delim != 0 {
		return elem.delim
	}
	return ','
}

// appendDatumJSON writes d.
func appendDatumJSON(dst []byte, d *datum) []byte {
	switch d.k {
	case dNull:
		return append(dst, "null"...)
	case dBool:
		return strconv.AppendBool(dst, d.i != 0)
	case dInt:
		return strconv.AppendInt(dst, d.i, 10)
	case dFloat:
		return appendFloatJSON(dst, d.f, d.b)
	case dString:
		return appendJSONString(dst, d.b)
	case dBytes:
		return appendBase64String(dst, d.b)
	case dVarDec:
		dst = append(dst, `{"scale":`...)
		dst = strconv.AppendInt(dst, d.i, 10)
		dst = append(dst, `,"value":`...)
		dst = appendBase64String(dst, d.b)
		return append(dst, '}')
	case dPoint:
		dst = append(dst, `{"x":`...)
		dst = appendFloatJSON(dst, d.f, nil)
		dst = append(dst, `,"y":`...)
		dst = appendFloatJSON(dst, d.g, nil)
		dst = append(dst, `,"wkb":`...)
		dst = appendBase64String(dst, d.b)
		return append(dst, `,"srid":null}`...)
	case dGeom:
		dst = append(dst, `{"wkb":`...)
		dst = appendBase64String(dst, d.b)
		if !d.hasSRID {
			return append(dst, `,"srid":null}`...)
		}
		dst = append(dst, `,"srid":`...)
		dst = strconv.AppendInt(dst, d.i, 10)
		return append(dst, '}')
	}
	return append(dst, "null"...)
}

// appendFloatJSON writes a float: Postgres' own text when there is one
// (the shortest exact form with extra_float_digits=3), the quoted names of
// the non-finite values as Jackson writes them.
func appendFloatJSON(dst []byte, f float64, text []byte) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	case text != nil:
		return append(dst, text...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}
