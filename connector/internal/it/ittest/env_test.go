package ittest

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// TestTestsOfOneNameRunOneAfterTheOther: a pipeline name (its slot) is held
// by one test of the package at a time; the second test asking for it
// starts only after the first has ended, however they are scheduled.
func TestTestsOfOneNameRunOneAfterTheOther(t *testing.T) {
	var holding atomic.Int32
	var overlapped atomic.Bool
	hold := func(t *testing.T) {
		t.Parallel()
		t.Cleanup(func() { releaseNames(t) })
		claimName(t, "same")
		claimName(t, "same") // a test may ask again for its own name
		if holding.Add(1) > 1 {
			overlapped.Store(true)
		}
		time.Sleep(50 * time.Millisecond)
		holding.Add(-1)
	}
	t.Run("group", func(t *testing.T) {
		t.Run("first", hold)
		t.Run("second", hold)
		t.Run("third", hold)
	})
	if overlapped.Load() {
		t.Fatal("two tests held the same pipeline name at once")
	}
	names.Lock()
	defer names.Unlock()
	if len(names.holder) != 0 || len(names.waiting) != 0 {
		t.Fatalf("claims left after the tests: %v, waiting %v", names.holder, names.waiting)
	}
}

// TestSharedClusterTakesPostgresForTheTestsDatabase: on the shared cluster
// "postgres" (and "") name the test's own database, other names stay, and
// a test cannot stop, restart, reconfigure or close the cluster the others
// run on. A private cluster is postgres itself.
func TestSharedClusterTakesPostgresForTheTestsDatabase(t *testing.T) {
	shared := &Cluster{Cluster: &pgtest.Cluster{}, db: "t_7", shared: true}
	for in, want := range map[string]string{"postgres": "t_7", "": "t_7", "other": "other"} {
		if got := shared.database(in); got != want {
			t.Errorf("shared: database(%q) = %q, want %q", in, got, want)
		}
	}
	if err := shared.Stop("fast"); !errors.Is(err, errShared) {
		t.Errorf("Stop on the shared cluster: %v, want errShared", err)
	}
	if err := shared.Restart(t.Context(), "fast"); !errors.Is(err, errShared) {
		t.Errorf("Restart on the shared cluster: %v, want errShared", err)
	}
	if err := shared.StartAgain(t.Context()); !errors.Is(err, errShared) {
		t.Errorf("StartAgain on the shared cluster: %v, want errShared", err)
	}
	if err := shared.EnableTLS(t.Context(), nil, nil); !errors.Is(err, errShared) {
		t.Errorf("EnableTLS on the shared cluster: %v, want errShared", err)
	}
	if err := shared.Close(); !errors.Is(err, errShared) {
		t.Errorf("Close on the shared cluster: %v, want errShared", err)
	}
	if _, err := shared.StartStandby(t.Context(), "s", nil); !errors.Is(err, errShared) {
		t.Errorf("StartStandby on the shared cluster: %v, want errShared", err)
	}
	private := EnvOn(t, &pgtest.Cluster{}, "")
	if got := private.PG.database("postgres"); got != "postgres" {
		t.Errorf("private: database(postgres) = %q", got)
	}
}
