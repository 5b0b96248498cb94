package schema

import "slices"

// This file holds what the encoders precompute once per *Relation: each
// column's mapping (types.go), the escaped `"column":` prefixes, the
// per-table part of the source block and the record schemas. A Relation is
// immutable and a changed table gets a new pointer, so the pointer is the
// cache key and an entry never goes stale; the cache is bounded so that a
// session that sees many relation versions does not keep them all alive.

// relPlan is the precomputed encoding of one relation.
type relPlan struct {
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

	// Format-specific parts, filled by the encoder that owns the plan.
	jsonKeyHead, jsonValueHead []byte // `{"schema":…,"payload":` (JSON with schemas)
	jsonNullHead               []byte // the same with flatNull
	avro                       *avroPlan
}

// maxPlans bounds a plan cache. Each session resends relations, and DDL
// creates new versions; far fewer than this are live at once.
const maxPlans = 4096

// planCache maps relations to their plans for one encoder.
type planCache struct {
	cfg      Config
	plans    map[*Relation]*relPlan
	lastRel  *Relation
	lastPlan *relPlan
}

func newPlanCache(cfg Config) planCache {
	return planCache{cfg: cfg, plans: make(map[*Relation]*relPlan)}
}

// get returns the cached plan of rel and whether it was just built.
func (c *planCache) get(rel *Relation) (*relPlan, bool) {
	if rel == c.lastRel {
		return c.lastPlan, false
	}
	p, ok := c.plans[rel]
	if !ok {
		if len(c.plans) >= maxPlans {
			// Evict an arbitrary entry: cheap, and a miss only costs a
			// rebuild.
			for k := range c.plans {
				delete(c.plans, k)
				break
			}
		}
		p = buildPlan(&c.cfg, rel)
		c.plans[rel] = p
	}
	c.lastRel, c.lastPlan = rel, p
	return p, !ok
}

func buildPlan(cfg *Config, rel *Relation) *relPlan {
	p := &relPlan{cols: make([]*colType, len(rel.Columns)), names: make([][]byte, len(rel.Columns)),
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
func (p *relPlan) shape(cfg *Config, rel *Relation) {
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
