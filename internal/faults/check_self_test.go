//go:build faults

package faults

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCheckerCatches feeds the checker a hand-made topic, then the same
// topic with a record dropped, repeated or moved, and expects it to count
// exactly that. No Postgres or Kafka.
func TestCheckerCatches(t *testing.T) {
	gen := &generator{logs: []*tableLog{newTableLog(tableSpec{name: "t", seed: 3})}, ops: map[byte]int{}}
	l := gen.logs[0]
	// After the snapshot (lsn 100): u0→v1, c3 v2, d1, u0→v4, u3→v5 in one transaction with d2.
	gen.commit([]stmt{{0, 0, event{g: 1, op: 'u', v: 1}}})
	gen.commit([]stmt{{0, 3, event{g: 2, op: 'c', v: 2}}})
	gen.commit([]stmt{{0, 1, event{g: 3, op: 'd', v: 0}}})
	gen.commit([]stmt{{0, 0, event{g: 4, op: 'u', v: 4}}})
	gen.commit([]stmt{{0, 3, event{g: 5, op: 'u', v: 5}}, {0, 2, event{g: 6, op: 'd', v: 0}}})
	pg := []map[int64]int64{{0: 4, 3: 5}}
	if fmt.Sprint(l.live) != fmt.Sprint(pg[0]) {
		t.Fatalf("model %v", l.live)
	}

	mk := func(op string, id, v int64, commit uint64, seq int) *kgo.Record {
		r := &kgo.Record{Key: fmt.Appendf(nil, `{"id":%d}`, id)}
		if op == "" {
			return r // tombstone
		}
		row := fmt.Sprintf(`{"id":%d,"v":%d,"pad":"x"}`, id, v)
		before, after := "null", row
		if op == "d" {
			before, after = row, "null"
		}
		r.Value = fmt.Appendf(nil, `{"before":%s,"after":%s,"source":{"snapshot":"false"},"op":%q}`, before, after, op)
		r.Headers = []kgo.RecordHeader{
			{Key: headerCommitLSN, Value: []byte(strconv.FormatUint(commit, 10))},
			{Key: headerTxSeq, Value: []byte(strconv.Itoa(seq))},
		}
		return r
	}
	base := []*kgo.Record{
		mk("r", 0, 0, 100, 0), mk("r", 1, 0, 100, 1), mk("r", 2, 0, 100, 2),
		mk("u", 0, 1, 110, 0),
		mk("c", 3, 2, 120, 0),
		mk("d", 1, 0, 130, 0), mk("", 1, 0, 0, 0),
		mk("u", 0, 4, 140, 0),
		mk("u", 3, 5, 150, 0), mk("d", 2, 0, 150, 1), mk("", 2, 0, 0, 0),
	}
	type want struct{ lost, dup, reordered, anomalies, unequal int }
	cases := []struct {
		name string
		edit func([]*kgo.Record) []*kgo.Record
		want want
	}{
		{"as written", func(rs []*kgo.Record) []*kgo.Record { return rs }, want{}},
		{"an update lost", func(rs []*kgo.Record) []*kgo.Record { return slices.Delete(rs, 3, 4) }, want{lost: 1}},
		{"an insert lost", func(rs []*kgo.Record) []*kgo.Record { return slices.Delete(rs, 4, 5) }, want{lost: 1}},
		{"a delete lost (its tombstone kept)", func(rs []*kgo.Record) []*kgo.Record { return slices.Delete(rs, 9, 10) }, want{lost: 1}},
		{"a transaction repeated", func(rs []*kgo.Record) []*kgo.Record { return append(rs, rs[8:]...) }, want{dup: 2}},
		{"replayed from an older position", func(rs []*kgo.Record) []*kgo.Record { return append(rs, rs[3:]...) }, want{dup: 6}},
		{"two updates of a key swapped", func(rs []*kgo.Record) []*kgo.Record {
			rs[3], rs[7] = rs[7], rs[3]
			return rs
		}, want{reordered: 1, unequal: 1}},
		{"a change placed before the snapshot row", func(rs []*kgo.Record) []*kgo.Record {
			moved := rs[3]
			rest := slices.Delete(slices.Clone(rs), 3, 4)
			return append([]*kgo.Record{moved}, rest...)
		}, want{reordered: 1}},
		{"a change of the snapshot repeated after it", func(rs []*kgo.Record) []*kgo.Record {
			return append(rs, mk("u", 0, 1, 110, 0))
		}, want{dup: 1, unequal: 1}},
		{"a record no one wrote", func(rs []*kgo.Record) []*kgo.Record {
			return append(rs, mk("u", 0, 99, 160, 0))
		}, want{anomalies: 1, unequal: 1}},
		{"a snapshot row older than the snapshot", func(rs []*kgo.Record) []*kgo.Record {
			rs[0] = mk("r", 0, 0, 115, 0) // the snapshot at 115 must show v1
			rs[1] = mk("r", 1, 0, 115, 1)
			rs[2] = mk("r", 2, 0, 115, 2)
			return rs
		}, want{anomalies: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := map[string][]*kgo.Record{"t": c.edit(slices.Clone(base))}
			for i, r := range raw["t"] {
				r.Offset = int64(i)
			}
			v := check(raw, gen, pg, nil)
			got := want{v.lost, v.duplicated, v.reordered, v.anomalies, len(v.unequal)}
			if got != c.want {
				t.Errorf("got %+v, want %+v; report:\n%s", got, c.want, v.report())
			} else if got != (want{}) {
				t.Logf("report:\n%s", v.report())
			}
		})
	}
}

