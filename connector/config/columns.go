package config

import (
	"fmt"
	"strings"

	"github.com/mooncdc/mooncdc/schema"
)

// This file holds the column configuration of record values:
// postgres.columns_include and postgres.columns_exclude (Debezium's
// column.include.list and column.exclude.list) and the column mappers
// format.column_mask, column_hash and column_truncate (column.mask.with.N.chars,
// column.mask.hash[.v2].ALG.with.salt.SALT, column.truncate.to.N.chars).
// columnRules.shape is what the record plan asks once per column of a
// relation (schema.Config.ShapeColumn).

// ColumnPattern selects columns by schema, table and column name, each of
// which may hold '*' wildcards (as TablePattern).
type ColumnPattern struct {
	Table  TablePattern
	Column string
}

// ParseColumnPattern parses schema.table.column; identifiers follow
// ParseTablePattern's rules (quotes keep case and dots).
func ParseColumnPattern(s string) (ColumnPattern, error) {
	parts, err := splitIdentifiers(strings.TrimSpace(s))
	if err != nil {
		return ColumnPattern{}, fmt.Errorf("column pattern %q: %w", s, err)
	}
	if len(parts) != 3 {
		return ColumnPattern{}, fmt.Errorf("column pattern %q: has %d dot-separated parts; write schema.table.column, e.g. public.users.email or public.*.password", s, len(parts))
	}
	return ColumnPattern{Table: TablePattern{Schema: parts[0], Table: parts[1]}, Column: parts[2]}, nil
}

// Match reports whether p selects column of schema.table.
func (p ColumnPattern) Match(schemaName, table, column string) bool {
	return p.Table.Match(schemaName, table) && globMatch(p.Column, column)
}

// ColumnMaskRule replaces the values of the columns with Chars '*'.
type ColumnMaskRule struct {
	Columns []string `yaml:"columns"`
	Chars   int      `yaml:"chars"`
}

// ColumnHashRule replaces the values of the columns with the hex digest
// of Salt and the value, as Debezium's version 1 (Java-serialized string)
// or version 2 (UTF-8) hash.
type ColumnHashRule struct {
	Columns   []string `yaml:"columns"`
	Algorithm string   `yaml:"algorithm"`
	Salt      string   `yaml:"salt"`
	Version   int      `yaml:"version"` // 1 (default) or 2
}

// ColumnTruncateRule cuts the values of the columns to Length characters.
type ColumnTruncateRule struct {
	Columns []string `yaml:"columns"`
	Length  int      `yaml:"length"`
}

// columnRules is the parsed column configuration.
type ColumnRules struct {
	include, exclude []ColumnPattern
	mappers          []columnMapper // in Debezium's order: truncate, mask, hash, hash v2
}

type columnMapper struct {
	columns []ColumnPattern
	rewrite schema.ColumnRewrite
}

// newColumnRules parses and checks the column keys; errors name the key.
func NewColumnRules(c Config) (*ColumnRules, error) {
	var r ColumnRules
	var errs []string
	parse := func(key string, ss []string) []ColumnPattern {
		var out []ColumnPattern
		for _, s := range ss {
			p, err := ParseColumnPattern(s)
			if err != nil {
				errs = append(errs, key+": "+err.Error())
				continue
			}
			out = append(out, p)
		}
		return out
	}
	r.include = parse("postgres.columns_include", c.Postgres.ColumnsInclude)
	r.exclude = parse("postgres.columns_exclude", c.Postgres.ColumnsExclude)
	add := func(key string, cols []string, rw schema.ColumnRewrite) {
		if len(cols) == 0 {
			errs = append(errs, key+": a rule lists no columns; give columns: [schema.table.column, …]")
		}
		if err := rw.Validate(); err != nil {
			errs = append(errs, key+": "+err.Error())
		}
		r.mappers = append(r.mappers, columnMapper{parse(key, cols), rw})
	}
	// ColumnMappers.java:56-76 (v3.6.1.Final) builds truncation, masks,
	// then hashes, v1 before v2; the first rule that matches a column is
	// its mapper (:329-331).
	for _, t := range c.Format.ColumnTruncate {
		add("format.column_truncate", t.Columns, schema.ColumnRewrite{Kind: schema.RewriteTruncate, Chars: t.Length})
	}
	for _, m := range c.Format.ColumnMask {
		add("format.column_mask", m.Columns, schema.ColumnRewrite{Kind: schema.RewriteMask, Chars: m.Chars})
	}
	for _, v := range []int{1, 2} {
		for _, h := range c.Format.ColumnHash {
			if max(h.Version, 1) == v {
				add("format.column_hash", h.Columns, schema.ColumnRewrite{Kind: schema.RewriteHash, Algorithm: h.Algorithm, Salt: h.Salt, Version: v})
			}
		}
	}
	for _, h := range c.Format.ColumnHash {
		if h.Version > 2 || h.Version < 0 {
			errs = append(errs, fmt.Sprintf("format.column_hash: version %d is not 1 or 2 (column.mask.hash.… is 1, column.mask.hash.v2.… is 2)", h.Version))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	if len(r.include) == 0 && len(r.exclude) == 0 && len(r.mappers) == 0 {
		return nil, nil
	}
	return &r, nil
}

// shape is schema.Config.ShapeColumn: whether the column is in record
// values (an include pattern, if any, selects it and no exclude pattern
// does), and its mapper.
func (r *ColumnRules) shape(schemaName, table, column string) (bool, *schema.ColumnRewrite) {
	sent := len(r.include) == 0
	for _, p := range r.include {
		if p.Match(schemaName, table, column) {
			sent = true
			break
		}
	}
	for _, p := range r.exclude {
		if p.Match(schemaName, table, column) {
			sent = false
			break
		}
	}
	if !sent {
		return false, nil
	}
	for i := range r.mappers {
		for _, p := range r.mappers[i].columns {
			if p.Match(schemaName, table, column) {
				return true, &r.mappers[i].rewrite
			}
		}
	}
	return true, nil
}

// shapeFunc is r.shape, or nil when no column key is set (nothing to
// shape, and the plan skips the question).
func (r *ColumnRules) ShapeFunc() func(string, string, string) (bool, *schema.ColumnRewrite) {
	if r == nil {
		return nil
	}
	return r.shape
}
