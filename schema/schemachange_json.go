package schema

import "strconv"

// This file writes schema-change records as JSON.

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
	dst = appendJSONString(dst, e.cfg.Database)
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
	dst = appendJSONString(dst, e.cfg.Version)
	dst = append(dst, `,"connector":"postgresql","name":`...)
	dst = appendJSONString(dst, e.cfg.Name)
	dst = append(dst, `,"ts_ms":`...)
	dst = strconv.AppendInt(dst, sc.CommitTime.UnixMilli(), 10)
	dst = append(dst, `,"db":`...)
	dst = appendJSONString(dst, e.cfg.Database)
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
	dst = appendJSONString(dst, e.cfg.Database)
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
