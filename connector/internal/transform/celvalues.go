package transform

import (
	"fmt"
	"reflect"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// This file shows the record model to CEL without copying it: a struct, a
// map and the headers are CEL maps read in place (traits.Mapper); the
// other values become CEL's own. A Decimal is its exact decimal string
// (BigDecimal.toString): CEL has no decimal type and a double would round
// silently; `double(value.after.price)` asks for the rounding explicitly.

// adapter converts record values to CEL values.
type adapter struct{ base types.Adapter }

func (a *adapter) NativeToValue(v any) ref.Val {
	switch x := v.(type) {
	case nil:
		return types.NullValue
	case ref.Val:
		return x
	case *Struct:
		return &structVal{a: a, st: x}
	case *Map:
		return &mapVal{a: a, m: x}
	case []any:
		return types.NewDynamicList(a, x)
	case int8:
		return types.Int(x)
	case int16:
		return types.Int(x)
	case int32:
		return types.Int(x)
	case int64:
		return types.Int(x)
	case float32:
		return types.Double(x)
	case float64:
		return types.Double(x)
	case bool:
		return types.Bool(x)
	case string:
		return types.String(x)
	case []byte:
		return types.Bytes(x)
	case time.Time:
		return types.Timestamp{Time: x}
	case Decimal:
		return types.String(x.String())
	case headers:
		return &headersVal{a: a, h: x}
	}
	return a.base.NativeToValue(v)
}

// mapBase holds what the three map views share.
type mapBase struct{}

func (mapBase) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("a record value cannot be converted to %v", t)
}

func (mapBase) Type() ref.Type { return types.MapType }

// keyString returns the CEL key as a field name.
func keyString(k ref.Val) (string, bool) {
	s, ok := k.(types.String)
	return string(s), ok
}

// equalMaps compares two CEL maps entry by entry.
func equalMaps(a traits.Mapper, other ref.Val) ref.Val {
	b, ok := other.(traits.Mapper)
	if !ok {
		return types.False
	}
	if a.Size() != b.Size() {
		return types.False
	}
	for it := a.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		bv, found := b.Find(k)
		if !found {
			return types.False
		}
		av, _ := a.Find(k)
		if eq := av.Equal(bv); eq != types.True {
			return eq
		}
	}
	return types.True
}

// structVal is a *Struct as a CEL map from field name to value.
type structVal struct {
	mapBase
	a  *adapter
	st *Struct
}

func (v *structVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.MapType:
		return v
	case types.TypeType:
		return types.MapType
	}
	return types.NewErr("type conversion error from map to %q", t)
}
func (v *structVal) Equal(o ref.Val) ref.Val { return equalMaps(v, o) }
func (v *structVal) Value() any              { return v.st }
func (v *structVal) Size() ref.Val           { return types.Int(len(v.st.Values)) }
func (v *structVal) Contains(k ref.Val) ref.Val {
	_, found := v.Find(k)
	return types.Bool(found)
}
func (v *structVal) Get(k ref.Val) ref.Val {
	if r, found := v.Find(k); found {
		return r
	}
	return types.NewErr("no such key: %v", k)
}
func (v *structVal) Find(k ref.Val) (ref.Val, bool) {
	name, ok := keyString(k)
	if !ok {
		return nil, false
	}
	i := index(v.st.Schema, name)
	if i < 0 {
		return nil, false
	}
	// Debezium's engines read a field with Struct.get(String), which gives
	// a null field's default (GraalJsEngine.java:91-92; Groovy's property
	// access calls the same get): so does CEL.
	fv, err := fieldValue(v.st, i, true)
	if err != nil {
		return types.NewErr("field %q: %v", name, err), true
	}
	return v.a.NativeToValue(fv), true
}
func (v *structVal) Iterator() traits.Iterator {
	return &nameIter{n: len(v.st.Schema.Fields), name: func(i int) string { return v.st.Schema.Fields[i].Name }}
}

// nameIter iterates field or header names.
type nameIter struct {
	mapBase
	i, n int
	name func(int) string
}

