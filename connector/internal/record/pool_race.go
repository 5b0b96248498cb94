//go:build race

package record

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// freeList is the Pool's free list under the race detector: a slice
// behind a mutex. There sync.Pool drops a quarter of what it is given at
// random (sync/pool.go, Put), which would make the allocation tests
// (emit: TestEmitterAllocatesNothingPerRowOnAWarmPlan) noise; with this
// list they hold in make test's one -race run, and the detector still
// sees each hand-off ordered, a put before the get that returns it, by
// the mutex. Race builds are tests' only; users' binaries use pool.go.
type freeList struct {
	mu   sync.Mutex
	recs []*kgo.Record
}

func (f *freeList) get() *kgo.Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.recs)
	if n == 0 {
		return nil
	}
	rec := f.recs[n-1]
	f.recs[n-1] = nil
	f.recs = f.recs[:n-1]
	return rec
}

func (f *freeList) put(rec *kgo.Record) {
	f.mu.Lock()
	f.recs = append(f.recs, rec)
	f.mu.Unlock()
}
