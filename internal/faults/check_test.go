//go:build faults

package faults

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The record headers of connector/internal/record/headers.go (repeated: this package
// judges the binary from outside).
const (
	headerCommitLSN = "mooncdc.commit_lsn"
	headerTxSeq     = "mooncdc.tx_seq"
)

// rec is one data record, decoded.
type rec struct {
	offset    int64
	id        int64
	tombstone bool
	op        string // c u d r (t, m are not expected)
	v         int64  // after.v for c u r, before.v for d
	commit    uint64 // mooncdc.commit_lsn
	seq       int64  // mooncdc.tx_seq
	snapshot  string // source.snapshot
}

// window reports whether r is a row of an incremental snapshot's window
// (docs/incremental-snapshots.md): its tx_seq is -2, -3, … (a streamed
// change's is 0 on, a copy's row's 0 on). Such rows are no snapshot of the
// table at one LSN: each is its key's state where the stream wrote it
// (checkWindows), and they count in the rebuild.
func (r rec) window() bool { return r.op == "r" && r.seq <= -2 }

func (r rec) String() string {
	if r.tombstone {
		return fmt.Sprintf("tombstone@%d", r.offset)
	}
	return fmt.Sprintf("%s%d(lsn %d seq %d @%d)", r.op, r.v, r.commit, r.seq, r.offset)
}

type rowJSON struct {
	ID *int64 `json:"id"`
	V  *int64 `json:"v"`
}

type valueJSON struct {
	Op     string   `json:"op"`
	Before *rowJSON `json:"before"`
	After  *rowJSON `json:"after"`
	Source struct {
		Snapshot string `json:"snapshot"`
	} `json:"source"`
}

func decode(r *kgo.Record) (rec, error) {
	out := rec{offset: r.Offset}
	var key rowJSON
	if err := json.Unmarshal(r.Key, &key); err != nil || key.ID == nil {
		return out, fmt.Errorf("offset %d: key %q is not {\"id\":N}", r.Offset, r.Key)
	}
	out.id = *key.ID
	if r.Value == nil {
		out.tombstone = true
		return out, nil
	}
	var val valueJSON
	if err := json.Unmarshal(r.Value, &val); err != nil {
		return out, fmt.Errorf("offset %d: value: %v", r.Offset, err)
	}
	out.op, out.snapshot = val.Op, val.Source.Snapshot
	row := val.After
	if val.Op == "d" {
		row = val.Before
	}
	if row == nil || row.V == nil {
		return out, fmt.Errorf("offset %d: op %q without the row's v: %s", r.Offset, val.Op, r.Value)
	}
	out.v = *row.V
	var haveCommit, haveSeq bool
	for _, h := range r.Headers {
		var err error
		switch h.Key {
		case headerCommitLSN:
			out.commit, err = strconv.ParseUint(string(h.Value), 10, 64)
			haveCommit = true
		case headerTxSeq:
			out.seq, err = strconv.ParseInt(string(h.Value), 10, 64)
			haveSeq = true
		}
		if err != nil {
			return out, fmt.Errorf("offset %d: header %s=%q: %v", r.Offset, h.Key, h.Value, err)
		}
	}
	if !haveCommit || !haveSeq {
		return out, fmt.Errorf("offset %d: op %q without the %s and %s headers (headers %v)", r.Offset, val.Op, headerCommitLSN, headerTxSeq, r.Headers)
	}
	return out, nil
}

// tableCheck is the verdict on one table.
type tableCheck struct {
	table                         string
	records, changes, snapshotRow int
	snapshotLSN                   uint64
	lost, duplicated, reordered   int
	anomalies                     int // records the truth cannot explain, or an inconsistent snapshot
	examples                      map[string][]string
	diff                          string // rebuilt table vs Postgres, "" when equal
}

func (c *tableCheck) example(kind string, format string, args ...any) {
	if c.examples == nil {
		c.examples = map[string][]string{}
	}
	if len(c.examples[kind]) < 5 {
		c.examples[kind] = append(c.examples[kind], fmt.Sprintf(format, args...))
	}
}

// verdict is the whole check.
type verdict struct {
	tables                      []*tableCheck
	lost, duplicated, reordered int
	anomalies                   int
	unequal                     []string
	decodeErrs                  []string
}

func (v *verdict) ok(mode string) bool {
	if v.lost > 0 || v.reordered > 0 || v.anomalies > 0 || len(v.unequal) > 0 || len(v.decodeErrs) > 0 {
		return false
	}
	return mode != modeExactlyOnce || v.duplicated == 0
}

// report describes the failures: the first few keys of each kind.
func (v *verdict) report() string {
	var b strings.Builder
	for _, e := range v.decodeErrs {
		fmt.Fprintf(&b, "  undecodable record: %s\n", e)
	}
	for _, c := range v.tables {
		fmt.Fprintf(&b, "  %s: %d records (%d changes, %d snapshot rows of the last copy at lsn %d): lost=%d duplicated=%d reordered=%d anomalies=%d\n",
			c.table, c.records, c.changes, c.snapshotRow, c.snapshotLSN, c.lost, c.duplicated, c.reordered, c.anomalies)
		kinds := make([]string, 0, len(c.examples))
		for k := range c.examples {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			for _, ex := range c.examples[k] {
				fmt.Fprintf(&b, "    %s: %s\n", k, ex)
			}
		}
		if c.diff != "" {
			fmt.Fprintf(&b, "    rebuilt table != Postgres: %s\n", c.diff)
		}
	}
	return b.String()
}

// check judges the records of every table's topic against the generator's
// log and the tables in Postgres (pg: id → v per table).
//
// Per table, the last copy is the one of the last snapshot row in the
// topic; its rows carry commit_lsn = S, the snapshot's LSN. A change
// record belongs after that copy iff its commit_lsn > S. Per key, the
// truth's events are split at S: a key with a snapshot row of version v is
// split after the event that wrote v; a key absent from the snapshot is
// split at the earliest point where it was absent that is consistent with
// the global bounds [vLo, vHi) (every change record in any topic with
// commit_lsn < S, and every row of the snapshot, has v <= vLo; every change
// record with commit_lsn > S has v >= vHi; v is the global event number,
// in commit order).
//
// A last copy that resumed by chunk (connector/copy_resume.go) has rows of
// several snapshots: firsts[table] is its first snapshot's LSN F (from the
// offsets topic; absent or 0: one snapshot), and its rows are those with
// commit_lsn >= F. Per key, S is then the commit_lsn of the key's last such
// row, with bounds of its own; every change after F is written, so a key
// absent from every row of the copy is split at F's bounds: its events
// from vHi(F) on must have records, those between vLo(F) and vHi(F) may
// (no record says on which side of F they fell).
//
//   - duplicated: a change record (c, u, d) whose (commit_lsn, tx_seq, key)
//     was seen before, anywhere in the topic, counted once per repeat.
//   - reordered: per key, among the first appearances after S, an event
//     older than one before it; or a snapshot row placed after a change
//     it does not contain (it overwrites it with an older state; counted
//     once per key).
//   - lost: an event after the split with no record after S.
//   - anomalies: a record after S the log cannot explain (no such event,
//     or an event the snapshot already contains), an inconsistent snapshot.
func check(raw map[string][]*kgo.Record, gen *generator, pg []map[int64]int64, firsts map[string]uint64) *verdict {
	v := &verdict{}
	recs := make([][]rec, len(gen.logs))
	for ti, l := range gen.logs {
		for _, r := range raw[l.spec.name] {
			d, err := decode(r)
			if err != nil {
				if len(v.decodeErrs) < 5 {
					v.decodeErrs = append(v.decodeErrs, l.spec.name+": "+err.Error())
				}
				continue
			}
			recs[ti] = append(recs[ti], d)
		}
	}
	// Snapshot LSN per table: the commit_lsn of the last snapshot row.
	snapLSN := make([]uint64, len(recs))
	for ti, rs := range recs {
		for _, r := range rs {
			if r.op == "r" && !r.window() {
				snapLSN[ti] = r.commit
			}
		}
	}
	for ti, l := range gen.logs {
		c := &tableCheck{table: l.spec.name, records: len(recs[ti]), snapshotLSN: snapLSN[ti]}
		v.tables = append(v.tables, c)
		S := snapLSN[ti]
		if S == 0 {
			c.anomalies++
			c.example("anomaly", "no snapshot row in the topic")
			continue
		}
		// The last copy's snapshots: S, or every one from its first on
		// when it resumed; the bounds of each.
		F := firsts[l.spec.name]
		if F == 0 || F > S {
			F = S
		}
		snaps := map[uint64]bool{F: true}
		for _, r := range recs[ti] {
			if r.op == "r" && !r.window() && r.commit >= F {
				snaps[r.commit] = true
			}
		}
		type bound struct{ lo, hi int64 }
		bounds := map[uint64]bound{}
		for at := range snaps {
			b := bound{0, math.MaxInt64}
			for _, r := range recs[ti] {
				if r.op == "r" && !r.window() && r.commit == at {
					b.lo = max(b.lo, r.v)
				}
			}
			for _, rs := range recs {
				for _, r := range rs {
					if r.tombstone || (r.op != "c" && r.op != "u") {
						continue
					}
					switch {
					case r.commit < at:
						b.lo = max(b.lo, r.v)
					case r.commit > at:
						b.hi = min(b.hi, r.v)
					}
				}
			}
			if b.lo >= b.hi {
				c.anomalies++
				c.example("anomaly", "snapshot at lsn %d: a record before it has v=%d, one after it v=%d (commit order broken)", at, b.lo, b.hi)
			}
			bounds[at] = b
		}
		// Per key, its last row of the copy.
		snapRow := map[int64]rec{}
		type idAt struct {
			id     int64
			commit uint64
		}
		rowAt := map[idAt]rec{}
		for _, r := range recs[ti] {
			if r.op == "r" && !r.window() && snaps[r.commit] {
				if prev, dup := rowAt[idAt{r.id, r.commit}]; dup {
					c.anomalies++
					c.example("anomaly", "id %d: two rows in the same snapshot: %v and %v", r.id, prev, r)
				}
				rowAt[idAt{r.id, r.commit}] = r
				snapRow[r.id] = r
			}
		}
		c.snapshotRow = len(snapRow)

		// Duplicates over the whole topic; first appearances after the
		// key's snapshot (its last row's, or F).
		seen := map[string]bool{}
		after := map[int64][]rec{}
		keyS := func(id int64) uint64 {
			if sr, ok := snapRow[id]; ok {
				return sr.commit
			}
			return F
		}
		for _, r := range recs[ti] {
			if r.tombstone || r.op == "r" {
				continue
			}
			c.changes++
			ident := fmt.Sprintf("%d/%d/%d", r.commit, r.seq, r.id)
			if seen[ident] {
				c.duplicated++
				if len(c.examples["duplicated"]) < 3 {
					c.example("duplicated", "id %d: %v (commit_lsn/tx_seq/key %s seen before)", r.id, r, ident)
				}
				continue
			}
			seen[ident] = true
			if r.commit > keyS(r.id) {
				after[r.id] = append(after[r.id], r)
			}
		}

		// Per key, against the truth.
		ids := make([]int64, 0, len(l.events))
		for id := range l.events {
			ids = append(ids, id)
		}
		for id := range after {
			if _, ok := l.events[id]; !ok {
				ids = append(ids, id)
			}
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		rowLate := map[int64]bool{}
		for _, id := range ids {
			evs := l.events[id]
			b := bounds[keyS(id)]
			cut, why := splitAt(evs, snapRow, id, b.lo, b.hi)
			must := cut // the first event whose record is required
			if _, ok := snapRow[id]; !ok && F < S {
				cut, must, why = splitResumed(evs, b.lo, b.hi)
			}
			if why != "" {
				c.anomalies++
				c.example("anomaly", "id %d: %s; events %s", id, why, fmtEvents(evs, 0))
				continue
			}
			observed := make([]bool, len(evs))
			last := -1
			for _, r := range after[id] {
				idx := -1
				for i, ev := range evs {
					if string(ev.op) == r.op && ev.v == r.v {
						idx = i
						break
					}
				}
				switch {
				case idx < 0:
					c.anomalies++
					c.example("anomaly", "id %d: record %v matches no write; events %s", id, r, fmtEvents(evs, 0))
					continue
				case idx < cut:
					c.anomalies++
					c.example("anomaly", "id %d: record %v is after the snapshot (lsn %d) but its write %v is in the snapshot; events %s",
						id, r, keyS(id), evs[idx], fmtEvents(evs, 0))
				}
				if idx < last {
					c.reordered++
					c.example("reordered", "id %d: %v after %v; records after the snapshot %v", id, evs[idx], evs[last], after[id])
				} else if sr, ok := snapRow[id]; ok && r.offset < sr.offset && !rowLate[id] {
					// The snapshot row, older than this change, comes after
					// it: a consumer ends up with the older state. Counted
					// once per key.
					rowLate[id] = true
					c.reordered++
					c.example("reordered", "id %d: snapshot row %v (state before the change) comes after the change %v", id, sr, r)
				}
				last = max(last, idx)
				observed[idx] = true
			}
			for i := must; i < len(evs); i++ {
				if !observed[i] {
					c.lost++
					c.example("lost", "id %d: %v has no record (snapshot lsn %d, split after %d of %d events %s; records after the snapshot %v)",
						id, evs[i], keyS(id), cut, len(evs), fmtEvents(evs, cut), after[id])
				}
			}
		}

		checkWindows(c, recs[ti])

		// Rebuild: key → last value; deletes and tombstones remove.
		rows := map[int64]int64{}
		for _, r := range recs[ti] {
			if r.tombstone || r.op == "d" {
				delete(rows, r.id)
			} else {
				rows[r.id] = r.v
			}
		}
		c.diff = diffRows(rows, pg[ti])
		if c.diff != "" {
			explainDiff(c, recs[ti], rows, pg[ti], l)
		}
		if c.diff == "" {
			c.diff = diffRows(l.live, pg[ti])
			if c.diff != "" {
				c.diff = "the generator's model differs from Postgres (harness bug): " + c.diff
			}
		}
		if c.diff != "" {
			v.unequal = append(v.unequal, c.table)
		}
		v.lost += c.lost
		v.duplicated += c.duplicated
		v.reordered += c.reordered
		v.anomalies += c.anomalies
	}
	return v
}

// checkWindows checks every incremental snapshot window's row against the
// records of its key before it in the topic (Claim 1 of
// docs/incremental-snapshots.md: a window's row is its key's state where
// it is written): after a delete or tombstone of its key it brings back a
// deleted row, and with a v below the key's last change it puts back an
// older state (the load's v grows with every write). Each is counted as
// reordered, once per key.
func checkWindows(c *tableCheck, rs []rec) {
	type state struct {
		v       int64
		deleted bool
		seen    bool
	}
	last := map[int64]state{}
	bad := map[int64]bool{}
	for _, r := range rs {
		st := last[r.id]
		switch {
		case r.tombstone || r.op == "d":
			last[r.id] = state{v: st.v, deleted: true, seen: true}
		case r.window():
			if st.seen && !bad[r.id] && (st.deleted || r.v < st.v) {
				bad[r.id] = true
				c.reordered++
				c.example("reordered", "id %d: the incremental snapshot's row %v comes after the key's newer record (v %d, deleted %v)", r.id, r, st.v, st.deleted)
			}
			last[r.id] = state{v: r.v, seen: true}
		default:
			last[r.id] = state{v: r.v, seen: true}
		}
	}
}

// explainDiff adds, for the first few rows that differ, the key's whole
// history in the topic and in the truth.
func explainDiff(c *tableCheck, rs []rec, got, want map[int64]int64, l *tableLog) {
	var ids []int64
	for id, v := range want {
		if g, ok := got[id]; !ok || g != v {
			ids = append(ids, id)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	ids = ids[:min(3, len(ids))]
	for _, id := range ids {
		var hist []string
		for _, r := range rs {
			if r.id == id {
				hist = append(hist, r.String())
			}
		}
		if len(hist) > 16 {
			hist = append([]string{fmt.Sprintf("…%d earlier", len(hist)-16)}, hist[len(hist)-16:]...)
		}
		state := func(m map[int64]int64) string {
			if v, ok := m[id]; ok {
				return fmt.Sprintf("v=%d", v)
			}
			return "absent"
		}
		c.example("unequal", "id %d: rebuilt %s, Postgres %s; its records %v; its writes %s", id, state(got), state(want), hist, fmtEvents(l.events[id], 0))
	}
}

// splitAt returns the index of the first event of a key after the
// snapshot, or why the snapshot cannot be explained.
func splitAt(evs []event, snapRow map[int64]rec, id, vLo, vHi int64) (int, string) {
	if r, ok := snapRow[id]; ok {
		for i, ev := range evs {
			if ev.op != 'd' && ev.v == r.v {
				if ev.g >= vHi || (i+1 < len(evs) && evs[i+1].g <= vLo) {
					return 0, fmt.Sprintf("snapshot row v=%d is not the state at the snapshot (bounds %d..%d)", r.v, vLo, vHi)
				}
				return i + 1, ""
			}
		}
		return 0, fmt.Sprintf("snapshot row v=%d matches no write", r.v)
	}
	for i := 0; i <= len(evs); i++ {
		if i > 0 && evs[i-1].op != 'd' {
			continue // live here
		}
		if i > 0 && evs[i-1].g >= vHi {
			break
		}
		if i < len(evs) && evs[i].g <= vLo {
			continue
		}
		return i, ""
	}
	return 0, fmt.Sprintf("absent from the snapshot, but live at every point between v=%d and v=%d", vLo, vHi)
}

// splitResumed splits the events of a key absent from every row of a
// copy that resumed (check): from cut on, events may be after the copy's
// first snapshot F (bounds lo, hi), from must on they are.
func splitResumed(evs []event, lo, hi int64) (cut, must int, why string) {
	cut, must = len(evs), len(evs)
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].g > lo {
			cut = i
		}
		if evs[i].g >= hi {
			must = i
		}
	}
	return cut, max(cut, must), ""
}

func fmtEvents(evs []event, from int) string {
	const show = 12
	start := max(0, min(from-2, len(evs)-show))
	var parts []string
	if start > 0 {
		parts = append(parts, fmt.Sprintf("…%d earlier", start))
	}
	for i := start; i < len(evs) && i < start+show; i++ {
		s := evs[i].String()
		if i == from {
			s = "| " + s
		}
		parts = append(parts, s)
	}
	if start+show < len(evs) {
		parts = append(parts, fmt.Sprintf("…%d later", len(evs)-start-show))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func diffRows(got, want map[int64]int64) string {
	var out []string
	n := 0
	for id, v := range want {
		if g, ok := got[id]; !ok {
			n++
			out = append(out, fmt.Sprintf("missing id %d (v=%d)", id, v))
		} else if g != v {
			n++
			out = append(out, fmt.Sprintf("id %d: v=%d, want %d", id, g, v))
		}
	}
	for id, v := range got {
		if _, ok := want[id]; !ok {
			n++
			out = append(out, fmt.Sprintf("extra id %d (v=%d)", id, v))
		}
	}
	if n == 0 {
		return ""
	}
	sort.Strings(out)
	return fmt.Sprintf("%d differences, e.g. %s", n, strings.Join(out[:min(5, len(out))], "; "))
}
