package record

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

// TestKeyColumnsDecidedFromTheCatalogsAnswer is the key rule without a
// server: the identity index's or primary key's columns (Debezium keys a
// table by its primary key, JdbcConnection.readPrimaryKeyNames,
// JdbcConnection.java:1441-1451, v3.6.1.Final, and by message.key.columns
// where it names the table), custom columns only when a delete carries
// them, and none for a table without either.
func TestKeyColumnsDecidedFromTheCatalogsAnswer(t *testing.T) {
	rel := &schema.Relation{OID: 1, Schema: "public", Table: "orders", Columns: []schema.Column{{Name: "id"}, {Name: "tenant"}, {Name: "note"}}}
	custom, err := NewKeyRule(map[string][]string{"public.orders": {"tenant", "id"}, "public.other": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	missing, err := NewKeyRule(map[string][]string{"public.*": {"nope"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		rules    KeyRule
		identity string
		index    []string
		want     []string
		errHas   string
	}{
		{"default: the primary key, in its order", nil, "d", []string{"tenant", "id"}, []string{"tenant", "id"}, ""},
		{"using index: the index's columns", nil, "i", []string{"note"}, []string{"note"}, ""},
		{"full: still the primary key", nil, "f", []string{"id"}, []string{"id"}, ""},
		{"no key at all", nil, "f", []string{}, []string{}, ""},
		{"custom inside the identity", custom, "d", []string{"id", "tenant"}, []string{"tenant", "id"}, ""},
		{"custom under full", custom, "f", nil, []string{"tenant", "id"}, ""},
		{"custom outside the identity", custom, "d", []string{"id"}, []string{"tenant", "id"}, "which a delete does not carry"},
		{"custom column the table lacks", missing, "f", nil, []string{"nope"}, `names column "nope", which public.orders does not have`},
	} {
		got, err := KeyColumns(c.rules, rel, c.identity, c.index)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: key %v, want %v", c.name, got, c.want)
		}
		switch {
		case c.errHas == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.errHas != "" && (err == nil || !strings.Contains(err.Error(), c.errHas) || !errors.As(err, new(*KeyRuleError))):
			t.Errorf("%s: error %v, want a *keyRuleError containing %q", c.name, err, c.errHas)
		}
	}
}
