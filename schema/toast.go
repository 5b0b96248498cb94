package schema

import (
	"crypto/md5"
	"encoding/hex"
	"strconv"
)

// This file writes an unchanged TOASTed value (one Postgres did not send)
// as Debezium's placeholder in the shape of the column's type, in JSON
// and in Avro.

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
	if isVector(t) {
		// Debezium's placeholder for these is the plain string
		// (UnchangedToastedReplicationMessageColumn.java:107), which its
		// ARRAY or STRUCT schema refuses: no shape carries it.
		return toastNone
	}
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

// writeToast writes the placeholder in the shape of the column's type (see
// JSONEncoder.appendToast); the union index is written already.
func (e *AvroEncoder) writeToast(t *colType) error {
	w := e.w
	switch toastShape(t) {
	case toastString:
		w.WriteString(e.ph)
	case toastBytes:
		w.WriteBytes(e.phBytes)
	case toastStringList:
		w.WriteLong(1)
		w.WriteLong(1)
		w.WriteString(e.ph)
		w.WriteLong(0)
	case toastIntList:
		w.WriteLong(int64(len(e.phBytes)))
		for _, b := range e.phBytes {
			w.WriteLong(1)
			if t.elem.schema.Type == TypeInt64 {
				w.WriteLong(int64(int8(b)))
			} else {
				w.WriteInt(int32(int8(b)))
			}
		}
		w.WriteLong(0)
	case toastBytesList:
		w.WriteLong(1)
		w.WriteLong(1) // the optional item's value branch
		w.WriteBytes(e.phBytes)
		w.WriteLong(0)
	case toastUUIDList:
		w.WriteLong(1)
		w.WriteLong(1)
		w.WriteString(string(placeholderUUID(nil, e.phBytes)))
		w.WriteLong(0)
	case toastMap:
		w.WriteLong(1)
		w.WriteString(e.ph)
		w.WriteLong(1)
		w.WriteString(e.ph)
		w.WriteLong(0)
	default:
		return ErrUnchangedToastType
	}
	return nil
}
