package emit

import (
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

// A window key is made of the key columns' kind and text, whichever side
// read the row: the stream's tuple and a chunk's COPY row of the same key
// compare equal, rows of other keys do not, and a key column left out as
// unchanged TOAST makes no key (the change is observed as one of unknown
// key).
func TestTupleKeysCompareKeyColumnsOnly(t *testing.T) {
	rel := &schema.Relation{Columns: []schema.Column{{Name: "a"}, {Name: "v"}, {Name: "b"}}, KeyIndexes: []int{0, 2}}
	text := func(s string) schema.Value { return schema.Value{Kind: schema.ValueText, Data: []byte(s)} }
	null := schema.Value{Kind: schema.ValueNull}
	key := func(t schema.Tuple) (string, bool) {
		k, ok := AppendTupleKey(nil, rel, t)
		return string(k), ok
	}
	k1, _ := key(schema.Tuple{text("1"), text("x"), text("2")})
	for _, tc := range []struct {
		name string
		row  schema.Tuple
		same bool
		ok   bool
	}{
		{"the same key, another value", schema.Tuple{text("1"), text("y"), text("2")}, true, true},
		{"another key", schema.Tuple{text("1"), text("x"), text("3")}, false, true},
		{"the columns' texts concatenated alike", schema.Tuple{text("12"), text("x"), text("")}, false, true},
		{"a null key column", schema.Tuple{text("1"), text("x"), null}, false, true},
		{"unchanged TOAST in the key", schema.Tuple{text("1"), text("x"), {Kind: schema.ValueUnchangedToast}}, false, false},
		{"a short tuple", schema.Tuple{text("1")}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, ok := key(tc.row)
			if ok != tc.ok || ok && (k == k1) != tc.same {
				t.Fatalf("key %q ok=%v, want ok=%v same=%v as %q", k, ok, tc.ok, tc.same, k1)
			}
		})
	}
}

// The r records a window or a stale key's tombstone writes at a position
// number −2, −3, …, so that none shares (commit_lsn, tx_seq) with a
// streamed change (0 on) or a BEGIN (−1); a new position starts again.
func TestWindowRowsNumberBelowTheStreamsRecords(t *testing.T) {
	q := NewIncremental()
	for i, want := range []int64{-2, -3, -4} {
		if got := q.nextSeq(100); got != want {
			t.Fatalf("record %d at 100: seq %d, want %d", i, got, want)
		}
	}
	if got := q.nextSeq(200); got != -2 {
		t.Fatalf("first record at 200: seq %d, want -2", got)
	}
}
