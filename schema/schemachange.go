package schema

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"
)

// This file holds schema-change events: what mooncdc's DDL event trigger
// reports in a transactional logical message (prefix mooncdc_ddl), parsed
// by ParseDDLMessage, and the records of the <prefix>.schema-changes topic,
// in the shape of Debezium's schema change events where it fits
// (SchemaFactory.java:221-285 at v3.6.1.Final: source, ts_ms,
// databaseName, schemaName, ddl, tableChanges with type, id and the
// table's primary key and columns), keyed by the table.

// The tableChanges types.
const (
	SchemaChangeCreate = "CREATE"
	SchemaChangeAlter  = "ALTER"
	SchemaChangeDrop   = "DROP"
	// A rename and a truncate have types of their own, where Debezium
	// writes a rename as ALTER (with previousId only in its history
	// topic: TableChanges.java:48-49, JsonTableChangeSerializer.java:50)
	// and a truncate with no tableChanges (SchemaChangeEvent.java:65-85):
	// the topic is the table's DDL log, and a consumer must tell them
	// from an ALTER.
	SchemaChangeRename   = "RENAME"
	SchemaChangeTruncate = "TRUNCATE"
)

// DDLMessage is the content of a DDL message: one DDL command and the
// tables it created, altered or dropped, as the catalog has them after it.
type DDLMessage struct {
	Tag    string     `json:"tag"` // the command tag: ALTER TABLE, CREATE TABLE, DROP TABLE, …
	DDL    string     `json:"ddl"` // current_query(): the statement as the client sent it
	Tables []DDLTable `json:"tables"`
}

// DDLTable is one table of a DDL message.
type DDLTable struct {
	Schema     string      `json:"schema"`
	Table      string      `json:"table"`
	Dropped    bool        `json:"dropped"`
	OID        uint32      `json:"oid"` // 0 from an event trigger older than schema_evolution
	PrimaryKey []string    `json:"primary_key"`
	Columns    []DDLColumn `json:"columns"`
}

// DDLColumn is one column of a DDLTable.
type DDLColumn struct {
	Name     string  `json:"name"`
	TypeName string  `json:"type"` // pg_type.typname, Debezium's typeName
	Length   *int32  `json:"length"`
	Scale    *int32  `json:"scale"`
	Position int32   `json:"position"`
	Optional bool    `json:"optional"`
	Default  *string `json:"default"` // the default's expression
	// TypeOID and TypeMod are pg_attribute's atttypid and atttypmod (0
	// and 0 from an older event trigger); Generated a generated column,
	// which pgoutput does not send.
	TypeOID   uint32 `json:"type_oid"`
	TypeMod   int32  `json:"typmod"`
	Generated bool   `json:"generated"`
}

// ParseDDLMessage decodes a DDL message's content. It is pure; anyone who
// may call pg_logical_emit_message can write the bytes.
func ParseDDLMessage(content []byte) (DDLMessage, error) {
	var m DDLMessage
	if err := json.Unmarshal(content, &m); err != nil {
		return m, fmt.Errorf("DDL message: not mooncdc's event trigger's JSON: %w", err)
	}
	if m.Tag == "" {
		return m, errors.New("DDL message: no command tag")
	}
	for _, t := range m.Tables {
		if t.Schema == "" || t.Table == "" {
			return m, fmt.Errorf("DDL message %q: a table without a schema or name", m.Tag)
		}
	}
	return m, nil
}

// SchemaChange is one record of the schema-change topic: one table of one
// DDL command.
type SchemaChange struct {
	Type  string // one of the SchemaChange* types
	DDL   string // "" (written null) when derived without the event trigger, and for a truncate
	Table DDLTable
	// PreviousSchema and PreviousTable are a renamed table's name before
	// the rename (tableChanges' previousId); "" otherwise.
	PreviousSchema, PreviousTable string
	Xid                           uint32
	LSN                           LSN
	// CommitTime is source.ts_ms; Now the event's ts_ms.
	CommitTime, Now time.Time
}

