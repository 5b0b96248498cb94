package snapshot

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

func lsnOf(v uint64) schema.LSN { return schema.LSN(v) }
func itoa(v int64) string       { return strconv.FormatInt(v, 10) }

func TestCopySafetyChecksRefuseAnotherSourceOrAnOldSnapshot(t *testing.T) {
	c := &copier{src: offsets.Pipeline{SystemID: "7001", Database: "shop", InitialLSN: 1000}}
	cases := []struct {
		name string
		id   pgsource.SourceIdentity
		lsn  uint64
		want string
	}{
		{"same source, later snapshot", pgsource.SourceIdentity{SystemID: "7001", Database: "shop"}, 2000, ""},
		{"same source, snapshot at the slot's start", pgsource.SourceIdentity{SystemID: "7001", Database: "shop"}, 1000, ""},
		{"another system", pgsource.SourceIdentity{SystemID: "7002", Database: "shop"}, 2000, "system"},
		{"another database", pgsource.SourceIdentity{SystemID: "7001", Database: "other"}, 2000, "database"},
		{"snapshot before the pipeline slot", pgsource.SourceIdentity{SystemID: "7001", Database: "shop"}, 999, "precedes"},
	}
	for _, tc := range cases {
		err := c.checkSource(tc.id, snapshotPoint{lsn: lsnOf(tc.lsn)})
		var ue *pgsource.UnsafeResumeError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: unexpected %v", tc.name, err)
		case tc.want != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: want an unsafe-resume error naming %q, got %v", tc.name, tc.want, err)
		}
	}
}

func TestChunksCoverTheWholeTable(t *testing.T) {
	cases := []struct {
		tuples, pages, chunkRows int64
		want                     string
	}{
		{0, 0, 100, "[{0 -1}]"},
		{50, 1, 100, "[{0 -1}]"},
		{1000, 10, 100, "[{0 1} {1 2} {2 3} {3 4} {4 5} {5 6} {6 7} {7 8} {8 9} {9 -1}]"},
		{1000, 7, 300, "[{0 2} {2 4} {4 6} {6 -1}]"},
	}
	for _, tc := range cases {
		got := chunks(tableInfo{reltuples: tc.tuples, relpages: tc.pages}, tc.chunkRows)
		if s := fmtChunks(got); s != tc.want {
			t.Errorf("chunks(%d tuples, %d pages, %d) = %s, want %s", tc.tuples, tc.pages, tc.chunkRows, s, tc.want)
		}
		if got[0].from != 0 || got[len(got)-1].to != -1 {
			t.Errorf("chunks must start at page 0 and end open: %s", fmtChunks(got))
		}
		for i := 1; i < len(got); i++ {
			if got[i].from != got[i-1].to {
				t.Errorf("gap or overlap between chunks: %s", fmtChunks(got))
			}
		}
	}
}

// TestChunkCopiesOnlyRowsThePublicationPublishes protects snapshots of a
// table whose publication has a row filter (Postgres 15+): the copy reads
// the rows the stream would carry, in every chunk.
func TestChunkCopiesOnlyRowsThePublicationPublishes(t *testing.T) {
	cases := []struct {
		ch   chunk
		want string
	}{
		{chunk{0, -1, ""}, ""},
		{chunk{0, 3, ""}, " WHERE ctid >= '(0,0)'::tid AND ctid < '(3,0)'::tid"},
		{chunk{3, -1, ""}, " WHERE ctid >= '(3,0)'::tid"},
		{chunk{0, -1, "a > 10"}, " WHERE (a > 10)"},
		{chunk{3, 6, "(a > 10) OR (b IS NULL)"}, " WHERE ctid >= '(3,0)'::tid AND ctid < '(6,0)'::tid AND ((a > 10) OR (b IS NULL))"},
	}
	for _, tc := range cases {
		if got := tc.ch.where(); got != tc.want {
			t.Errorf("%+v.where() = %q, want %q", tc.ch, got, tc.want)
		}
	}
	for _, c := range chunks(tableInfo{reltuples: 1000, relpages: 10, rowFilter: "a > 10"}, 100) {
		if c.filter != "a > 10" {
			t.Fatalf("chunk %+v lost the row filter", c)
		}
	}
}

// TestSnapshotColumnsAreThosePgoutputSends protects snapshots of a table
// with a column list or generated columns: the copy has the columns the
// stream has, on every Postgres version.
func TestSnapshotColumnsAreThosePgoutputSends(t *testing.T) {
	list := map[string]bool{"id": true, "gen": true}
	cases := []struct {
		name      string
		p         pgsource.PubColumns
		column    string
		generated bool
		want      bool
	}{
		{"no list (14, or table not listed): plain column", pgsource.PubColumns{}, "secret", false, true},
		{"no list: generated column", pgsource.PubColumns{}, "gen", true, false},
		{"listed column", pgsource.PubColumns{Listed: list}, "id", false, true},
		{"column left out of the list", pgsource.PubColumns{Listed: list}, "secret", false, false},
		{"15-17 list names a generated column pgoutput never sends", pgsource.PubColumns{Listed: list}, "gen", true, false},
		{"18 publishes a listed generated column", pgsource.PubColumns{Listed: list, GenCols: true}, "gen", true, true},
		{"18 without it in the list", pgsource.PubColumns{Listed: map[string]bool{"id": true}, GenCols: true}, "gen", true, false},
	}
	for _, tc := range cases {
		if got := tc.p.Has(tc.column, tc.generated); got != tc.want {
			t.Errorf("%s: has(%q) = %v, want %v", tc.name, tc.column, got, tc.want)
		}
	}
}

func fmtChunks(cs []chunk) string {
	var b strings.Builder
	b.WriteString("[")
	for i, c := range cs {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString("{" + itoa(c.from) + " " + itoa(c.to) + "}")
	}
	return b.String() + "]"
}

func TestTransientCopyErrorsAreRetriedOthersWait(t *testing.T) {
	for code, want := range map[string]bool{
		"53400": true,  // all replication slots in use
		"40001": true,  // serialization failure
		"40P01": true,  // deadlock
		"55P03": true,  // lock timeout
		"57014": true,  // statement timeout, recovery conflict
		"58030": true,  // I/O error
		"22023": true,  // exported snapshot gone
		"42501": false, // no privilege
		"42P01": false, // table dropped
		"28P01": false, // password
		"22P02": false, // bad data
		"":      false,
	} {
		if got := transientCopyError(code); got != want {
			t.Errorf("transientCopyError(%q) = %v, want %v", code, got, want)
		}
	}
}
