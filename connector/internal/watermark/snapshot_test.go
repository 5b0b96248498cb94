package watermark

import (
	"errors"
	"slices"
	"testing"
)

// The texts a PostgreSQL 15 server writes, and Debezium's test vectors
// (PgSnapshotTest.java:18 and :28 at v3.6.1.Final).
func TestParseSnapshotReadsTheServersText(t *testing.T) {
	for _, c := range []struct {
		text string
		want Snapshot
	}{
		{"795:799:795,797", Snapshot{795, 799, []uint64{795, 797}}}, // PgSnapshotTest.java:18
		{"795:799:", Snapshot{795, 799, nil}},                       // PgSnapshotTest.java:28
		{"724:724:", Snapshot{724, 724, nil}},                       // SELECT pg_current_snapshot() on an idle 15
		{"10:20:12,15", Snapshot{10, 20, []uint64{12, 15}}},         // '10:20:12,12,15'::pg_snapshot as 15 writes it back
		{"18446744073709551615:18446744073709551615:", Snapshot{1<<64 - 1, 1<<64 - 1, nil}},
		{"4294967396:4294967400:4294967396,4294967399", Snapshot{1<<32 + 100, 1<<32 + 104, []uint64{1<<32 + 100, 1<<32 + 103}}}, // epoch 1
	} {
		got, err := ParseSnapshot(c.text)
		if err != nil {
			t.Errorf("%q: %v", c.text, err)
			continue
		}
		if got.Xmin != c.want.Xmin || got.Xmax != c.want.Xmax || !slices.Equal(got.Xip, c.want.Xip) {
			t.Errorf("%q: got %+v, want %+v", c.text, got, c.want)
		}
		if s := got.String(); s != c.text && c.text != "10:20:12,15" {
			t.Errorf("%q: String() = %q", c.text, s)
		}
	}
}

func TestParseSnapshotRefusesWhatTheServerDoesNotWrite(t *testing.T) {
	for _, text := range []string{
		"795::", // PgSnapshotTest.java:38 (Debezium refuses it too)
		// Refused by PostgreSQL 15's pg_snapshot input too:
		"10:20", "0:20:", "20:10:", "10:20:5", "10:20:20", "10:20:15,12", "10:20:,12", "18446744073709551616:1:",
		// Accepted by the server's lax input, never written by it: we
		// parse only its output, so these mean a wrong column.
		" 10:20:", "+10:20:", "010:20:", "10:20:12,", "10:20:12,12", "10:20:-12",
		"", ":", "::", "a:b:", "10:20:12 ,15", "10:20:12,15:",
	} {
		if s, err := ParseSnapshot(text); err == nil {
			t.Errorf("%q: parsed as %+v, want an error", text, s)
		} else if !errors.Is(err, ErrSnapshotSyntax) {
			t.Errorf("%q: %v does not wrap ErrSnapshotSyntax", text, err)
		}
	}
}

// Each verdict is pg_visible_in_snapshot(x::xid8, '10:20:12,15') on a
// PostgreSQL 15 server.
func TestVisibleAgreesWithPgVisibleInSnapshot(t *testing.T) {
	s := Snapshot{10, 20, []uint64{12, 15}}
	for x, want := range map[uint64]bool{1: true, 3: true, 9: true, 10: true, 11: true, 12: false, 13: true,
		15: false, 19: true, 20: false, 21: false, 4294967308: false} {
		if got := s.Visible(x); got != want {
			t.Errorf("Visible(%d) = %v, want %v", x, got, want)
		}
	}
}

