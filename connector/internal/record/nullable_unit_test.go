package record

import (
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

func TestNullMaskRelaxesExactlyTheNullNotNullColumns(t *testing.T) {
	txt := schema.Value{Kind: schema.ValueText, Data: []byte("x")}
	null := schema.Value{Kind: schema.ValueNull}
	rel := &schema.Relation{ReplicaIdentity: 'd', Columns: []schema.Column{
		{Name: "id", NotNull: true, Key: true}, {Name: "a", NotNull: true}, {Name: "b"}, {Name: "c", NotNull: true}}}
	full := *rel
	full.ReplicaIdentity = 'f'
	for _, tc := range []struct {
		name          string
		rel           *schema.Relation
		before, after schema.Tuple
		wantOptional  []string // NOT NULL columns made optional
	}{
		{"no null", rel, nil, schema.Tuple{txt, txt, null, txt}, nil},
		{"null in a nullable column", rel, nil, schema.Tuple{txt, txt, null, txt}, nil},
		{"null in a NOT NULL column", rel, nil, schema.Tuple{txt, null, txt, txt}, []string{"a"}},
		{"two", rel, nil, schema.Tuple{txt, null, txt, null}, []string{"a", "c"}},
		// A key-only old tuple's other columns are absent, not NULL.
		{"old key tuple", rel, schema.Tuple{txt, null, null, null}, nil, nil},
		{"old full row", &full, schema.Tuple{txt, txt, null, null}, nil, []string{"c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewNullPlan(tc.rel)
			ch := &schema.Change{Relation: tc.rel, Before: tc.before, After: tc.after}
			mask := p.NullMask(ch)
			if (mask == 0) != (len(tc.wantOptional) == 0) {
				t.Fatalf("mask %b, want optional %v", mask, tc.wantOptional)
			}
			if mask == 0 {
				return
			}
			sp := schema.NewPlan(schema.Config{Name: "shop"}, tc.rel)
			relaxed := p.RelaxedFor(sp, mask)
			got := relaxed.Relation()
			var optional []string
			for i, c := range got.Columns {
				if tc.rel.Columns[i].NotNull && !c.NotNull {
					optional = append(optional, c.Name)
				}
			}
			if len(optional) != len(tc.wantOptional) || len(optional) > 0 && optional[0] != tc.wantOptional[0] ||
				len(optional) > 1 && optional[1] != tc.wantOptional[1] {
				t.Errorf("optional %v, want %v", optional, tc.wantOptional)
			}
			if !tc.rel.Columns[1].NotNull {
				t.Error("the original relation was changed")
			}
			if again := p.RelaxedFor(sp, mask); again != relaxed {
				t.Error("the relaxed relation's plan is made again for the same columns")
			}
		})
	}
}

// The common case, a row without a NULL in a NOT NULL column, allocates
// nothing.
func TestNullMaskOfARowWithoutNullsAllocatesNothing(t *testing.T) {
	txt := schema.Value{Kind: schema.ValueText, Data: []byte("x")}
	rel := &schema.Relation{Columns: []schema.Column{{Name: "id", NotNull: true}, {Name: "a", NotNull: true}, {Name: "b"}}}
	p := NewNullPlan(rel)
	ch := &schema.Change{Relation: rel, After: schema.Tuple{txt, txt, txt}}
	if n := testing.AllocsPerRun(1000, func() {
		if p.NullMask(ch) != 0 {
			t.Fatal("mask")
		}
	}); n != 0 {
		t.Errorf("%.1f allocations per row", n)
	}
}
