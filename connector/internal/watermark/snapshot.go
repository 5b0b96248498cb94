package watermark

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Snapshot is a transaction snapshot as pg_current_snapshot() (Postgres 13
// and later; txid_current_snapshot() before, same text) gives it: every
// transaction id is a 64-bit xid8, the epoch in its high 32 bits, so ids
// compare as plain integers across wraparound.
//
// A transaction x is visible to the snapshot (it had completed when the
// snapshot was taken) when x < Xmin, or Xmin <= x < Xmax and x is not in
// Xip; x >= Xmax and the ids in Xip are not (Postgres 15, docs "Snapshot
// Information Functions", table 9.79; pg_visible_in_snapshot()).
type Snapshot struct {
	Xmin uint64   // the earliest id still running; every id below has completed
	Xmax uint64   // one past the highest completed id; no id from here on has completed
	Xip  []uint64 // the ids running between Xmin and Xmax, ascending, without repeats
}

// firstNormalXid is Postgres's FirstNormalTransactionId: ids 0
// (invalid), 1 (bootstrap) and 2 (frozen) are never a transaction's own.
const firstNormalXid = 3

// ErrSnapshotSyntax is wrapped by every error ParseSnapshot returns.
var ErrSnapshotSyntax = errors.New("not a pg_snapshot as pg_current_snapshot() writes it")

// ParseSnapshot parses the text pg_current_snapshot()::text returns:
// "xmin:xmax:xip,xip,…" in decimal, the list empty for no running id
// ("724:724:"). It accepts exactly the server's output form (no signs,
// spaces or leading zeros, the ids in range and ascending); Postgres's
// own input function is laxer (it skips spaces and repeats), but mooncdc
// only ever parses what the server wrote, so anything else is a sign of a
// wrong column or a proxy in between and is refused, naming the text. It
// is pure and safe for concurrent use.
func ParseSnapshot(text string) (Snapshot, error) {
	fail := func(why string) (Snapshot, error) {
		return Snapshot{}, fmt.Errorf("%w: %q: %s (read it with SELECT pg_current_snapshot()::text)", ErrSnapshotSyntax, text, why)
	}
	xminText, rest, ok := strings.Cut(text, ":")
	if !ok {
		return fail("no ':' after xmin")
	}
	xmaxText, xipText, ok := strings.Cut(rest, ":")
	if !ok {
		return fail("no ':' after xmax")
	}
	var s Snapshot
	var err error
	if s.Xmin, err = parseXid8(xminText); err != nil {
		return fail("xmin: " + err.Error())
	}
	if s.Xmax, err = parseXid8(xmaxText); err != nil {
		return fail("xmax: " + err.Error())
	}
	if s.Xmin == 0 || s.Xmax == 0 {
		return fail("xmin and xmax must be valid (non-zero) transaction ids")
	}
	if s.Xmax < s.Xmin {
		return fail("xmax is below xmin")
	}
	if xipText == "" {
		return s, nil
	}
	for _, f := range strings.Split(xipText, ",") {
		x, err := parseXid8(f)
		if err != nil {
			return fail("running id: " + err.Error())
		}
		if x < s.Xmin || x >= s.Xmax {
			return fail(fmt.Sprintf("running id %d is outside [xmin, xmax)", x))
		}
		if n := len(s.Xip); n > 0 && x <= s.Xip[n-1] {
			return fail("running ids are not strictly ascending")
		}
		s.Xip = append(s.Xip, x)
	}
	return s, nil
}

// parseXid8 parses one id in the server's form: decimal digits, no sign,
// no leading zero (but "0" itself), within 64 bits.
func parseXid8(f string) (uint64, error) {
	if f == "" {
		return 0, errors.New("empty")
	}
	for i := 0; i < len(f); i++ {
		if f[i] < '0' || f[i] > '9' {
			return 0, fmt.Errorf("%q is not a decimal number", f)
		}
	}
	if len(f) > 1 && f[0] == '0' {
		return 0, fmt.Errorf("%q has a leading zero", f)
	}
	x, err := strconv.ParseUint(f, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q does not fit in 64 bits", f)
	}
	return x, nil
}

// String returns the snapshot in the server's text form; ParseSnapshot
// reads it back.
func (s Snapshot) String() string {
	var b strings.Builder
	b.WriteString(strconv.FormatUint(s.Xmin, 10))
	b.WriteByte(':')
	b.WriteString(strconv.FormatUint(s.Xmax, 10))
	b.WriteByte(':')
	for i, x := range s.Xip {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(x, 10))
	}
	return b.String()
}

// Visible reports whether the transaction with the 64-bit id full had
// completed when the snapshot was taken (pg_visible_in_snapshot()). For a
// committed transaction that is "the snapshot sees its changes"; the
// stream only carries committed ones.
func (s Snapshot) Visible(full uint64) bool {
	switch {
	case full < s.Xmin:
		return true
	case full >= s.Xmax:
		return false
	default:
		_, running := slices.BinarySearch(s.Xip, full)
		return !running
	}
}

