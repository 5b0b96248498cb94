package schema

import (
	"crypto/md5"
	"encoding/hex"
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
	}
	d, err := e.cv.scalar(t, v.Data)
	if err != nil {
		return dst, err
	}
	return appendDatumJSON(dst, d), nil
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
	return appendDatumJSON(dst, d), nil
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
				return dst, errNullEnumElement
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
		d, err := cv.scalar(t.elem, el.Data)
		if err != nil {
			return dst, err
		}
		dst = appendDatumJSON(dst, d)
	}
	return append(dst, ']'), nil
}

var errNestedArray = errors.New("arrays of arrays are not supported")

// errNullEnumElement: an enum array's items are required in Debezium's
// schema (PostgresValueConverter.java:349-351), so a NULL element fails
// its Struct's validation there, and a Connect sink would refuse it here.
var errNullEnumElement = errors.New("a NULL element in an enum array, whose items are required as in Debezium's schema: " +
	"remove the NULLs from the column, or leave it out (postgres.columns_exclude)")

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

// arrayDelim is the element delimiter of an array's text form: ';' for
// box, ',' for every other type.
func arrayDelim(elem *colType) byte {
	if elem.delim != 0 {
		return elem.delim
	}
	return ','
}

// appendDatumJSON writes d.
func appendDatumJSON(dst []byte, d datum) []byte {
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

// appendToast writes the placeholder of an unchanged TOASTed value in the
// shape of the column's type, as Debezium's UnchangedToastedPlaceholder:
// the placeholder string, its bytes for binary columns, a one-element list
// of it for text arrays, its bytes as numbers for integer arrays, a map
// from it to itself for hstore maps.
func (e *JSONEncoder) appendToast(dst []byte, t *colType) ([]byte, error) {
	switch toastShape(t) {
	case toastString:
		return appendJSONString(dst, e.ph), nil
	case toastBytes:
		return appendBase64String(dst, e.phBytes), nil
	case toastStringList:
		dst = append(dst, '[')
		dst = appendJSONString(dst, e.ph)
		return append(dst, ']'), nil
	case toastIntList:
		dst = append(dst, '[')
		for i, b := range e.phBytes {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(int8(b)), 10)
		}
		return append(dst, ']'), nil
	case toastBytesList:
		dst = append(dst, '[')
		dst = appendBase64String(dst, e.phBytes)
		return append(dst, ']'), nil
	case toastUUIDList:
		dst = append(dst, '[', '"')
		dst = placeholderUUID(dst, e.phBytes)
		return append(dst, '"', ']'), nil
	case toastMap:
		dst = append(dst, '{')
		dst = appendJSONString(dst, e.ph)
		dst = append(dst, ':')
		dst = appendJSONString(dst, e.ph)
		return append(dst, '}'), nil
	}
	return dst, ErrUnchangedToastType
}

// toast shapes: how a type carries the unchanged-TOAST placeholder.
type toastKind uint8

const (
	toastNone toastKind = iota
	toastString
	toastBytes
	toastStringList
	toastIntList
	toastMap
	toastBytesList
	toastUUIDList
)

// placeholderUUID is java.util.UUID.nameUUIDFromBytes(ph): the MD5 of ph
// with the version set to 3 and the IETF variant, as Debezium's uuid[]
// placeholder (UnchangedToastedPlaceholder.java:41):
// b68a35a7-17ad-35b3-af2a-ae46edb4545a for the default placeholder.
func placeholderUUID(dst, ph []byte) []byte {
	sum := md5.Sum(ph)
	sum[6] = sum[6]&0x0f | 0x30
	sum[8] = sum[8]&0x3f | 0x80
	var hexed [32]byte
	hex.Encode(hexed[:], sum[:])
	dst = append(dst, hexed[0:8]...)
	dst = append(dst, '-')
	dst = append(dst, hexed[8:12]...)
	dst = append(dst, '-')
	dst = append(dst, hexed[12:16]...)
	dst = append(dst, '-')
	dst = append(dst, hexed[16:20]...)
	dst = append(dst, '-')
	return append(dst, hexed[20:32]...)
}

func toastShape(t *colType) toastKind {
	switch t.schema.Type {
	case TypeString:
		return toastString
	case TypeBytes:
		if t.conv == convBytes || t.conv == convGeoText {
			return toastBytes
		}
	case TypeArray:
		// Debezium picks the placeholder by the array's type name
		// (UnchangedToastedReplicationMessageColumn.java:70-107) and builds
		// it in UnchangedToastedPlaceholder.java:38-55: text-like arrays a
		// one-string list, bytea[] a one-bytes list, int4[], int8[] and
		// date[] the placeholder's bytes as numbers, uuid[] a one-element
		// list of the placeholder's name-based UUID.
		switch {
		case t.elem.conv == convDate:
			return toastIntList
		case t.elem.conv == convBytes:
			return toastBytesList
		case t.elem.schema.Type == TypeString && t.elem.schema.Name == "io.debezium.data.Uuid":
			return toastUUIDList
		case t.elem.schema.Type == TypeString:
			return toastStringList
		case t.elem.schema.Type == TypeInt16, t.elem.schema.Type == TypeInt32, t.elem.schema.Type == TypeInt64:
			if t.elem.schema.Name == "" {
				return toastIntList
			}
		}
	case TypeMap:
		return toastMap
	}
	return toastNone
}
