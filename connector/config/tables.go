package config

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TablePattern selects tables by schema and table name, as written in
// postgres.tables. Either part may contain '*' wildcards, which match any run
// of characters (including none). Names are compared exactly (case
// sensitive): ParseTablePattern has already folded unquoted identifiers to
// lower case, as Postgres does.
//
// A '*' is a wildcard even inside a double-quoted identifier, so a table
// whose name contains a literal '*' can be selected only by a pattern that
// also matches other names. That trade keeps the zero value simple.
type TablePattern struct {
	Schema string
	Table  string
}

// ParseTablePattern parses one postgres.tables entry:
//
//	orders                    public.orders (schema defaults to public)
//	public.orders
//	public.*                  every table of schema public
//	*.*                       every table
//	"My Schema"."Order.Items" double-quoted identifiers keep case, dots and
//	                          spaces; "" inside quotes is one '"'
//	Public.Orders             unquoted identifiers fold to lower case
//
// It is pure and safe for concurrent use. Errors name the pattern.
func ParseTablePattern(s string) (TablePattern, error) {
	parts, err := splitIdentifiers(strings.TrimSpace(s))
	if err != nil {
		return TablePattern{}, fmt.Errorf("table pattern %q: %w", s, err)
	}
	switch len(parts) {
	case 1:
		return TablePattern{Schema: "public", Table: parts[0]}, nil
	case 2:
		return TablePattern{Schema: parts[0], Table: parts[1]}, nil
	default:
		return TablePattern{}, fmt.Errorf("table pattern %q: has %d dot-separated parts; write schema.table (quote names that contain dots, e.g. \"my.schema\".orders)", s, len(parts))
	}
}

// ParseTablePatterns parses every entry and joins the errors of the bad ones.
func ParseTablePatterns(ss []string) ([]TablePattern, error) {
	var errs []error
	out := make([]TablePattern, 0, len(ss))
	for _, s := range ss {
		p, err := ParseTablePattern(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// splitIdentifiers splits a dotted name into its identifiers, unquoting
// double-quoted ones and lower-casing (ASCII only, like Postgres) the rest.
func splitIdentifiers(s string) ([]string, error) {
	if s == "" {
		return nil, errors.New("empty; write schema.table, e.g. public.orders")
	}
	var parts []string
	i := 0
	for {
		if i >= len(s) {
			return nil, errors.New("ends with '.'; write schema.table, e.g. public.orders or public.*")
		}
		var ident string
		if s[i] == '"' {
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				if s[j] == '"' {
					if j+1 < len(s) && s[j+1] == '"' {
						b.WriteByte('"')
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				b.WriteByte(s[j])
				j++
			}
			if !closed {
				return nil, fmt.Errorf("unterminated quoted identifier at offset %d; close it with '\"' (write \"\" for a literal quote)", i)
			}
			ident = b.String()
			if ident == "" {
				return nil, fmt.Errorf("empty quoted identifier at offset %d", i)
			}
			if strings.IndexByte(ident, 0) >= 0 {
				return nil, errors.New("identifier contains a NUL byte")
			}
			if !utf8.ValidString(ident) {
				return nil, errors.New("identifier is not valid UTF-8")
			}
			i = j
		} else {
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '"' {
				j++
			}
			raw := s[i:j]
			if raw == "" {
				return nil, fmt.Errorf("empty identifier at offset %d; write schema.table, e.g. public.orders", i)
			}
			if err := checkUnquoted(raw); err != nil {
				return nil, err
			}
			ident = foldASCII(raw)
			i = j
		}
		parts = append(parts, ident)
		if i == len(s) {
			return parts, nil
		}
		if s[i] != '.' {
			return nil, fmt.Errorf("unexpected %q at offset %d; identifiers are separated by '.', and a quoted identifier must be quoted whole", s[i], i)
		}
		i++
	}
}

// checkUnquoted accepts what Postgres accepts as an unquoted identifier
// (a letter or '_' first, then letters, digits, '_' or '$'), plus '*'.
func checkUnquoted(raw string) error {
	if !utf8.ValidString(raw) {
		return fmt.Errorf("identifier %q is not valid UTF-8", raw)
	}
	for k, r := range raw {
		ok := r == '_' || r == '*' || unicode.IsLetter(r) || (k > 0 && (r == '$' || ('0' <= r && r <= '9')))
		if !ok {
			return fmt.Errorf("identifier %q: character %q is not allowed unquoted; double-quote the name, e.g. \"%s\"", raw, r, strings.ReplaceAll(raw, `"`, `""`))
		}
	}
	return nil
}

func foldASCII(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}

// Match reports whether the table schema.table is selected by p.
func (p TablePattern) Match(schema, table string) bool {
	return globMatch(p.Schema, schema) && globMatch(p.Table, table)
}

// TableSelection is postgres.tables less postgres.tables_exclude: the one
// rule for which tables a pipeline captures.
type TableSelection struct {
	Include []TablePattern // postgres.tables; empty: the publication decides
	Exclude []TablePattern // postgres.tables_exclude; wins over Include
	// Filters are the row filters and column lists of postgres.tables
	// entries, for the publication mooncdc creates.
	Filters map[TableName]TableFilter
}

// Picks reports whether an Include pattern selects schema.table and no
// Exclude pattern does: the tables mooncdc adds to its publication.
func (s TableSelection) Picks(schema, table string) bool {
	return matchAny(s.Include, schema, table) && !matchAny(s.Exclude, schema, table)
}

// Captures reports whether changes of schema.table are written: picked,
// or, with no Include patterns, any published table not excluded.
func (s TableSelection) Captures(schema, table string) bool {
	if len(s.Include) == 0 {
		return !matchAny(s.Exclude, schema, table)
	}
	return s.Picks(schema, table)
}

func matchAny(ps []TablePattern, schema, table string) bool {
	for _, p := range ps {
		if p.Match(schema, table) {
			return true
		}
	}
	return false
}

// HasWildcard reports whether p can select more than one table.
func (p TablePattern) HasWildcard() bool {
	return strings.Contains(p.Schema, "*") || strings.Contains(p.Table, "*")
}

// String formats p so that ParseTablePattern reads it back unchanged:
// identifiers that would not survive unquoted are double-quoted.
func (p TablePattern) String() string {
	return patternIdent(p.Schema) + "." + patternIdent(p.Table)
}

func patternIdent(s string) string {
	if s == "" || checkUnquoted(s) != nil || foldASCII(s) != s {
		return QuoteIdent(s)
	}
	return s
}

// globMatch matches name against pattern, where '*' matches any run of
// bytes. Linear time: on a mismatch it backtracks only to the last '*'.
func globMatch(pattern, name string) bool {
	p, n := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, n
			p++
		case p < len(pattern) && pattern[p] == name[n]:
			p++
			n++
		case star >= 0:
			p = star + 1
			mark++
			n = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// TableName is a table's schema and name, unquoted. Either may hold any
// character, dots included, so a TableName is never parsed back from its
// String form.
type TableName struct{ Schema, Table string }

// String is "schema.table", the form the offsets and the logs use.
func (t TableName) String() string { return t.Schema + "." + t.Table }

// QuoteIdent quotes s as a Postgres identifier: always double-quoted, with
// '"' doubled. NUL bytes, which Postgres identifiers cannot hold, are dropped.
func QuoteIdent(s string) string {
	s = strings.ReplaceAll(s, "\x00", "")
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// QualifiedName returns the quoted "schema"."table" for use in SQL.
func QualifiedName(schema, table string) string {
	return QuoteIdent(schema) + "." + QuoteIdent(table)
}
