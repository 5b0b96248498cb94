package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseTablePattern(t *testing.T) {
	tests := []struct {
		in      string
		want    TablePattern
		wantErr string // substring; "" means success
	}{
		{in: "public.orders", want: TablePattern{"public", "orders"}},
		{in: "orders", want: TablePattern{"public", "orders"}},
		{in: "  public.orders  ", want: TablePattern{"public", "orders"}},
		{in: "public.*", want: TablePattern{"public", "*"}},
		{in: "*.*", want: TablePattern{"*", "*"}},
		{in: "*", want: TablePattern{"public", "*"}},
		{in: "sales.order_*", want: TablePattern{"sales", "order_*"}},
		{in: "Public.Orders", want: TablePattern{"public", "orders"}},
		{in: "ÉTÉ.Été", want: TablePattern{"ÉtÉ", "Été"}}, // ASCII-only folding, like Postgres
		{in: "t$1._x9", want: TablePattern{"t$1", "_x9"}},
		{in: `"My Schema"."Order.Items"`, want: TablePattern{"My Schema", "Order.Items"}},
		{in: `"Orders"`, want: TablePattern{"public", "Orders"}},
		{in: `public."Orders"`, want: TablePattern{"public", "Orders"}},
		{in: `"a""b"."c"""`, want: TablePattern{`a"b`, `c"`}},
		{in: `"x,y".t`, want: TablePattern{"x,y", "t"}},
		{in: `"Sales".*`, want: TablePattern{"Sales", "*"}},

		{in: "", wantErr: "empty"},
		{in: "   ", wantErr: "empty"},
		{in: "public.", wantErr: "ends with '.'"},
		{in: ".orders", wantErr: "empty identifier"},
		{in: "a..b", wantErr: "empty identifier"},
		{in: "db.public.orders", wantErr: "3 dot-separated parts"},
		{in: `"unterminated`, wantErr: "unterminated quoted identifier"},
		{in: `"".orders`, wantErr: "empty quoted identifier"},
		{in: `"a"b`, wantErr: "unexpected"},
		{in: `ab"c"`, wantErr: "unexpected"},
		{in: "my schema.orders", wantErr: "not allowed unquoted"},
		{in: "public.order-items", wantErr: "not allowed unquoted"},
		{in: "1orders", wantErr: "not allowed unquoted"},
		{in: "$x", wantErr: "not allowed unquoted"},
		{in: "\"a\x00\".b", wantErr: "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTablePattern(tt.in)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseTablePattern(%q) = %+v, want error containing %q", tt.in, got, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseTablePattern(%q) error %q, want it to contain %q", tt.in, err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.in)) {
					t.Errorf("error %q does not name the pattern %q", err, tt.in)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTablePattern(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParseTablePattern(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			// String round-trips.
			back, err := ParseTablePattern(got.String())
			if err != nil || back != got {
				t.Fatalf("ParseTablePattern(%q.String() = %q) = %+v, %v; want %+v", tt.in, got.String(), back, err, got)
			}
		})
	}
}

func TestParseTablePatternsJoinsEveryError(t *testing.T) {
	_, err := ParseTablePatterns([]string{"public.ok", "bad.", "a.b.c"})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{`"bad."`, `"a.b.c"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	ps, err := ParseTablePatterns([]string{"a", "b.*"})
	if err != nil || len(ps) != 2 || ps[1] != (TablePattern{"b", "*"}) {
		t.Fatalf("got %v, %v", ps, err)
	}
}

func TestTablePatternMatch(t *testing.T) {
	tests := []struct {
		pattern       string
		schema, table string
		want          bool
	}{
		{"public.orders", "public", "orders", true},
		{"public.orders", "public", "Orders", false},
		{"public.orders", "other", "orders", false},
		{"public.orders", "public", "orders2", false},
		{"public.*", "public", "anything", true},
		{"public.*", "public", "", true},
		{"public.*", "private", "orders", false},
		{"*.*", "x", "y", true},
		{"public.order_*", "public", "order_items", true},
		{"public.order_*", "public", "order_", true},
		{"public.order_*", "public", "orders", false},
		{"public.*_log", "public", "audit_log", true},
		{"public.*_log", "public", "audit_log2", false},
		{"public.a*b*c", "public", "aXbYc", true},
		{"public.a*b*c", "public", "abc", true},
		{"public.a*b*c", "public", "acb", false},
		{"public.a*b*c", "public", "aXbYcZc", true},
		{"public.**", "public", "x", true},
		{`"My Schema"."Order.Items"`, "My Schema", "Order.Items", true},
		{`"My Schema"."Order.Items"`, "my schema", "order.items", false},
		{`"S*"."*"`, "Sales", "t", true},
	}
	for _, tt := range tests {
		p, err := ParseTablePattern(tt.pattern)
		if err != nil {
			t.Fatalf("ParseTablePattern(%q): %v", tt.pattern, err)
		}
		if got := p.Match(tt.schema, tt.table); got != tt.want {
			t.Errorf("%q.Match(%q, %q) = %v, want %v", tt.pattern, tt.schema, tt.table, got, tt.want)
		}
	}
}

func TestTablePatternHasWildcard(t *testing.T) {
	for in, want := range map[string]bool{"public.orders": false, "public.*": true, "*.orders": true, `"a*".b`: true} {
		p, err := ParseTablePattern(in)
		if err != nil {
			t.Fatal(err)
		}
		if p.HasWildcard() != want {
			t.Errorf("%q.HasWildcard() = %v, want %v", in, !want, want)
		}
	}
}

func TestQuoteIdent(t *testing.T) {
	tests := map[string]string{
		"orders":      `"orders"`,
		"Order Items": `"Order Items"`,
		`a"b`:         `"a""b"`,
		`""`:          `""""""`,
		"":            `""`,
		"a\x00b":      `"ab"`,
	}
	for in, want := range tests {
		if got := QuoteIdent(in); got != want {
			t.Errorf("QuoteIdent(%q) = %s, want %s", in, got, want)
		}
	}
	if got, want := QualifiedName("My Schema", `Or"ders`), `"My Schema"."Or""ders"`; got != want {
		t.Errorf("QualifiedName = %s, want %s", got, want)
	}
}

func TestTablePatternStringQuotesOnlyWhenNeeded(t *testing.T) {
	tests := map[TablePattern]string{
		{"public", "orders"}:     "public.orders",
		{"public", "*"}:          "public.*",
		{"Public", "orders"}:     `"Public".orders`,
		{"my schema", "a.b"}:     `"my schema"."a.b"`,
		{"public", `x"y`}:        `public."x""y"`,
		{"public", "order_item"}: "public.order_item",
	}
	for p, want := range tests {
		if got := p.String(); got != want {
			t.Errorf("%+v.String() = %s, want %s", p, got, want)
		}
	}
}

// FuzzParseTablePattern: parsing never panics; an accepted pattern prints
// back to itself, and an exact pattern matches its own names.
func FuzzParseTablePattern(f *testing.F) {
	for _, s := range []string{
		"public.orders", "orders", "public.*", "*.*", `"My Schema"."Order.Items"`,
		`"a""b".c`, "Public.Orders", "a.b.c", `"unterminated`, "public.", `"".x`, "t$1.x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseTablePattern(s)
		if err != nil {
			if !strings.Contains(err.Error(), "table pattern") {
				t.Fatalf("error %q does not say it is about a table pattern", err)
			}
			return
		}
		if p.Schema == "" || p.Table == "" {
			t.Fatalf("ParseTablePattern(%q) = %+v with an empty part", s, p)
		}
		back, err := ParseTablePattern(p.String())
		if err != nil || back != p {
			t.Fatalf("round trip of %q via %q: got %+v, %v; want %+v", s, p.String(), back, err, p)
		}
		if !p.HasWildcard() && !p.Match(p.Schema, p.Table) {
			t.Fatalf("%+v does not match its own names", p)
		}
		if !p.Match(strings.ReplaceAll(p.Schema, "*", ""), strings.ReplaceAll(p.Table, "*", "")) {
			t.Fatalf("%+v does not match its names with wildcards matching nothing", p)
		}
	})
}

