package schema

import (
	"encoding/json"
	"testing"
)

// TestKeyOnlyDeleteOfAGeometricColumnIsDebeziumsFallback: under REPLICA
// IDENTITY DEFAULT a delete's old tuple holds the key only; a NOT NULL box
// column (include_unknown_datatypes) gets convertBinary's fallback in the
// before image: empty bytes (BYTE_ZERO, JdbcValueConverters.java:821-822,
// NumberConversions.java:36, v3.6.1.Final), which JsonConverter writes as
// "", and "" in the base64, base64-url-safe and hex modes
// (JdbcValueConverters.java:850, :880, :910). It used to be a value error
// that parked the table.
func TestKeyOnlyDeleteOfAGeometricColumnIsDebeziumsFallback(t *testing.T) {
	rel := &Relation{OID: 7, Schema: "public", Table: "g", ReplicaIdentity: 'd', Columns: []Column{
		{Name: "pk", TypeOID: oidInt4, TypeMod: -1, Key: true, NotNull: true},
		{Name: "b", TypeOID: oidBox, TypeMod: -1, NotNull: true},
		{Name: "c", TypeOID: oidCircle, TypeMod: -1}, // optional: stays null
	}, KeyIndexes: []int{0}}
	for _, mode := range []string{"bytes", "base64", "base64-url-safe", "hex"} {
		e := NewJSONEncoder(Config{Name: "srv", IncludeUnknownDatatypes: true, BinaryMode: mode})
		ch := &Change{Op: OpDelete, Relation: rel, Before: Tuple{text("1"), null, null}, Tx: testTx, LSN: 1}
		out, err := e.AppendValue(nil, e.Plan(ch.Relation), ch, testNow)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		var env struct {
			Before map[string]any `json:"before"`
		}
		if err := json.Unmarshal(out, &env); err != nil {
			t.Fatal(err)
		}
		if b, ok := env.Before["b"]; !ok || b != "" || env.Before["c"] != nil {
			t.Errorf("%s: before %v, want b \"\" and c null", mode, env.Before)
		}
	}
}