// ChangeType is the tableChanges type of a DDL message's table: a
// dropped table is DROP, a CREATE … command CREATE, anything else ALTER.
func (m DDLMessage) ChangeType(t DDLTable) string {
	switch {
	case t.Dropped:
		return SchemaChangeDrop
	case len(m.Tag) >= 6 && m.Tag[:6] == "CREATE" || m.Tag == "SELECT INTO":
		return SchemaChangeCreate
	}
	return SchemaChangeAlter
}

var (
	schemaOptionalInt32   = &Schema{Type: TypeInt32, Optional: true}
	schemaOptionalBoolean = &Schema{Type: TypeBoolean, Optional: true}

	schemaChangeKeySchema = &Schema{Type: TypeStruct, Name: "io.mooncdc.connector.postgresql.SchemaChangeKey", Version: 1, Fields: []Field{
		{"databaseName", schemaString},
		{"schemaName", schemaString},
		{"tableName", schemaString},
	}}
	schemaChangeColumnSchema = &Schema{Type: TypeStruct, Name: "io.debezium.connector.schema.Column", Version: 1, Fields: []Field{
		{"name", schemaString},
		{"typeName", schemaString},
		{"length", schemaOptionalInt32},
		{"scale", schemaOptionalInt32},
		{"position", &Schema{Type: TypeInt32}},
		{"optional", schemaOptionalBoolean},
		{"defaultValueExpression", schemaOptionalString},
	}}
	schemaChangeTableSchema = &Schema{Type: TypeStruct, Optional: true, Name: "io.debezium.connector.schema.Table", Version: 1, Fields: []Field{
		{"primaryKeyColumnNames", &Schema{Type: TypeArray, Optional: true, Items: schemaString}},
		{"columns", &Schema{Type: TypeArray, Items: schemaChangeColumnSchema}},
	}}
	schemaChangeSourceSchema = &Schema{Type: TypeStruct, Name: "io.mooncdc.connector.postgresql.SchemaChangeSource", Version: 1, Fields: []Field{
		{"version", schemaString},
		{"connector", schemaString},
		{"name", schemaString},
		{"ts_ms", schemaInt64},
		{"db", schemaString},
		{"schema", schemaString},
		{"table", schemaString},
		{"txId", &Schema{Type: TypeInt64, Optional: true}},
		{"lsn", &Schema{Type: TypeInt64, Optional: true}},
	}}
	schemaChangeValueSchema = &Schema{Type: TypeStruct, Name: "io.mooncdc.connector.postgresql.SchemaChangeValue", Version: 1, Fields: []Field{
		{"source", schemaChangeSourceSchema},
		{"ts_ms", schemaInt64},
		{"databaseName", schemaOptionalString},
		{"schemaName", schemaOptionalString},
		{"ddl", schemaOptionalString},
		{"tableChanges", &Schema{Type: TypeArray, Items: &Schema{Type: TypeStruct, Name: "io.debezium.connector.schema.Change", Version: 1, Fields: []Field{
			{"type", schemaString},
			{"id", schemaString},
			{"previousId", schemaOptionalString},
			{"table", schemaChangeTableSchema},
		}}}},
	}}
)

// SchemaChangeAvroSchemas returns the Avro schemas of the schema-change
// topic's key and value.
func SchemaChangeAvroSchemas() (key, value string) {
	return renderAvro(schemaChangeKeySchema), renderAvro(schemaChangeValueSchema)
}

// tableID is Debezium's TableId.toDoubleQuotedString of a Postgres table:
// "schema"."table".
func tableID(dst []byte, schemaName, table string) []byte {
	dst = append(dst, '"')
	dst = append(dst, schemaName...)
	dst = append(dst, `"."`...)
	dst = append(dst, table...)
	return append(dst, '"')
}

type schemaChangeHeads struct{ key, value []byte }

func (e *JSONEncoder) schemaChangeHeads() *schemaChangeHeads {
	if e.sc == nil {
		e.sc = &schemaChangeHeads{key: schemaHead(schemaChangeKeySchema), value: schemaHead(schemaChangeValueSchema)}
	}
	return e.sc
}

