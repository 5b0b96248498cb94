package schema

// This file registers the schema-change topic's Avro schemas and writes its
// records as Avro.

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
