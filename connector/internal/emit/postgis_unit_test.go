package emit

import (
	"slices"
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

// TestGeometryThatIsNotEWKBParksOnlyItsTable: a geometry value mooncdc
// cannot convert exactly (not PostGIS hex EWKB: schema.ErrInvalidEWKB)
// parks its table, where Debezium writes null with a warning
// (PostgresValueConverter.java:1041-1043, v3.6.1.Final); the rows of that
// table are not written with a guess, and the other tables go on.
func TestGeometryThatIsNotEWKBParksOnlyItsTable(t *testing.T) {
	fx := newEmitterFixture(t, 1_000_000, nil)
	geom := &schema.TypeInfo{OID: 91001, Name: "geometry", Kind: 'b', Mod: -1, Delim: ':'}
	gis := &schema.Relation{OID: 2, Schema: "public", Table: "u", ReplicaIdentity: 'd', Columns: []schema.Column{
		{Name: "id", TypeOID: 23, TypeMod: -1}, {Name: "g", TypeOID: geom.OID, TypeMod: -1, Type: geom}}}
	ok := testRelation(1, "t")
	fx.tx(t, 100,
		&schema.Change{Op: schema.OpCreate, Relation: gis, After: row("1", "010700000000000000")}, // GEOMETRYCOLLECTION EMPTY
		&schema.Change{Op: schema.OpCreate, Relation: gis, After: row("2", "POINT(1 2)")},
		&schema.Change{Op: schema.OpCreate, Relation: ok, After: row("1", "a")},
		&schema.Change{Op: schema.OpCreate, Relation: gis, After: row("3", "010700000000000000")},
	)
	fx.tx(t, 200, &schema.Change{Op: schema.OpCreate, Relation: ok, After: row("2", "b")})
	if want := []string{"public.u"}; !slices.Equal(fx.parked, want) {
		t.Fatalf("parked %v, want %v", fx.parked, want)
	}
	want := []string{`shop.public.u {"id":1} c`, `shop.public.t {"id":1} c`, `shop.public.t {"id":2} c`}
	if got := fx.summary(t); !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
}