// On a PostgreSQL 15.20 hot standby, pg_current_snapshot() was
// "747:749:" while 747 was still running on the primary (whose own
// snapshot was "747:749:747") and 748 had committed: Visible takes the
// text at its word, InRecovery keeps only what it proves.
func TestInRecoverySeesOnlyIdsBelowXmin(t *testing.T) {
	standby := Snapshot{Xmin: 747, Xmax: 749}
	if !standby.Visible(747) {
		t.Fatal("the standby's text claims 747 visible (as pg_visible_in_snapshot does there); the test's premise is wrong")
	}
	s := standby.InRecovery()
	for x, want := range map[uint64]bool{3: true, 746: true, 747: false, 748: false, 749: false, 1<<32 + 746: false} {
		if got := s.Visible(x); got != want {
			t.Errorf("InRecovery().Visible(%d) = %v, want %v", x, got, want)
		}
	}
	// It sees a floor only if the floor sees nothing from its xmin on.
	for floor, want := range map[string]bool{"700:747:": true, "700:748:747": true, "700:748:": false, "748:748:": false} {
		if got := s.SeesAll(snap(t, floor)); got != want {
			t.Errorf("InRecovery().SeesAll(%s) = %v, want %v", floor, got, want)
		}
	}
	if s.Xmin != 747 || s.Xmax != 747 || len(s.Xip) != 0 {
		t.Errorf("InRecovery() = %s, want 747:747:", s)
	}
}

func TestFullXidWidensAcrossEpochs(t *testing.T) {
	const e = 1 << 32
	for _, c := range []struct {
		xid  uint32
		ref  uint64
		want uint64
	}{
		{500, 1000, 500},                   // same epoch, below
		{1500, 1000, 1500},                 // same epoch, above
		{5, e - 10, e + 5},                 // the next epoch: the xid counter wrapped after the snapshot
		{e - 6, e + 5, e - 6},              // the previous epoch: an old transaction, the snapshot after the wrap
		{7, 3*e + 1, 3*e + 7},              // epoch 3
		{e - 1, 3*e + 1, 3*e - 1},          // epoch 2's last
		{1 << 31, 0 + 1000, 1 << 31},       // 2^31 - 1000 above: still the first epoch
		{e - 296, 1000, e - 296},           // would be negative in the first epoch: the larger one
		{1000 + 1<<31, 1000, 1000 + 1<<31}, // exactly 2^31 away: [ref-2^31, ref+2^31) puts it below, which is negative: above
	} {
		if got := FullXid(c.xid, c.ref); got != c.want {
			t.Errorf("FullXid(%d, %d) = %d, want %d", c.xid, c.ref, got, c.want)
		}
	}
}

// Debezium compares the 32-bit xid of pgoutput's BEGIN
// (PgOutputMessageDecoder.java:267) with pg_current_snapshot()'s 64-bit
// xmin and xmax (PostgresReadOnlyIncrementalSnapshotContext.java:73, :80,
// :106 at v3.6.1.Final): once the database is past its first 4 billion
// xids, every stream xid is below xmin and counts as seen. Sees widens
// it first.
func TestSeesComparesAStreamXidInTheSnapshotsEpoch(t *testing.T) {
	const e = 1 << 32
	s := Snapshot{Xmin: 2*e + 100, Xmax: 2*e + 110, Xip: []uint64{2*e + 100, 2*e + 105}}
	for xid, want := range map[uint32]bool{99: true, 100: false, 101: true, 105: false, 109: true, 110: false, 4000: false,
		e - 5: true /* epoch 1's end */} {
		got, err := s.Sees(xid)
		if err != nil || got != want {
			t.Errorf("Sees(%d) = %v, %v; want %v", xid, got, err, want)
		}
	}
	if !s.Visible(uint64(uint32(110))) {
		t.Error("the 32-bit comparison was expected to take xid 110 for seen (below 64-bit xmin)")
	}
	for _, xid := range []uint32{0, 1, 2} {
		if _, err := s.Sees(xid); !errors.Is(err, ErrSpecialXid) {
			t.Errorf("Sees(%d): %v, want ErrSpecialXid", xid, err)
		}
	}
}

