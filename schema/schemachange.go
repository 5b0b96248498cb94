package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// This file holds schema-change events: what mooncdc's DDL event trigger
// reports in a transactional logical message (prefix mooncdc_ddl), parsed
// by ParseDDLMessage, and the records of the <prefix>.schema-changes topic,
// in the shape of Debezium's schema change events where it fits
// (SchemaFactory.java:221-285 at v3.6.1.Final: source, ts_ms,
// databaseName, schemaName, ddl, tableChanges with type, id and the
// table's primary key and columns), keyed by the table. The records are
// written by schemachange_json.go and schemachange_avro.go.

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
