package snapshot

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestRerunTakesTheErrorsAnIncrementalSnapshotOutlives: a run that ended
// with a lost window, a rewrite, or a hot standby's cancellation of one of
// the run's own queries (wrapped as runIncremental wraps them: "read the
// size of …: %w") goes on from the stored progress; any other error fails
// the snapshot.
func TestRerunTakesTheErrorsAnIncrementalSnapshotOutlives(t *testing.T) {
	conflict := &pgconn.PgError{Code: "40001", Message: "canceling statement due to conflict with recovery"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"window lost", fmt.Errorf("x: %w", errWindowLost), true},
		{"rewritten", errRewritten, true},
		{"size read cancelled by the standby", fmt.Errorf("read the size of public.t: %w", conflict), true},
		{"floor read: connection ended by the standby", fmt.Errorf("read the incremental snapshot's floor: %w",
			&pgconn.PgError{Code: "40001", Message: "terminating connection due to conflict with recovery"}), true},
		{"buffer pin deadlock", &pgconn.PgError{Code: "40P01", Message: "canceling statement due to conflict with recovery"}, true},
		{"a serialization failure on a primary", &pgconn.PgError{Code: "40001", Message: "could not serialize access due to concurrent update"}, false},
		{"permission denied", &pgconn.PgError{Code: "42501", Message: "permission denied for table t"}, false},
		{"other", errors.New("boom"), false},
		{"nil", nil, false},
	} {
		if got := rerun(tc.err); got != tc.want {
			t.Errorf("%s: rerun(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
