package schema

// This file exports the Kafka Connect JSON renderings other packages
// writing Connect data need (connector/internal/connectformat's
// CloudEvents data with its schema), so there is one writer of each.

// AppendConnectSchemaJSON appends s as Kafka Connect's JsonConverter
// writes a schema (the {"schema": …} block).
func AppendConnectSchemaJSON(dst []byte, s *Schema) []byte { return appendConnectJSON(dst, s, "") }

// AppendJSONString appends s as a quoted JSON string, escaped as Jackson
// escapes it.
func AppendJSONString(dst []byte, s string) []byte { return appendJSONString(dst, s) }

// The Connect schemas of the records the encoders write, for the
// pipeline's Connect view of them (connector/internal/record's
// ConnectView, which a transform chain reads): the same schemas the JSON
// converter's {"schema":…} blocks and the Avro schemas are rendered from.
// They are shared and must not be changed.

// ConnectSchemas returns the Connect schemas of the key (nil when the
// record has none: a relation without key columns, a truncate) and the
// value of ch's record under p (nil for a logical message). A flat
// delete in tombstone mode has the row's schema, optional (the null
// value's schema, as flat_encode.go writes it).
func (p *Plan) ConnectSchemas(ch *Change) (key, value *Schema) {
	if ch.Op == OpMessage || p == nil {
		return messageKeySchema, messageValueSchema
	}
	if ch.Op != OpTruncate {
		key = p.key
	}
	if p.flat != nil && ch.Op == OpDelete && p.flat.Delete == DeleteTombstone {
		return key, p.flatNull
	}
	return key, p.value
}

// TxConnectSchemas returns the Connect schemas of a transaction metadata
// record's key and value (txmeta.go).
func TxConnectSchemas() (key, value *Schema) { return txKeySchema, txValueSchema }

// SchemaChangeConnectSchemas returns the Connect schemas of a
// schema-change record's key and value (schemachange.go).
func SchemaChangeConnectSchemas() (key, value *Schema) {
	return schemaChangeKeySchema, schemaChangeValueSchema
}