// Each verdict was computed on a PostgreSQL 15 server: e ⊆ s holds when
// no x in [1, 30) has pg_visible_in_snapshot(x, e) and not
// pg_visible_in_snapshot(x, s).
func TestSeesAllAgreesWithPgVisibleInSnapshot(t *testing.T) {
	for _, c := range []struct {
		s, e string
		want bool
	}{
		{"10:20:12,15", "10:20:12,15", true},
		{"10:20:12,15", "10:20:12", false},
		{"10:20:12", "10:20:12,15", true},
		{"10:18:12", "10:20:12,18,19", true},
		{"10:18:12", "10:20:12,19", false},
		{"12:25:12,21", "10:20:10,12,15", true},
		{"12:25:12,21", "10:22:10,12,15", false},
		{"5:5:", "10:20:12,15", false},
		{"20:20:", "10:20:12,15", true},
		{"10:20:11,12,15", "10:20:12,15", false},
	} {
		if got := snap(t, c.s).SeesAll(snap(t, c.e)); got != c.want {
			t.Errorf("%s sees all of %s: %v, want %v", c.s, c.e, got, c.want)
		}
	}
	if (Snapshot{Xmin: 1, Xmax: 1}).SeesAll(Snapshot{Xmin: 1 << 40, Xmax: 1 << 40}) {
		t.Error("a snapshot sees all of a much later one")
	}
}

func FuzzParseSnapshot(f *testing.F) {
	for _, s := range []string{"795:799:795,797", "795:799:", "724:724:", "10:20:12,15", "795::", "+10:20:", "4294967396:4294967400:4294967396,4294967399"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSnapshot(text)
		if err != nil {
			return
		}
		if s.String() != text {
			t.Fatalf("%q parsed, but writes back as %q", text, s.String())
		}
		if s.Xmin == 0 || s.Xmax < s.Xmin {
			t.Fatalf("%q: xmin %d, xmax %d", text, s.Xmin, s.Xmax)
		}
		for i, x := range s.Xip {
			if x < s.Xmin || x >= s.Xmax || (i > 0 && x <= s.Xip[i-1]) || s.Visible(x) {
				t.Fatalf("%q: running id %d out of place or visible", text, x)
			}
		}
		if !s.Visible(s.Xmin-1) || s.Visible(s.Xmax) {
			t.Fatalf("%q: xmin-1 must be visible and xmax not", text)
		}
	})
}

// The union sees what either snapshot sees, and nothing else: checked id
// by id against Visible, and by the text it keeps.
func TestUnionSeesWhatEitherSees(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"100:100:", "100:100:", "100:100:"},
		{"100:105:100,102", "100:105:100,103", "100:105:100"},
		{"100:105:100,102", "103:103:", "105:105:"},
		{"100:105:100,102", "101:101:", "102:105:102"},
		{"700:747:", "747:749:747", "747:749:747"},
		{"747:747:", "700:748:747", "747:748:747"}, // a standby's InRecovery and the primary's
		{"10:20:12,15,18", "14:25:14,16,22", "22:25:22"},
	} {
		a, b := snap(t, tc.a), snap(t, tc.b)
		for _, u := range []Snapshot{a.Union(b), b.Union(a)} {
			if u.String() != tc.want {
				t.Errorf("%s ∪ %s = %s, want %s", tc.a, tc.b, u, tc.want)
			}
			for x := uint64(3); x < 30; x++ {
				if got, want := u.Visible(x), a.Visible(x) || b.Visible(x); got != want {
					t.Errorf("%s ∪ %s: Visible(%d) = %v, want %v", tc.a, tc.b, x, got, want)
				}
			}
			for x := uint64(690); x < 760; x++ {
				if got, want := u.Visible(x), a.Visible(x) || b.Visible(x); got != want {
					t.Errorf("%s ∪ %s: Visible(%d) = %v, want %v", tc.a, tc.b, x, got, want)
				}
			}
		}
	}
}
