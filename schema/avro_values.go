package schema

import "errors"

// This file writes one column value as Avro, in the union branch and the
// shape of the schema Debezium's connector gives the column through
// Confluent's AvroConverter (json_values.go is its JSON twin).

// writeColumn writes value v of a column of type t with schema s (the
// column's schema, or its required form in a key).
func (e *AvroEncoder) writeColumn(t *colType, s *Schema, v Value) error {
	w := e.w
	if v.Kind == ValueNull {
		if !s.Optional {
			return errNullRequired
		}
		w.WriteLong(nullBranch(s))
		return nil
	}
	if v.Kind == ValueUnchangedToast {
		if s.Optional {
			w.WriteLong(valueBranch(s))
		}
		return e.writeToast(t)
	}
	switch t.conv {
	case convArray:
		return e.writeArray(t, s, v.Data)
	case convHstoreMap:
		return e.writeHstoreMap(v.Data, s.Optional)
	case convDoubleVector, convFloatVector, convSparseVector:
		return e.writeVector(t, v.Data, s.Optional)
	}
	d, err := e.cv.scalar(t, v.Data)
	if err != nil {
		return err
	}
	return e.writeDatum(d, s)
}

// writeRewritten writes value v of a column whose values mapper b
// rewrites (see JSONEncoder.appendRewritten).
func (e *AvroEncoder) writeRewritten(t *colType, s *Schema, v Value, b *BoundRewrite) error {
	d, null, err := e.cv.mappable(t, v, e.phBytes)
	if err != nil {
		return err
	}
	d, _ = b.rewriteDatum(d, null, &e.cv.mapped)
	return e.writeDatum(d, s)
}

var errNullRequired = errors.New("NULL in a column the catalog says is NOT NULL")

// nullBranch and valueBranch are the union indexes of an optional
// schema: ["null", T], or [T, "null"] when it has a default (AvroData's
// maybeMakeOptional; avro_schema.go renders the same order).
func nullBranch(s *Schema) int64 {
	if s.HasDefault {
		return 1
	}
	return 0
}

func valueBranch(s *Schema) int64 { return 1 - nullBranch(s) }

// writeDatum writes d as schema s, with the union index when s is
// optional.
func (e *AvroEncoder) writeDatum(d datum, s *Schema) error {
	w := e.w
	if d.k == dNull {
		if !s.Optional {
			return errNullRequired
		}
		w.WriteLong(nullBranch(s))
		return nil
	}
	if s.Optional {
		w.WriteLong(valueBranch(s))
	}
	switch d.k {
	case dBool:
		w.WriteBool(d.i != 0)
	case dInt:
		if s.Type == TypeInt64 {
			w.WriteLong(d.i)
		} else {
			w.WriteInt(int32(d.i))
		}
	case dFloat:
		if s.Type == TypeFloat32 {
			w.WriteFloat(float32(d.f))
		} else {
			w.WriteDouble(d.f)
		}
	case dString, dBytes:
		w.WriteBytes(d.b)
	case dVarDec:
		w.WriteInt(int32(d.i))
		w.WriteBytes(d.b)
	case dPoint:
		w.WriteDouble(d.f)
		w.WriteDouble(d.g)
		w.WriteLong(1)
		w.WriteBytes(d.b)
		w.WriteLong(0) // srid: null
	case dGeom:
		w.WriteBytes(d.b)
		if d.hasSRID {
			w.WriteLong(1)
			w.WriteInt(int32(d.i))
		} else {
			w.WriteLong(0)
		}
	}
	return nil
}

// writeArray writes a one-dimensional array: one block of optional items.
func (e *AvroEncoder) writeArray(t *colType, s *Schema, text []byte) error {
	cv := &e.cv
	var err error
	if cv.elem, cv.ebuf, err = parseArray(text, arrayDelim(t.elem), cv.elem[:0], cv.ebuf[:0]); err != nil {
		return err
	}
	if t.elem.conv == convArray {
		return errNestedArray
	}
	w := e.w
	if s.Optional {
		w.WriteLong(1)
	}
	if len(cv.elem) > 0 {
		w.WriteLong(int64(len(cv.elem)))
		for _, el := range cv.elem {
			if el.Null {
				if !t.elem.schema.Optional {
					return nullElementError(t.elem)
				}
				w.WriteLong(0)
				continue
			}
			if t.elem.conv == convHstoreMap {
				if err := e.writeHstoreMap(el.Data, t.elem.schema.Optional); err != nil {
					return err
				}
				continue
			}
			if isVector(t.elem) {
				if err := e.writeVector(t.elem, el.Data, t.elem.schema.Optional); err != nil {
					return err
				}
				continue
			}
			d, err := cv.scalar(t.elem, el.Data)
			if err != nil {
				return err
			}
			if err := e.writeDatum(d, t.elem.schema); err != nil {
				return err
			}
		}
	}
	w.WriteLong(0)
	return nil
}

// writeHstoreMap writes hstore text as an Avro map of optional strings
// (hstore_handling_mode map), in java.util.HashMap order like the JSON
// encoder, preceded by the union index when optional. It parses before it
// writes, so a value that does not parse writes nothing.
func (e *AvroEncoder) writeHstoreMap(s []byte, optional bool) error {
	cv := &e.cv
	var err error
	if cv.hs, cv.hbuf, err = parseHstore(s, cv.hs[:0], cv.hbuf[:0]); err != nil {
		return err
	}
	javaHashMapOrder(cv.hs)
	w := e.w
	if optional {
		w.WriteLong(1)
	}
	if len(cv.hs) > 0 {
		w.WriteLong(int64(len(cv.hs)))
		for _, p := range cv.hs {
			w.WriteBytes(p.Key)
			if p.Null {
				w.WriteLong(0)
			} else {
				w.WriteLong(1)
				w.WriteBytes(p.Value)
			}
		}
	}
	w.WriteLong(0)
	return nil
}
