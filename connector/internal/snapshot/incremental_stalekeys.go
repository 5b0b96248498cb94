package snapshot

import (
	"iter"
	"sync"
)

// staleKeys holds one topic's keys while an incremental snapshot runs
// (incremental_stale.go): the keys whose last record before the mark is
// not a tombstone, read from the topic while the chunks are read, less
// every key the main worker writes to the topic from before the mark was
// read on (struck: a window's row, a streamed change). It is the
// emit.StaleKeys the main worker strikes from; safe for concurrent use.
//
// The read and the strikes race: a key may be struck before the read
// meets its records. While the read goes on a strike is kept (false) so
// that the read does not take the key back; once the read is done the
// struck entries go and a strike deletes.
type staleKeys struct {
	mu      sync.Mutex
	keys    map[string]bool // true: live before the mark; false: struck while the read goes on
	reading bool
	// bytes is the set's estimated size (staleKeyBytes per entry); past
	// limit the set is dropped and over says why nothing is tombstoned.
	bytes, limit int64
	over         bool
}

// staleKeyOverhead is what an entry of staleKeys costs beyond its key's
// bytes: the map's slot (a string header, the bool, its control byte, at
// the map's load) and the key's allocation rounded to its size class,
// measured by TestStaleKeysCostPerKey (about 60 bytes for a 14-byte JSON
// key such as {"id":1234567}).
const staleKeyOverhead = 48

// staleKeysLimit bounds one topic's stale keys held by an incremental
// snapshot: 1 GiB, some 17 million keys of 14 bytes. A table with more
// keys in its topic is snapshotted without tombstones, loudly
// (docs/incremental-snapshots.md, "Stale keys"). A variable for tests.
var staleKeysLimit int64 = 1 << 30

func newStaleKeys(limit int64) *staleKeys {
	return &staleKeys{keys: map[string]bool{}, reading: true, limit: limit}
}

func staleKeyBytes(key []byte) int64 { return int64(len(key)) + staleKeyOverhead }

// put sets key's entry, counting a new one; the set is dropped once it
// outgrows its limit. Under s.mu.
func (s *staleKeys) put(key []byte, live bool) {
	if _, ok := s.keys[string(key)]; !ok {
		if s.bytes += staleKeyBytes(key); s.bytes > s.limit {
			s.keys, s.over = nil, true
			return
		}
	}
	s.keys[string(key)] = live
}

// drop removes key's entry. Under s.mu.
func (s *staleKeys) drop(key []byte) {
	if _, ok := s.keys[string(key)]; ok {
		delete(s.keys, string(key))
		s.bytes -= staleKeyBytes(key)
	}
}

// Strike: the main worker wrote key to the topic (emit.StaleKeys).
func (s *staleKeys) Strike(key []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.over:
	case s.reading:
		if live, ok := s.keys[string(key)]; !ok || live {
			s.put(key, false)
		}
	default:
		s.drop(key)
	}
}

// see takes in a record the read met: before the mark, it makes its key
// live (or, a tombstone, not) unless struck; at or past it, it strikes
// the key (a resumed snapshot's earlier runs wrote it).
func (s *staleKeys) see(key []byte, tombstone, past bool) {
	if key == nil {
		return
	}
	if past {
		s.Strike(key)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over {
		return
	}
	live, ok := s.keys[string(key)]
	switch {
	case ok && !live: // struck: the main worker wrote it since
	case tombstone:
		s.drop(key)
	case !ok:
		s.put(key, true)
	}
}

// readDone ends the read: the struck entries go, and from now on a
// strike deletes.
func (s *staleKeys) readDone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reading = false
	for k, live := range s.keys {
		if !live {
			delete(s.keys, k)
			s.bytes -= int64(len(k)) + staleKeyOverhead
		}
	}
}

// Left yields the keys live before the mark and not struck
// (emit.StaleKeys); none once the set outgrew its limit. It holds the
// lock while it yields: call it once the read is done.
func (s *staleKeys) Left() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for k, live := range s.keys {
			if live && !yield([]byte(k)) {
				return
			}
		}
	}
}

// outgrown reports whether the set was dropped for its limit.
func (s *staleKeys) outgrown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.over
}

// size is the number of entries held.
func (s *staleKeys) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}