// TestTableSelection: postgres.tables_exclude wins over postgres.tables
// and over the publication (Debezium's table.exclude.list).
func TestTableSelection(t *testing.T) {
	parse := func(ss ...string) []TablePattern {
		ps, err := ParseTablePatterns(ss)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	cases := []struct {
		name            string
		sel             TableSelection
		schema, table   string
		picks, captures bool
	}{
		{"included", TableSelection{Include: parse("public.*")}, "public", "orders", true, true},
		{"excluded", TableSelection{Include: parse("public.*"), Exclude: parse("public.audit_*")}, "public", "audit_log", false, false},
		{"not included", TableSelection{Include: parse("public.orders")}, "public", "items", false, false},
		{"publication decides", TableSelection{}, "public", "items", false, true},
		{"publication decides, excluded", TableSelection{Exclude: parse("public.items")}, "public", "items", false, false},
		{"exclude of another schema", TableSelection{Include: parse("*.orders"), Exclude: parse("audit.*")}, "shop", "orders", true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.sel.Picks(c.schema, c.table); got != c.picks {
				t.Errorf("Picks = %v, want %v", got, c.picks)
			}
			if got := c.sel.Captures(c.schema, c.table); got != c.captures {
				t.Errorf("Captures = %v, want %v", got, c.captures)
			}
		})
	}
}
