package schema

import (
	"math"
	"strconv"
)

// This file writes pgvector values (values_vector.go) as JSON, the way
// JsonConverter writes the Connect values Debezium builds, and as Avro, the
// way AvroData converts them: DoubleVector and FloatVector are arrays of
// numbers; SparseDoubleVector is a struct whose INT16-keyed map
// JsonConverter writes as an array of [key, value] pairs (its maps with
// non-string keys, JsonConverter.convertToJson) and AvroData as an array of
// io.confluent.connect.avro.MapEntry {key, value} records
// (AvroData.fromConnectSchema for a map whose keys are not strings).

// appendVector appends the JSON of a vector, halfvec or sparsevec text s.
func (e *JSONEncoder) appendVector(dst []byte, t *colType, s []byte) ([]byte, error) {
	cv := &e.cv
	var err error
	switch t.conv {
	case convDoubleVector, convFloatVector:
		bits := 64
		if t.conv == convFloatVector {
			bits = 32
		}
		if cv.vec, err = parseVector(s, bits, cv.vec[:0]); err != nil {
			return dst, err
		}
		dst = append(dst, '[')
		for i, f := range cv.vec {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendVectorFloat(dst, f, bits)
		}
		return append(dst, ']'), nil
	}
	var dims int16
	if dims, cv.sparse, err = parseSparseVector(s, cv.sparse[:0]); err != nil {
		return dst, err
	}
	javaShortHashMapOrder(cv.sparse)
	dst = append(dst, `{"dimensions":`...)
	dst = strconv.AppendInt(dst, int64(dims), 10)
	dst = append(dst, `,"vector":[`...)
	for i, p := range cv.sparse {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = strconv.AppendInt(dst, int64(p.Index), 10)
		dst = append(dst, ',')
		dst = appendVectorFloat(dst, p.Value, 64)
		dst = append(dst, ']')
	}
	return append(dst, "]}"...), nil
}

// appendVectorFloat writes a finite element as Jackson writes a Double
// (Double.toString) or a Float (Float.toString): "1.0", "1.0E-5".
func appendVectorFloat(dst []byte, f float64, bits int) []byte {
	if bits == 64 {
		return appendJavaDouble(dst, f)
	}
	return appendJavaFloat(dst, float32(f))
}

// appendJavaFloat appends a finite f as Java's Float.toString prints it:
// the shortest decimal that reads back as the float, in Double.toString's
// notation. (Java prefers a closer 2-digit decimal where 1 digit is
// enough; among floats that matters only below 1E-44, under halfvec's
// range.)
func appendJavaFloat(dst []byte, f float32) []byte {
	if math.Signbit(float64(f)) {
		dst = append(dst, '-')
		f = -f
	}
	if f == 0 {
		return append(dst, "0.0"...)
	}
	var tmp [24]byte
	b := strconv.AppendFloat(tmp[:0], float64(f), 'e', -1, 32) // d.ddde±xx
	e := len(b) - 1
	for b[e] != 'e' {
		e--
	}
	exp, _ := strconv.Atoi(string(b[e+1:]))
	var dig [16]byte
	digits := dig[:0]
	for _, c := range b[:e] {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	return appendJavaDigits(dst, float64(f), digits, exp)
}

// writeVector writes a vector, halfvec or sparsevec text s as Avro,
// preceded by the union index when optional. It parses before it writes,
// so a value that does not parse writes nothing.
func (e *AvroEncoder) writeVector(t *colType, s []byte, optional bool) error {
	cv := &e.cv
	w := e.w
	var err error
	switch t.conv {
	case convDoubleVector, convFloatVector:
		bits := 64
		if t.conv == convFloatVector {
			bits = 32
		}
		if cv.vec, err = parseVector(s, bits, cv.vec[:0]); err != nil {
			return err
		}
		if optional {
			w.WriteLong(1)
		}
		w.WriteLong(int64(len(cv.vec))) // never empty: parseVector refuses "[]"
		for _, f := range cv.vec {
			if bits == 32 {
				w.WriteFloat(float32(f))
			} else {
				w.WriteDouble(f)
			}
		}
		w.WriteLong(0)
		return nil
	}
	var dims int16
	if dims, cv.sparse, err = parseSparseVector(s, cv.sparse[:0]); err != nil {
		return err
	}
	javaShortHashMapOrder(cv.sparse)
	if optional {
		w.WriteLong(1)
	}
	w.WriteInt(int32(dims))
	if len(cv.sparse) > 0 {
		w.WriteLong(int64(len(cv.sparse)))
		for _, p := range cv.sparse {
			w.WriteInt(int32(p.Index))
			w.WriteDouble(p.Value)
		}
	}
	w.WriteLong(0)
	return nil
}
