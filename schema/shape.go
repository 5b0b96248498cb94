package schema

import (
	"encoding/binary"
	"hash/fnv"
	"strconv"
)

// This file holds a table's shape: a DDL message's table and a Relation
// message converted into each other (DDLTableOf, DDLTable.Relation), and
// two Relation messages of one table compared (SameShape, ShapeFingerprint).

// DDLTableOf describes rel as a DDL message's table does, for a schema
// change derived from a Relation message (no DDL text): the columns as
// pgoutput sends them, the replica identity's columns as the key.
func DDLTableOf(rel *Relation) DDLTable {
	t := DDLTable{Schema: rel.Schema, Table: rel.Table, PrimaryKey: []string{}, Columns: make([]DDLColumn, len(rel.Columns))}
	for _, i := range rel.KeyIndexes {
		t.PrimaryKey = append(t.PrimaryKey, rel.Columns[i].Name)
	}
	for i, c := range rel.Columns {
		col := DDLColumn{Name: c.Name, TypeName: typeDisplayName(c), Position: int32(i + 1), Optional: !c.NotNull}
		col.Length, col.Scale = typmodLengthScale(col.TypeName, c.TypeMod)
		if c.HasDefault {
			d := c.Default
			col.Default = &d
		}
		t.Columns[i] = col
	}
	return t
}

// Relation returns the table as a relation of the columns pgoutput sends
// (generated ones left out), for the record schemas of its new shape; ok
// is false when the message does not say (dropped, or written by an event
// trigger without oids). Key columns are the primary key; nullability and
// defaults are the message's.
func (t DDLTable) Relation() (rel *Relation, ok bool) {
	if t.Dropped || t.OID == 0 {
		return nil, false
	}
	rel = &Relation{OID: t.OID, Schema: t.Schema, Table: t.Table, ReplicaIdentity: 'd'}
	for _, c := range t.Columns {
		if c.Generated {
			continue
		}
		if c.TypeOID == 0 {
			return nil, false
		}
		col := Column{Name: c.Name, TypeOID: c.TypeOID, TypeMod: c.TypeMod, NotNull: !c.Optional}
		if c.Default != nil {
			col.Default, col.HasDefault = *c.Default, true
		}
		for _, k := range t.PrimaryKey {
			if k == c.Name {
				col.Key = true
				rel.KeyIndexes = append(rel.KeyIndexes, len(rel.Columns))
			}
		}
		rel.Columns = append(rel.Columns, col)
	}
	return rel, true
}

// typmodLengthScale is the length and scale a type modifier gives, as the
// event trigger computes them (connector/ddl.go).
func typmodLengthScale(typ string, mod int32) (length, scale *int32) {
	if mod < 0 {
		return nil, nil
	}
	switch typ {
	case "varchar", "bpchar":
		l := mod - 4
		return &l, nil
	case "numeric":
		l, s := ((mod-4)>>16)&0xffff, (mod-4)&0xffff
		return &l, &s
	case "bit", "varbit", "time", "timetz", "timestamp", "timestamptz", "interval":
		return &mod, nil
	}
	return nil, nil
}

// SameShape reports whether two Relation messages of one table say the
// same: name, replica identity, columns (names, types, modifiers, key
// flags). What pgoutput does not send (nullability, defaults) is read from
// the catalog at different times and compared by no one: a Relation that
// differs in what it says announces a schema change.
func SameShape(a, b *Relation) bool {
	return sameShape(a, b)
}

// ShapeFingerprint is a short digest of what SameShape compares, stored
// to compare a shape with one seen by an earlier run.
func ShapeFingerprint(r *Relation) string {
	h := fnv.New64a()
	put := func(s string) { h.Write([]byte(s)); h.Write([]byte{0}) }
	put(r.Schema)
	put(r.Table)
	h.Write([]byte{r.ReplicaIdentity})
	var b [9]byte
	for _, c := range r.Columns {
		put(c.Name)
		binary.BigEndian.PutUint32(b[:4], c.TypeOID)
		binary.BigEndian.PutUint32(b[4:8], uint32(c.TypeMod))
		b[8] = 0
		if c.Key {
			b[8] = 1
		}
		h.Write(b[:])
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

func sameShape(a, b *Relation) bool {
	if a.Schema != b.Schema || a.Table != b.Table || a.ReplicaIdentity != b.ReplicaIdentity || len(a.Columns) != len(b.Columns) {
		return false
	}
	for i := range a.Columns {
		x, y := a.Columns[i], b.Columns[i]
		if x.Name != y.Name || x.TypeOID != y.TypeOID || x.TypeMod != y.TypeMod || x.Key != y.Key {
			return false
		}
	}
	return true
}
