package pgsource

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mooncdc/mooncdc/schema"
)

// This file reads what the record schemas need from the catalog and
// pgoutput does not send: whether a column is NOT NULL (Debezium makes
// nullable columns optional fields), its default expression (Debezium
// puts the default in the field's schema), and what a type that is not built in
// is (enum labels, a domain's base type, an array's element type, the name
// of an extension type such as hstore). The stream's relations and the
// copy's relations are completed the same way, so that a table's snapshot
// rows and its changes carry the same schema.

// Querier is what a lookup needs from a connection.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// TypeCache remembers resolved types by OID (nil for built-in types).
type TypeCache map[uint32]*schema.TypeInfo

// CompleteRelation returns rel with NotNull and Type filled from the
// catalog (a copy; rel is not changed). Columns the catalog no longer has
// (the table changed since the WAL was written) stay nullable and typed by
// OID.
func CompleteRelation(ctx context.Context, q Querier, rel *schema.Relation, types TypeCache) (*schema.Relation, error) {
	rows, err := q.Query(ctx, `SELECT a.attname, a.attnotnull, pg_get_expr(d.adbin, d.adrelid)
		FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped`, rel.OID)
	if err != nil {
		return nil, fmt.Errorf("look up the columns of %s: %w", rel.QualifiedName(), err)
	}
	type attr struct {
		notNull bool
		def     *string
	}
	attrs := map[string]attr{}
	for rows.Next() {
		var name string
		var a attr
		if err := rows.Scan(&name, &a.notNull, &a.def); err != nil {
			rows.Close()
			return nil, fmt.Errorf("look up the columns of %s: %w", rel.QualifiedName(), err)
		}
		attrs[name] = a
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("look up the columns of %s: %w", rel.QualifiedName(), err)
	}
	out := *rel
	out.Columns = make([]schema.Column, len(rel.Columns))
	for i, c := range rel.Columns {
		a := attrs[c.Name]
		c.NotNull = a.notNull
		if a.def != nil {
			c.Default, c.HasDefault = *a.def, true
		}
		if c.Type, err = resolveType(ctx, q, c.TypeOID, types); err != nil {
			return nil, fmt.Errorf("look up the type of column %q of %s: %w", c.Name, rel.QualifiedName(), err)
		}
		out.Columns[i] = c
	}
	return &out, nil
}

// resolveType describes a type that is not built in; nil for a built-in
// one. Domains resolve to their base type (with the domain's typmod),
// arrays carry their element type.
func resolveType(ctx context.Context, q Querier, oid uint32, types TypeCache) (*schema.TypeInfo, error) {
	if schema.BuiltinType(oid) {
		return nil, nil
	}
	if ti, ok := types[oid]; ok {
		return ti, nil
	}
	var (
		name      string
		typtype   string
		base      uint32
		mod       int32
		elem      uint32
		category  string
		labels    []string
		delim     string
		elemDelim string
	)
	// typdelim is the type's own array delimiter; elemdelim its element
	// type's, which splits this type's text when it is an array (a
	// built-in element type is not looked up on its own).
	err := q.QueryRow(ctx, `SELECT t.typname, t.typtype::text, t.typbasetype, t.typtypmod, t.typelem, t.typcategory::text,
			coalesce((SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid), '{}'),
			t.typdelim::text, coalesce((SELECT et.typdelim::text FROM pg_type et WHERE et.oid = t.typelem), ',')
		FROM pg_type t WHERE t.oid = $1`, oid).Scan(&name, &typtype, &base, &mod, &elem, &category, &labels, &delim, &elemDelim)
	if err == pgx.ErrNoRows {
		// Dropped since: the value is sent as text.
		ti := &schema.TypeInfo{OID: oid, Name: fmt.Sprintf("oid %d", oid), Kind: 'b', Mod: -1}
		types[oid] = ti
		return ti, nil
	}
	if err != nil {
		return nil, err
	}
	ti := &schema.TypeInfo{OID: oid, Name: name, Kind: typtype[0], Mod: -1, Labels: labels, Delim: delimByte(delim)}
	types[oid] = ti // before recursing: a type cannot contain itself, but be safe
	switch {
	case typtype == "d":
		b, err := resolveType(ctx, q, base, types)
		if err != nil {
			return nil, err
		}
		if b == nil {
			*ti = schema.TypeInfo{OID: base, Name: name, Kind: 'b', Mod: mod, Delim: delimByte(delim)}
		} else {
			*ti = *b
			if mod >= 0 {
				ti.Mod = mod
			}
		}
		ti.Domain = true
	case category == "A" && elem != 0:
		e, err := resolveType(ctx, q, elem, types)
		if err != nil {
			return nil, err
		}
		if e == nil {
			e = &schema.TypeInfo{OID: elem, Kind: 'b', Mod: -1, Delim: delimByte(elemDelim)}
		}
		ti.Elem = e
	}
	return ti, nil
}

// delimByte is a typdelim read as text: one byte (Postgres' typdelim is a
// "char", a single byte).
func delimByte(s string) byte {
	if len(s) != 1 {
		return ','
	}
	return s[0]
}

// CatalogConn is a lazily opened SQL connection for catalog lookups from
// the stream goroutine.
type CatalogConn struct {
	PGConfig *pgconn.Config
	conn     *pgx.Conn
	Types    TypeCache
}

func (c *CatalogConn) Get(ctx context.Context) (*pgx.Conn, error) {
	if c.conn != nil && c.conn.IsClosed() {
		c.conn = nil // a query past its deadline closed it (snapshot: link.go)
	}
	if c.conn == nil {
		conn, err := Dial(ctx, c.PGConfig)
		if err != nil {
			return nil, err
		}
		c.conn = conn
		c.Types = TypeCache{}
	}
	return c.conn, nil
}

func (c *CatalogConn) Close() {
	if c.conn != nil {
		_ = c.conn.Close(context.Background())
		c.conn = nil
	}
}