// SeesAll reports whether s sees every transaction e sees: whether s
// was taken after everything e counts as committed had become visible.
// Both are compared as xid8 sets: the ids e sees are those below e.Xmax
// and not in e.Xip, and s must not count one of them as running.
func (s Snapshot) SeesAll(e Snapshot) bool {
	// Every id in [s.Xmax, e.Xmax) is running for s: e must not see it.
	if e.Xmax > s.Xmax && e.Xmax-s.Xmax > uint64(len(e.Xip)) {
		return false
	}
	for x := s.Xmax; x < e.Xmax; x++ {
		if _, running := slices.BinarySearch(e.Xip, x); !running {
			return false
		}
	}
	// Every id s lists as running below e.Xmax must be running for e.
	for _, x := range s.Xip {
		if x >= e.Xmax {
			break
		}
		if _, running := slices.BinarySearch(e.Xip, x); !running {
			return false
		}
	}
	return true
}

// Union returns the snapshot that sees exactly what s or e sees: a
// transaction is visible to it when it is visible to either. A window's
// snapshot that sees all the union sees, sees all of both (the Tracker's
// floor: every id assigned before a table was watched, and everything an
// earlier window's snapshot showed visible, Prune).
func (s Snapshot) Union(e Snapshot) Snapshot {
	if s.Xmax < e.Xmax {
		s, e = e, s
	}
	// s has the larger Xmax: an id from there on is seen by neither, and
	// one below it is unseen by s only if s lists it running.
	u := Snapshot{Xmax: s.Xmax}
	for _, x := range s.Xip {
		if !e.Visible(x) {
			u.Xip = append(u.Xip, x)
		}
	}
	u.Xmin = u.Xmax
	if len(u.Xip) > 0 {
		u.Xmin = u.Xip[0]
	}
	return u
}

// InRecovery returns the part of s that holds on a hot standby: the
// snapshot that sees exactly the ids below s.Xmin. Use it for every
// snapshot read on a server in recovery (pg_is_in_recovery() true before
// the transaction began). There, pg_current_snapshot() lists no running
// id: GetSnapshotData (procarray.c) puts every running xid of a snapshot
// taken during recovery in subxip[] and leaves xip[] empty, and
// pg_current_snapshot (xid8funcs.c) copies only xip[]. So "747:749:" on a
// standby can hide 747 still running (PostgreSQL 15.20: the primary's
// snapshot was "747:749:747", the standby's row count showed 747's insert
// unseen while pg_visible_in_snapshot('747', pg_current_snapshot())
// answered true; TestPostgresFactsTheArgumentRestsOn). Between
// Xmin and Xmax such a text cannot tell committed from running, so every
// id from Xmin on counts as not seen: the Tracker then drops a key that
// the snapshot may in fact have seen changed, which is safe (the stream
// carries that change), prunes only what is below Xmin, and refuses an
// Open until Xmin passes what it must prove visible.
func (s Snapshot) InRecovery() Snapshot { return Snapshot{Xmin: s.Xmin, Xmax: s.Xmin} }

// FullXid widens a 32-bit xid, as a pgoutput BEGIN carries it, to the
// 64-bit id nearest to ref: the one congruent to xid modulo 2^32 in
// [ref-2^31, ref+2^31). With ref the Xmax of a snapshot, that is the
// transaction's own id whenever the two are less than 2^31 apart, which
// Postgres's wraparound limit ensures for every transaction a window
// compares (docs/incremental-snapshots.md, "Comparing a stream xid with
// a snapshot"). Postgres widens the same way relative to its next id
// (FullTransactionIdFromAllowableAt in xid8funcs.c).
//
// Where the nearest candidate would fall below the first normal id (ref
// in the first epoch and xid from the top of it), the next epoch's is
// returned: a real id cannot be negative, and the larger id is never
// visible, so a doubtful case counts as invisible, the safe side
// (Tracker drops the key, and the stream carries its change).
func FullXid(xid uint32, ref uint64) uint64 {
	d := int64(int32(xid - uint32(ref)))
	if d < 0 && uint64(-d)+firstNormalXid > ref {
		return ref + uint64(int64(1<<32)+d)
	}
	return uint64(int64(ref) + d)
}

// ErrSpecialXid is returned for a stream xid that no transaction has.
var ErrSpecialXid = errors.New("not a normal transaction id (0, 1 and 2 are reserved)")

// Sees reports whether the stream transaction with the 32-bit id xid had
// completed when the snapshot was taken: Visible(FullXid(xid, s.Xmax)).
// Xids 0, 1 and 2 are never a transaction's and are an error.
func (s Snapshot) Sees(xid uint32) (bool, error) {
	if xid < firstNormalXid {
		return false, fmt.Errorf("stream transaction id %d: %w", xid, ErrSpecialXid)
	}
	return s.Visible(FullXid(xid, s.Xmax)), nil
}
