package schema

import (
	"errors"
	"slices"
)

// This file holds what the encoders precompute once per *Relation: each
// column's mapping (types.go), the escaped `"column":` prefixes, the
// per-table part of the source block, the record schemas and their JSON
// heads and Avro texts. NewPlan builds it whole; nothing in it changes
// afterwards, so one plan serves any number of encoders on any number of
// goroutines (a table copied on several connections shares its plan).
// The caller keeps the plan beside the relation (connector's record plan):
// a changed table gets a new *Relation and so a new plan.

// Plan is the precomputed encoding of one relation under one Config: what
// AppendKey, AppendValue, Schemas and OutboxEvent take with a change of
// that relation. Make it with NewPlan; it is immutable and safe for
// concurrent use. It holds no registry ids: those depend on the subject a
// schema is registered under, not on the relation (AvroIDs).
type Plan struct {
	rel   *Relation
	cfg   Config // the config the plan was made for, with defaults (Relax)
	cols  []*colType
	names [][]byte // `"name":`, escaped
	// defaults holds, per column, the Postgres text of the column's
	// default as a ValueText (Kind ValueNull when it has none): what a
	// required column absent from a key-only image gets, and, unless
	// Config.KeepNulls, what a NULL is written as (defaults.go).
	defaults []Value
	// nullsToDefault is !Config.KeepNulls.
	nullsToDefault bool
	// vcols are the columns' types in record values: cols, except that a
	// column Config.ShapeColumn leaves out is omitted and a mapped one has
	// its mapper's schema parameters. The same slice as cols when nothing
	// is shaped. Keys use cols: Debezium builds key fields without
	// filters or mappers (TableSchemaBuilder.java:166-170).
	vcols []*colType
	// rewrites holds, per column, the mapper that rewrites its values;
	// nil when no column's values change.
	rewrites []*BoundRewrite
	// keyExtra is the value of the key field Config.Route adds ("" for
	// none), keyExtraJSON its `,"field":"value"` in JSON.
	keyExtra     string
	keyExtraJSON []byte
	// sourceTail is `,"schema":"<schema>","table":"<table>","txId":`, the
	// per-table middle of the source block.
	sourceTail []byte
	// key and value are the Connect schemas of the record key (nil when
	// the relation has no key columns) and value (the envelope).
	key, value *Schema

	// flat is Config.Flat: value is the flat record's (flat.go);
	// flatNames are the added fields' `"name":`, flatNull the schema of
	// a tombstone-mode delete's null value (the row's, optional).
	flat      *FlatConfig
	flatNames [][]byte
	flatNull  *Schema

	// The format-specific parts, built with the rest for the formats
	// Config.PlanFormats names (all when it is zero).
	jsonKeyHead, jsonValueHead []byte // `{"schema":…,"payload":` (JSON with schemas); no key head without key
	jsonNullHead               []byte // the same with flatNull
	avroKey, avroValue         string // the Avro schemas; avroKey "" without key columns
	avroErr                    error  // the Avro schemas are not valid Avro
}

// NewPlan returns the plan of rel's records under cfg, which must be valid
// (Config.Validate) and the config of the encoders the plan is used with.
// It calls cfg.OnUnknownType for each column of a type without a mapping.
func NewPlan(cfg Config, rel *Relation) *Plan {
	cfg = cfg.withDefaults()
	p := buildPlan(&cfg, rel)
	p.rel, p.cfg = rel, cfg
	if p.serves(PlanJSONSchemas) {
		if p.key != nil {
			p.jsonKeyHead = schemaHead(p.key)
		}
		p.jsonValueHead = schemaHead(p.value)
		if p.flat != nil {
			p.jsonNullHead = schemaHead(p.flatNull)
		}
	}
	if p.serves(PlanAvro) {
		if p.key != nil {
			p.avroKey = renderAvro(p.key)
		}
		p.avroValue = renderAvro(p.value)
		p.avroErr = checkAvro(rel.QualifiedName(), p.avroValue)
		if p.avroErr == nil && p.avroKey != "" {
			p.avroErr = checkAvro(rel.QualifiedName()+" (key)", p.avroKey)
		}
	}
	return p
}

// serves reports whether p has the parts of format f (Config.PlanFormats).
func (p *Plan) serves(f PlanFormats) bool { return p.cfg.PlanFormats == 0 || p.cfg.PlanFormats&f != 0 }

// Relax returns the plan of rel, another version of p's relation (the
// same table with some NOT NULL columns made optional), under p's config.
func (p *Plan) Relax(rel *Relation) *Plan { return NewPlan(p.cfg, rel) }

// Relation returns the relation p was made for.
func (p *Plan) Relation() *Relation { return p.rel }

// errPlanMismatch is a change encoded with the plan of another relation.
var errPlanMismatch = errors.New("internal: the change is encoded with the plan of another relation (or none)")

// errPlanFormat is a plan used by an encoder whose format it does not serve.
var errPlanFormat = errors.New("internal: the relation's plan was made without this encoder's format (Config.PlanFormats)")

// planOf returns rel's plan p, or an error when p is not rel's or lacks
// the parts of format need (0: none needed, plain JSON).
func planOf(p *Plan, rel *Relation, need PlanFormats) (*Plan, error) {
	switch {
	case p == nil || p.rel != rel:
		return nil, errPlanMismatch
	case need != 0 && !p.serves(need):
		return nil, errPlanFormat
	}
	return p, nil
}

