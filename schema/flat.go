package schema

import (
	"fmt"
	"slices"
	"strings"
)

// This file holds the flat envelope: Debezium 3.6.1's ExtractNewRecordState
// SMT (debezium-connect-plugins/src/main/java/io/debezium/transforms/,
// "ENRS" below for ExtractNewRecordState.java, "AENRS" for
// AbstractExtractNewRecordState.java, "DDHS" for
// extractnewstate/DefaultDeleteHandlingStrategy.java) applied where the
// record is encoded instead of after it: the value is the row itself
// (after, or before for a rewritten delete), with the change's metadata
// fields it names appended. The key is the envelope's, unchanged
// (ENRS.java:205-212 keeps keySchema and key). Which records a change
// becomes is FlatConfig.Records; the value's shape is planned once per
// relation (plan.go) and written by flat_encode.go.

// DeleteHandling is delete.tombstone.handling.mode
// (ExtractNewRecordStateConfigDefinition.java:19-24, 72-84).
type DeleteHandling string

// The delete handling modes; DeleteTombstone is the default
// (ExtractNewRecordStateConfigDefinition.java:77).
const (
	DeleteDrop                 DeleteHandling = "drop"
	DeleteTombstone            DeleteHandling = "tombstone"
	DeleteRewrite              DeleteHandling = "rewrite"
	DeleteRewriteWithTombstone DeleteHandling = "rewrite-with-tombstone"
	DeleteToTombstone          DeleteHandling = "delete-to-tombstone"
)

// DeleteHandlings are the modes, the default first.
var DeleteHandlings = []DeleteHandling{DeleteTombstone, DeleteDrop, DeleteRewrite, DeleteRewriteWithTombstone, DeleteToTombstone}

// DeletedField is the field the rewrite modes add, a string "true" on a
// delete and "false" otherwise (ExtractNewRecordStateConfigDefinition.java:16;
// AbstractExtractRecordStrategy.java:36-37).
const DeletedField = "__deleted"

// DefaultFlatPrefix is add.fields.prefix's and add.headers.prefix's
// default (ExtractNewRecordStateConfigDefinition.java:17, 99, 118).
const DefaultFlatPrefix = "__"

// FlatConfig is the flat envelope. Build it with NewFlatConfig.
type FlatConfig struct {
	Delete DeleteHandling
	// Fields are appended to the value after the row's columns (and
	// after __deleted): add.fields (ENRS.java:182-213, 282-302).
	Fields []FlatField
	// Headers are added to each record: add.headers (AENRS.java:136-152).
	Headers []FlatField
	// snapshotField and snapshotHeader: a field or header is
	// source.snapshot, which a copy's last row rewrites (MarkSnapshot).
	snapshotField, snapshotHeader bool
}

// NewFlatConfig parses the add.fields and add.headers lists (each entry
// `field`, `struct.field` or either with `:newName`) with their prefixes,
// refusing a field the change event does not have: Debezium skips one
// silently (AENRS.java:268-283), which turns a typo into a missing column.
func NewFlatConfig(mode DeleteHandling, fields []string, fieldsPrefix string, headers []string, headersPrefix string) (*FlatConfig, error) {
	if mode == "" {
		mode = DeleteTombstone
	}
	known := false
	for _, m := range DeleteHandlings {
		known = known || m == mode
	}
	if !known {
		names := make([]string, len(DeleteHandlings))
		for i, m := range DeleteHandlings {
			names[i] = string(m)
		}
		return nil, fmt.Errorf("delete_handling: %q is not one of %s (default tombstone)", mode, strings.Join(names, ", "))
	}
	c := &FlatConfig{Delete: mode}
	var err error
	if c.Fields, err = parseFlatFields("add_fields", fieldsPrefix, fields); err != nil {
		return nil, err
	}
	if c.Headers, err = parseFlatFields("add_headers", headersPrefix, headers); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	if c.rewrites() {
		seen[DeletedField] = true
	}
	for _, f := range c.Fields {
		if seen[f.Name] {
			// SchemaBuilder refuses a duplicate field name, so Debezium
			// fails the record.
			return nil, fmt.Errorf("add_fields: %q is added twice (or is %s); rename one with field:newName", f.Name, DeletedField)
		}
		seen[f.Name] = true
		c.snapshotField = c.snapshotField || f.ref == refSnapshot
	}
	for _, h := range c.Headers {
		c.snapshotHeader = c.snapshotHeader || h.ref == refSnapshot
	}
	return c, nil
}