func (it *nameIter) ConvertToType(ref.Type) ref.Val { return types.NewErr("an iterator has no type") }
func (it *nameIter) Equal(ref.Val) ref.Val          { return types.False }
func (it *nameIter) Value() any                     { return nil }
func (it *nameIter) HasNext() ref.Val               { return types.Bool(it.i < it.n) }
func (it *nameIter) Next() ref.Val {
	if it.i >= it.n {
		return nil
	}
	it.i++
	return types.String(it.name(it.i - 1))
}

// mapVal is a *Map as a CEL map.
type mapVal struct {
	mapBase
	a *adapter
	m *Map
}

func (v *mapVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.MapType:
		return v
	case types.TypeType:
		return types.MapType
	}
	return types.NewErr("type conversion error from map to %q", t)
}
func (v *mapVal) Equal(o ref.Val) ref.Val { return equalMaps(v, o) }
func (v *mapVal) Value() any              { return v.m }
func (v *mapVal) Size() ref.Val           { return types.Int(len(v.m.Entries)) }
func (v *mapVal) Contains(k ref.Val) ref.Val {
	_, found := v.Find(k)
	return types.Bool(found)
}
func (v *mapVal) Get(k ref.Val) ref.Val {
	if r, found := v.Find(k); found {
		return r
	}
	return types.NewErr("no such key: %v", k)
}
func (v *mapVal) Find(k ref.Val) (ref.Val, bool) {
	for _, e := range v.m.Entries {
		if s, ok := e.Key.(string); ok {
			if ks, ok := k.(types.String); ok && string(ks) == s {
				return v.a.NativeToValue(e.Value), true
			}
			continue
		}
		if v.a.NativeToValue(e.Key).Equal(k) == types.True {
			return v.a.NativeToValue(e.Value), true
		}
	}
	return nil, false
}
func (v *mapVal) Iterator() traits.Iterator {
	return &listIter{a: v.a, n: len(v.m.Entries), key: func(i int) any { return v.m.Entries[i].Key }}
}

// listIter iterates map keys of any type.
type listIter struct {
	nameIter
	a   *adapter
	n   int
	key func(int) any
}

func (it *listIter) HasNext() ref.Val { return types.Bool(it.i < it.n) }
func (it *listIter) Next() ref.Val {
	if it.i >= it.n {
		return nil
	}
	it.i++
	return it.a.NativeToValue(it.key(it.i - 1))
}

// headers is a record's headers as CEL's `headers`: a map from name to
// value, the last header of a name winning, as Debezium's scripting
// bindings build it (Jsr223Engine.doHeaders, debezium-scripting/debezium-scripting/src/main/java/io/debezium/transforms/scripting/Jsr223Engine.java:93-99).
type headers []Header

type headersVal struct {
	mapBase
	a *adapter
	h headers
}

func (v *headersVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.MapType:
		return v
	case types.TypeType:
		return types.MapType
	}
	return types.NewErr("type conversion error from map to %q", t)
}
func (v *headersVal) Equal(o ref.Val) ref.Val { return equalMaps(v, o) }
func (v *headersVal) Value() any              { return []Header(v.h) }

// names returns the distinct header names, in first-seen order.
func (v *headersVal) names() []string {
	var out []string
	for _, h := range v.h {
		if !contains(out, h.Key) {
			out = append(out, h.Key)
		}
	}
	return out
}
func (v *headersVal) Size() ref.Val { return types.Int(len(v.names())) }
func (v *headersVal) Contains(k ref.Val) ref.Val {
	_, found := v.Find(k)
	return types.Bool(found)
}
func (v *headersVal) Get(k ref.Val) ref.Val {
	if r, found := v.Find(k); found {
		return r
	}
	return types.NewErr("no such key: %v", k)
}
func (v *headersVal) Find(k ref.Val) (ref.Val, bool) {
	name, ok := keyString(k)
	if !ok {
		return nil, false
	}
	for i := len(v.h) - 1; i >= 0; i-- {
		if v.h[i].Key == name {
			return v.a.NativeToValue(v.h[i].Value), true
		}
	}
	return nil, false
}
func (v *headersVal) Iterator() traits.Iterator {
	names := v.names()
	return &nameIter{n: len(names), name: func(i int) string { return names[i] }}
}