func buildPlan(cfg *Config, rel *Relation) *Plan {
	p := &Plan{cols: make([]*colType, len(rel.Columns)), names: make([][]byte, len(rel.Columns)),
		defaults: make([]Value, len(rel.Columns)), nullsToDefault: !cfg.KeepNulls}
	base := cfg.Name + "." + rel.Schema + "." + rel.Table
	var keyField string
	if cfg.Route != nil {
		base, keyField, p.keyExtra = cfg.Route(rel.Schema, rel.Table)
	}
	value := &Schema{Type: TypeStruct, Name: base + ".Value"}
	for i, c := range rel.Columns {
		p.cols[i] = mapColumn(cfg, c)
		if ct, d, ok := withDefault(p.cols[i], c); ok {
			p.cols[i], p.defaults[i] = ct, d
		}
		if p.cols[i].unknown && cfg.OnUnknownType != nil {
			cfg.OnUnknownType(rel.QualifiedName(), c.Name, typeDisplayName(c))
		}
		p.names[i] = append(appendJSONString(nil, c.Name), ':')
	}
	p.shape(cfg, rel)
	for i, c := range rel.Columns {
		if !p.vcols[i].omit {
			value.Fields = append(value.Fields, Field{c.Name, p.vcols[i].schema})
		}
	}
	if len(rel.KeyIndexes) > 0 {
		p.key = &Schema{Type: TypeStruct, Name: base + ".Key"}
		for _, i := range rel.KeyIndexes {
			if i >= 0 && i < len(p.cols) && !p.cols[i].omit {
				p.key.Fields = append(p.key.Fields, Field{rel.Columns[i].Name, p.cols[i].schema.withOptional(false)})
			}
		}
		if keyField != "" {
			// ByLogicalTableRouter.updateKeySchema (ByLogicalTableRouter.java:321-340):
			// a required string after the key's own fields.
			p.key.Fields = append(p.key.Fields, Field{keyField, schemaString})
			p.keyExtraJSON = append(append(append([]byte{','}, appendJSONString(nil, keyField)...), ':'), appendJSONString(nil, p.keyExtra)...)
		} else {
			p.keyExtra = ""
		}
	}
	p.value = envelopeSchema(base, value)
	if f := cfg.Flat; f != nil {
		// The flat envelope is chosen here, once per relation: the
		// encoders write p.value's shape (flat_encode.go).
		p.flat, p.value, p.flatNull = f, flatValueSchema(value, f), value.withOptional(true)
		for _, fl := range f.Fields {
			p.flatNames = append(p.flatNames, append(appendJSONString(nil, fl.Name), ':'))
		}
	}
	p.sourceTail = appendSourceTail(nil, rel.Schema, rel.Table)
	return p
}

// typeDisplayName names a column's type for messages.
func typeDisplayName(c Column) string {
	if c.Type != nil && c.Type.Name != "" {
		return c.Type.Name
	}
	return TypeName(c.TypeOID)
}

func appendSourceTail(dst []byte, schemaName, table string) []byte {
	dst = append(dst, `,"schema":`...)
	dst = appendJSONString(dst, schemaName)
	dst = append(dst, `,"table":`...)
	dst = appendJSONString(dst, table)
	return append(dst, `,"txId":`...)
}

// withDefault returns column c's type with the default Debezium gives it
// in the schema, and the default as a value, or false when it has none:
// no parser for the type, an expression Debezium cannot read, or a value
// the column's conversion refuses (PostgresDefaultValueConverter.java:115-119)
// or that is a struct (a variable-scale decimal: KAFKA-12694, :108-112).
func withDefault(ct *colType, c Column) (*colType, Value, bool) {
	text, ok := defaultText(c)
	if !ok || ct.omit || ct.unknown || ct.conv == convArray || ct.conv == convHstoreMap {
		return ct, Value{}, false
	}
	var cv converter
	d, err := cv.scalar(ct, []byte(text))
	if err != nil {
		return ct, Value{}, false
	}
	s := *ct.schema
	switch d.k {
	case dBool, dInt, dFloat, dString:
		s.Default = appendDatumJSON(nil, &d)
	case dBytes:
		s.Default = appendDatumJSON(nil, &d)
		// AvroData.defaultValueFromConnect: bytes as an ISO-8859-1 string.
		runes := make([]rune, len(d.b))
		for i, b := range d.b {
			runes[i] = rune(b)
		}
		s.AvroDefault = appendJSONString(nil, string(runes))
	default:
		return ct, Value{}, false
	}
	s.HasDefault = true
	out := *ct
	out.schema = &s
	return &out, Value{Kind: ValueText, Data: []byte(text)}, true
}

// shape fills vcols and rewrites from cfg.ShapeColumn, asked once per
// column of the relation.
func (p *Plan) shape(cfg *Config, rel *Relation) {
	p.vcols = p.cols
	if cfg.ShapeColumn == nil {
		return
	}
	for i, c := range rel.Columns {
		sent, rw := cfg.ShapeColumn(rel.Schema, rel.Table, c.Name)
		if sent && rw == nil || p.cols[i].omit {
			continue
		}
		if &p.vcols[0] == &p.cols[0] {
			p.vcols = slices.Clone(p.cols)
		}
		vc := *p.cols[i]
		if !sent {
			vc.omit = true
			p.vcols[i] = &vc
			continue
		}
		b := rw.Bind(c, vc.schema)
		if params := b.Params(); len(params) > 0 {
			vs := *vc.schema
			vs.Params = append(slices.Clip(vs.Params), params...)
			vc.schema = &vs
		}
		p.vcols[i] = &vc
		if b.Changes() && scalarConv(vc.conv) {
			if p.rewrites == nil {
				p.rewrites = make([]*BoundRewrite, len(rel.Columns))
			}
			p.rewrites[i] = b
		}
	}
}

// scalarConv reports a conversion cv.scalar handles (not an array or an
// hstore map), the values a mapper can rewrite.
func scalarConv(c conv) bool { return c != convArray && c != convHstoreMap }
