package snapshot

import (
	"testing"

	"github.com/mooncdc/mooncdc/offsets"
)

// TestRepairOfKnowsASlotLossRepairByItsRequestOrItsProgress: the mark of a
// slot-loss repair is read from its request (not planned yet) and from the
// progress a planned snapshot stores; any other request or progress, and
// text that is not JSON, is not one.
func TestRepairOfKnowsASlotLossRepairByItsRequestOrItsProgress(t *testing.T) {
	for _, tc := range []struct {
		raw  offsets.RawJSON
		want bool
	}{
		{offsets.IncrementalRepair, true},
		{`{"pages":9,"relfilenode":1,"done":[[0,3]],"rows":20,"chunk_pages":3,"started_ms":1,"paused":false,"repair":true}`, true},
		{"", false},
		{offsets.IncrementalRequested, false},
		{`{"pages":9,"relfilenode":1,"done":[[0,3]],"rows":20,"chunk_pages":3,"started_ms":1,"paused":false}`, false},
		{`{"repair":false}`, false},
		{`not json`, false},
	} {
		if got := repairOf(tc.raw); got != tc.want {
			t.Errorf("repairOf(%s) = %v, want %v", tc.raw, got, tc.want)
		}
	}
}