// rewrites reports a rewrite mode: values carry __deleted (DDHS.java:84-104).
func (c *FlatConfig) rewrites() bool {
	return c.Delete == DeleteRewrite || c.Delete == DeleteRewriteWithTombstone
}

// HasSnapshotField reports whether the value carries source.snapshot.
func (c *FlatConfig) HasSnapshotField() bool { return c.snapshotField }

// Records says which records ch becomes: value, a record whose value
// AppendValue writes (for a delete in tombstone mode, a null: see
// AppendValue); tombstone, a record with the key and no value after it
// (or, without value, instead of it). tombstonesOnDelete is whether the
// connector writes its own tombstone after a delete
// (tombstones.on.delete), which only rewrite-with-tombstone keeps.
//
//   - a truncate, and a delete without an old image (after and before
//     both null), are dropped (ENRS.java:124-128; AbstractExtractRecordStrategy.java:41-46);
//   - a delete, by mode (DDHS.java:33-82): drop, nothing; tombstone, the
//     delete with a null value, the tombstone dropped; rewrite, the old
//     row with __deleted "true", the tombstone dropped;
//     rewrite-with-tombstone, that and the tombstone; delete-to-tombstone,
//     a tombstone in place of the delete, the connector's own dropped;
//   - every other change is one record.
func (c *FlatConfig) Records(ch *Change, tombstonesOnDelete bool) (value, tombstone bool) {
	switch {
	case ch.Op == OpTruncate, ch.Op == OpDelete && ch.Before == nil:
		return false, false
	case ch.Op != OpDelete:
		return true, false
	}
	switch c.Delete {
	case DeleteDrop:
		return false, false
	case DeleteRewriteWithTombstone:
		return true, tombstonesOnDelete
	case DeleteToTombstone:
		return false, true
	}
	return true, false // tombstone, rewrite
}

// TombstoneHeader reports whether header i goes on a tombstone the
// connector writes after a delete, and its value: only op, as "d"
// (AENRS.java:139-146).
func (c *FlatConfig) TombstoneHeader(i int) (value string, ok bool) {
	if c.Headers[i].ref == refOp {
		return string(OpDelete), true
	}
	return "", false
}

// FlatField is one entry of add.fields or add.headers: the envelope field
// it copies and the name it gets.
type FlatField struct {
	Name string // the new field's or header's name, prefix included
	ref  metaRef
}

// Snapshot reports whether f copies source.snapshot, which a copy's last
// row changes after it is encoded.
func (f FlatField) Snapshot() bool { return f.ref == refSnapshot }

// metaRef is an envelope field that a flat record can copy.
type metaRef uint8

const (
	refOp metaRef = iota
	refTsMs
	refTsUs
	refTsNs
	refVersion
	refConnector
	refName
	refSourceTsMs
	refSnapshot
	refDB
	refSequence
	refSourceTsUs
	refSourceTsNs
	refSchema
	refTable
	refTxID
	refLSN
	refXmin
	refOrigin
	refOriginLSN
	refTransactionID
	refTotalOrder
	refCollectionOrder
)

