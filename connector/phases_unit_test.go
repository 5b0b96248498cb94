package connector

import (
	"testing"

	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// TestParkedTableEmitsOnlyBeforeItsPark: a table the main worker parked at
// P still has its changes below P written on a replay, none from P on; a
// failed copy (no park position) and a table not handed over write none.
func TestParkedTableEmitsOnlyBeforeItsPark(t *testing.T) {
	v := phaseView{
		"public.parked": {Table: offsets.Table{Phase: offsets.PhaseErrored, LSN: 100, ParkedLSN: 500}},
		"public.failed": {Table: offsets.Table{Phase: offsets.PhaseErrored, LSN: 100}},
		"public.ready":  {Table: offsets.Table{Phase: offsets.PhaseReady, LSN: 100}},
	}
	for _, tc := range []struct {
		table       string
		commit, lsn schema.LSN
		want        bool
	}{
		{"public.parked", 600, 499, true},  // before the park, in the DDL's transaction
		{"public.parked", 600, 500, false}, // the change it stopped at
		{"public.parked", 700, 650, false}, // after it
		{"public.parked", 90, 80, false},   // before the handover: the copy wrote it
		{"public.failed", 600, 499, false},
		{"public.ready", 600, 650, true},
		{"public.ready", 90, 80, false},
		{"public.unknown", 600, 499, false},
	} {
		if got := v.emitsChange(tc.table, tc.commit, tc.lsn); got != tc.want {
			t.Errorf("emitsChange(%s, commit %d, lsn %d) = %v, want %v", tc.table, tc.commit, tc.lsn, got, tc.want)
		}
	}
}