// AppendSchemaChangeKey appends the key of a schema-change record:
// {"databaseName":…,"schemaName":…,"tableName":…}.
func (e *JSONEncoder) AppendSchemaChangeKey(dst []byte, sc *SchemaChange) ([]byte, error) {
	if e.schemas {
		dst = append(dst, e.schemaChangeHeads().key...)
	}
	dst = append(dst, `{"databaseName":`...)
	dst = appendJSONString(dst, e.plans.cfg.Database)
	dst = append(dst, `,"schemaName":`...)
	dst = appendJSONString(dst, sc.Table.Schema)
	dst = append(dst, `,"tableName":`...)
	dst = appendJSONString(dst, sc.Table.Table)
	dst = append(dst, '}')
	if e.schemas {
		dst = append(dst, '}')
	}
	return dst, nil
}

// AppendSchemaChangeValue appends the value of a schema-change record.
func (e *JSONEncoder) AppendSchemaChangeValue(dst []byte, sc *SchemaChange) ([]byte, error) {
	if e.schemas {
		dst = append(dst, e.schemaChangeHeads().value...)
	}
	t := &sc.Table
	dst = append(dst, `{"source":{"version":`...)
	dst = appendJSONString(dst, e.plans.cfg.Version)
	dst = append(dst, `,"connector":"postgresql","name":`...)
	dst = appendJSONString(dst, e.plans.cfg.Name)
	dst = append(dst, `,"ts_ms":`...)
	dst = strconv.AppendInt(dst, sc.CommitTime.UnixMilli(), 10)
	dst = append(dst, `,"db":`...)
	dst = appendJSONString(dst, e.plans.cfg.Database)
	dst = append(dst, `,"schema":`...)
	dst = appendJSONString(dst, t.Schema)
	dst = append(dst, `,"table":`...)
	dst = appendJSONString(dst, t.Table)
	dst = append(dst, `,"txId":`...)
	dst = strconv.AppendUint(dst, uint64(sc.Xid), 10)
	dst = append(dst, `,"lsn":`...)
	dst = strconv.AppendUint(dst, uint64(sc.LSN), 10)
	dst = append(dst, `},"ts_ms":`...)
	dst = strconv.AppendInt(dst, sc.Now.UnixMilli(), 10)
	dst = append(dst, `,"databaseName":`...)
	dst = appendJSONString(dst, e.plans.cfg.Database)
	dst = append(dst, `,"schemaName":`...)
	dst = appendJSONString(dst, t.Schema)
	dst = append(dst, `,"ddl":`...)
	if sc.DDL == "" {
		dst = append(dst, "null"...) // derived: no statement is known
	} else {
		dst = appendJSONString(dst, sc.DDL)
	}
	dst = append(dst, `,"tableChanges":[{"type":`...)
	dst = appendJSONString(dst, sc.Type)
	dst = append(dst, `,"id":`...)
	dst = appendJSONString(dst, tableID(nil, t.Schema, t.Table))
	dst = append(dst, `,"previousId":`...)
	if sc.PreviousTable == "" {
		dst = append(dst, "null"...)
	} else {
		dst = appendJSONString(dst, tableID(nil, sc.PreviousSchema, sc.PreviousTable))
	}
	dst = append(dst, `,"table":`...)
	if sc.Type == SchemaChangeDrop {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, `{"primaryKeyColumnNames":[`...)
		for i, k := range t.PrimaryKey {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
		}
		dst = append(dst, `],"columns":[`...)
		for i, c := range t.Columns {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"name":`...)
			dst = appendJSONString(dst, c.Name)
			dst = append(dst, `,"typeName":`...)
			dst = appendJSONString(dst, c.TypeName)
			dst = append(dst, `,"length":`...)
			dst = appendOptionalInt32(dst, c.Length)
			dst = append(dst, `,"scale":`...)
			dst = appendOptionalInt32(dst, c.Scale)
			dst = append(dst, `,"position":`...)
			dst = strconv.AppendInt(dst, int64(c.Position), 10)
			dst = append(dst, `,"optional":`...)
			dst = strconv.AppendBool(dst, c.Optional)
			dst = append(dst, `,"defaultValueExpression":`...)
			if c.Default == nil {
				dst = append(dst, "null"...)
			} else {
				dst = appendJSONString(dst, *c.Default)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, "]}"...)
	}
	dst = append(dst, "}]}"...)
	if e.schemas {
		dst = append(dst, '}')
	}
	return dst, nil
}

func appendOptionalInt32(dst []byte, v *int32) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, int64(*v), 10)
}

// RegisterSchemaChange makes sure the schema-change schemas have registry
// ids, as Register does for a relation.
func (e *AvroEncoder) RegisterSchemaChange(key, value bool, register func(isKey bool, schema string) (int, error)) error {
	k, v := SchemaChangeAvroSchemas()
	if key && e.scKeyID < 0 {
		id, err := register(true, k)
		if err != nil {
			return err
		}
		e.scKeyID = int32(id)
	}
	if value && e.scValueID < 0 {
		id, err := register(false, v)
		if err != nil {
			return err
		}
		e.scValueID = int32(id)
	}
	return nil
}

// AppendSchemaChangeKey appends the Avro key of a schema-change record.
func (e *AvroEncoder) AppendSchemaChangeKey(dst []byte, sc *SchemaChange) ([]byte, error) {
	if e.scKeyID < 0 {
		return dst, errNotRegistered
	}
	w := e.reset()
	w.WriteString(e.cfg.Database)
	w.WriteString(sc.Table.Schema)
	w.WriteString(sc.Table.Table)
	return append(appendHeader(dst, e.scKeyID), w.Buffer()...), nil
}

// AppendSchemaChangeValue appends the Avro value of a schema-change
// record, field for field as schemaChangeValueSchema (an optional field is
// a union with null first: index 0 null, 1 the value).
func (e *AvroEncoder) AppendSchemaChangeValue(dst []byte, sc *SchemaChange) ([]byte, error) {
	if e.scValueID < 0 {
		return dst, errNotRegistered
	}
	w := e.reset()
	t := &sc.Table
	optString := func(s string) { w.WriteLong(1); w.WriteString(s) }
	optInt32 := func(v *int32) {
		if v == nil {
			w.WriteLong(0)
			return
		}
		w.WriteLong(1)
		w.WriteInt(*v)
	}
	// source
	w.WriteString(e.cfg.Version)
	w.WriteString("postgresql")
	w.WriteString(e.cfg.Name)
	w.WriteLong(sc.CommitTime.UnixMilli())
	w.WriteString(e.cfg.Database)
	w.WriteString(t.Schema)
	w.WriteString(t.Table)
	w.WriteLong(1)
	w.WriteLong(int64(sc.Xid))
	w.WriteLong(1)
	w.WriteLong(int64(sc.LSN))
	// the event
	w.WriteLong(sc.Now.UnixMilli())
	optString(e.cfg.Database)
	optString(t.Schema)
	if sc.DDL == "" {
		w.WriteLong(0)
	} else {
		optString(sc.DDL)
	}
	w.WriteLong(1) // one table change
	w.WriteString(sc.Type)
	w.WriteBytes(tableID(e.seq[:0], t.Schema, t.Table))
	if sc.PreviousTable == "" {
		w.WriteLong(0)
	} else {
		w.WriteLong(1)
		w.WriteBytes(tableID(e.seq[:0], sc.PreviousSchema, sc.PreviousTable))
	}
	if sc.Type == SchemaChangeDrop {
		w.WriteLong(0)
	} else {
		w.WriteLong(1)
		w.WriteLong(1)
		if len(t.PrimaryKey) > 0 {
			w.WriteLong(int64(len(t.PrimaryKey)))
			for _, k := range t.PrimaryKey {
				w.WriteString(k)
			}
		}
		w.WriteLong(0)
		if len(t.Columns) > 0 {
			w.WriteLong(int64(len(t.Columns)))
			for _, c := range t.Columns {
				w.WriteString(c.Name)
				w.WriteString(c.TypeName)
				optInt32(c.Length)
				optInt32(c.Scale)
				w.WriteInt(c.Position)
				w.WriteLong(1)
				w.WriteBool(c.Optional)
				if c.Default == nil {
					w.WriteLong(0)
				} else {
					optString(*c.Default)
				}
			}
		}
		w.WriteLong(0)
	}
	w.WriteLong(0) // end of tableChanges
	return append(appendHeader(dst, e.scValueID), w.Buffer()...), nil
}

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
