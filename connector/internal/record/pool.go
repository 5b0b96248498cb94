//go:build !race

package record

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// freeList is the Pool's free list: a sync.Pool, per-P and emptied by
// the garbage collector when records sit unused.
type freeList struct{ p sync.Pool }

func (f *freeList) get() *kgo.Record {
	rec, _ := f.p.Get().(*kgo.Record)
	return rec
}

func (f *freeList) put(rec *kgo.Record) { f.p.Put(rec) }