// Where each field lives: the envelope's own (Envelope.java's op and ts_*),
// the Postgres source block (connect.go's sourceSchema) and the
// transaction block (transactionSchema), with their schemas as
// FieldReference.getSchema gives them: the field's type, name, version and
// parameters, optional, without the default (AENRS.java:261-266; Kafka's
// SchemaUtil.copySchemaBasics copies no default).
var (
	topFields = map[string]metaRef{"op": refOp, "ts_ms": refTsMs, "ts_us": refTsUs, "ts_ns": refTsNs}
	srcFields = map[string]metaRef{"version": refVersion, "connector": refConnector, "name": refName, "ts_ms": refSourceTsMs,
		"snapshot": refSnapshot, "db": refDB, "sequence": refSequence, "ts_us": refSourceTsUs, "ts_ns": refSourceTsNs,
		"schema": refSchema, "table": refTable, "txId": refTxID, "lsn": refLSN, "xmin": refXmin, "origin": refOrigin,
		"origin_lsn": refOriginLSN}
	txFields = map[string]metaRef{"id": refTransactionID, "total_order": refTotalOrder, "data_collection_order": refCollectionOrder}

	metaSchemas = func() [refCollectionOrder + 1]*Schema {
		var s [refCollectionOrder + 1]*Schema
		for r := range s {
			s[r] = schemaOptionalString
		}
		for _, r := range []metaRef{refTsMs, refTsUs, refTsNs, refSourceTsMs, refSourceTsUs, refSourceTsNs, refTxID, refLSN,
			refXmin, refOriginLSN, refTotalOrder, refCollectionOrder} {
			s[r] = schemaOptionalInt64
		}
		snap := *snapshotSchema
		snap.Default, snap.HasDefault = nil, false
		s[refSnapshot] = &snap
		return s
	}()
)

// parseFlatFields parses one list as FieldReference does (AENRS.java:187-237):
// `field` names the envelope field of that name, else the transaction
// block's for id, total_order and data_collection_order, else the source
// block's (determineStruct, :207-225), and is added as prefix+field;
// `struct.field` names struct's field, falling back to the envelope's own
// field of that name (:268-283), added as prefix+struct_field; `:newName`
// after either names it prefix+newName.
func parseFlatFields(key, prefix string, specs []string) ([]FlatField, error) {
	var out []FlatField
	for _, spec := range specs {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue
		}
		path, rename, renamed := strings.Cut(spec, ":")
		if strings.Contains(rename, ":") {
			return nil, fmt.Errorf("%s: %q has more than one ':'; write field or field:newName", key, spec)
		}
		structName, field, qualified := strings.Cut(path, ".")
		if strings.Contains(field, ".") {
			return nil, fmt.Errorf("%s: %q: name a field of the envelope, source or transaction, e.g. source.ts_ms", key, spec)
		}
		var ref metaRef
		var ok bool
		switch {
		case !qualified:
			field = structName
			if ref, ok = topFields[field]; !ok {
				if ref, ok = txFields[field]; !ok {
					ref, ok = srcFields[field]
				}
			}
		case structName == "source":
			ref, ok = srcFields[field]
		case structName == "transaction":
			ref, ok = txFields[field]
		}
		if !ok && qualified && (structName == "source" || structName == "transaction") {
			ref, ok = topFields[field]
		}
		if !ok {
			return nil, fmt.Errorf("%s: %q is not a field of the change event; use op, ts_ms, ts_us, ts_ns, source.<field> "+
				"(version, connector, name, ts_ms, snapshot, db, sequence, ts_us, ts_ns, schema, table, txId, lsn, xmin, origin, origin_lsn) "+
				"or transaction.<field> (id, total_order, data_collection_order)", key, spec)
		}
		name := prefix + field
		switch {
		case renamed:
			name = prefix + rename
		case qualified:
			name = prefix + structName + "_" + field
		}
		out = append(out, FlatField{Name: name, ref: ref})
	}
	return out, nil
}

// flatValueSchema is the value schema of a flat record: the row's struct
// <base>.Value, required (InsertField and ENRS.addFields rebuild it with
// SchemaUtil.copySchemaBasics onto SchemaBuilder.struct(), ENRS.java:282-298,
// which does not copy optionality), its columns, then __deleted (an
// optional string, Kafka's InsertField for a static field) in the rewrite
// modes, then the added fields in their order.
func flatValueSchema(row *Schema, c *FlatConfig) *Schema {
	s := &Schema{Type: TypeStruct, Name: row.Name, Fields: row.Fields}
	if c.rewrites() || len(c.Fields) > 0 {
		s.Fields = slices.Clip(s.Fields)
	}
	if c.rewrites() {
		s.Fields = append(s.Fields, Field{DeletedField, schemaOptionalString})
	}
	for _, f := range c.Fields {
		s.Fields = append(s.Fields, Field{f.Name, metaSchemas[f.ref]})
	}
	return s
}