// TestCheckerResumedCopy: a copy that resumed by chunk has rows of two
// snapshots (100: ids 0 and 1, its done chunk; 150: id 3, the chunk copied
// after the resume) and, between them, every change from 100 on, streamed
// by the resume. Told the copy's first snapshot, the checker accepts it as
// written and counts what is dropped, repeated or moved; not told, it
// cannot explain it.
func TestCheckerResumedCopy(t *testing.T) {
	gen := &generator{logs: []*tableLog{newTableLog(tableSpec{name: "t", seed: 4})}, ops: map[byte]int{}}
	// After the first snapshot (lsn 100): u0→v1, d2, c4 v3, u3→v4; the
	// resume's snapshot at 150; then u0→v5.
	gen.commit([]stmt{{0, 0, event{g: 1, op: 'u', v: 1}}})
	gen.commit([]stmt{{0, 2, event{g: 2, op: 'd', v: 0}}})
	gen.commit([]stmt{{0, 4, event{g: 3, op: 'c', v: 3}}})
	gen.commit([]stmt{{0, 3, event{g: 4, op: 'u', v: 4}}})
	gen.commit([]stmt{{0, 0, event{g: 5, op: 'u', v: 5}}})
	pg := []map[int64]int64{{0: 5, 1: 0, 3: 4, 4: 3}}
	mk := func(op string, id, v int64, commit uint64) *kgo.Record {
		r := &kgo.Record{Key: fmt.Appendf(nil, `{"id":%d}`, id)}
		if op == "" {
			return r
		}
		row := fmt.Sprintf(`{"id":%d,"v":%d,"pad":"x"}`, id, v)
		before, after := "null", row
		if op == "d" {
			before, after = row, "null"
		}
		r.Value = fmt.Appendf(nil, `{"before":%s,"after":%s,"source":{"snapshot":"false"},"op":%q}`, before, after, op)
		r.Headers = []kgo.RecordHeader{
			{Key: headerCommitLSN, Value: []byte(strconv.FormatUint(commit, 10))},
			{Key: headerTxSeq, Value: []byte("0")},
		}
		return r
	}
	base := []*kgo.Record{
		mk("r", 0, 0, 100), mk("r", 1, 0, 100), // the done chunk; then the crash
		mk("u", 0, 1, 110), mk("d", 2, 0, 120), mk("", 2, 0, 0), mk("c", 4, 3, 130), mk("u", 3, 4, 140), // the resume's stream
		mk("r", 3, 4, 150), // the chunk not done, copied under the resume's snapshot
		mk("u", 0, 5, 160), // the catch-up
	}
	type want struct{ lost, dup, reordered, anomalies, unequal int }
	firsts := map[string]uint64{"t": 100}
	cases := []struct {
		name   string
		edit   func([]*kgo.Record) []*kgo.Record
		firsts map[string]uint64
		want   want
	}{
		{"as written", func(rs []*kgo.Record) []*kgo.Record { return rs }, firsts, want{}},
		{"as if one snapshot", func(rs []*kgo.Record) []*kgo.Record { return rs }, nil, want{anomalies: 3}},
		{"the stream's delete lost", func(rs []*kgo.Record) []*kgo.Record { return slices.Delete(rs, 3, 5) }, firsts, want{lost: 1}},
		{"the stream's insert lost", func(rs []*kgo.Record) []*kgo.Record { return slices.Delete(rs, 5, 6) }, firsts, want{lost: 1, unequal: 1}},
		{"a done chunk's row after the change that moved it", func(rs []*kgo.Record) []*kgo.Record {
			rs[0], rs[2] = rs[2], rs[0]
			return rs
		}, firsts, want{reordered: 1}},
		{"the stream repeated at the end", func(rs []*kgo.Record) []*kgo.Record { return append(rs, mk("u", 0, 1, 110)) }, firsts, want{dup: 1, unequal: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := map[string][]*kgo.Record{"t": c.edit(slices.Clone(base))}
			for i, r := range raw["t"] {
				r.Offset = int64(i)
			}
			v := check(raw, gen, pg, c.firsts)
			got := want{v.lost, v.duplicated, v.reordered, v.anomalies, len(v.unequal)}
			if got != c.want {
				t.Errorf("got %+v, want %+v; report:\n%s", got, c.want, v.report())
			} else if got != (want{}) {
				t.Logf("report:\n%s", v.report())
			}
		})
	}
}
