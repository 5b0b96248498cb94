package ittest

import (
	"fmt"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/offsets"
)

// WaitPhase waits up to 60 s until table's phase satisfies ok, and
// returns it.
func WaitPhase(t *testing.T, r *Running, table string, ok func(offsets.Table) bool) offsets.Table {
	t.Helper()
	var ph offsets.Table
	eventually.Succeeds(t, 60*time.Second, 20*time.Millisecond, func() error {
		if ph = r.P.TablePhases()[table]; !ok(ph) {
			return fmt.Errorf("table %s: phase %+v", table, ph)
		}
		return nil
	})
	return ph
}
