package record

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// An incremental snapshot's row gets its window's close position when it
// is written: the three mooncdc.* headers change, the flat envelope's
// headers after them stay (a row that lost them said __snap "" in
// TestIncrementalMarkerInAvroAndTheFlatEnvelope).
func TestSetPositionKeepsTheFlatEnvelopesHeaders(t *testing.T) {
	want := func(rec *kgo.Record, pairs ...string) {
		t.Helper()
		if len(rec.Headers) != len(pairs)/2 {
			t.Fatalf("%d headers %v, want %v", len(rec.Headers), rec.Headers, pairs)
		}
		for i, h := range rec.Headers {
			if h.Key != pairs[2*i] || string(h.Value) != pairs[2*i+1] {
				t.Fatalf("header %d: %s=%s, want %s=%s", i, h.Key, h.Value, pairs[2*i], pairs[2*i+1])
			}
		}
	}
	rec := &kgo.Record{}
	SetHeaders(rec, 10, 20, 3)
	rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: "__snap", Value: []byte("incremental")})
	SetPosition(rec, 900, 900, -2)
	want(rec, HeaderLSN, "900", HeaderCommitLSN, "900", HeaderTxSeq, "-2", "__snap", "incremental")

	// Headers not in Change's order: the three go first, the rest stays.
	other := &kgo.Record{Headers: []kgo.RecordHeader{{Key: "a", Value: []byte("1")}}}
	SetPosition(other, 5, 6, -3)
	want(other, HeaderLSN, "5", HeaderCommitLSN, "6", HeaderTxSeq, "-3", "a", "1")
}
