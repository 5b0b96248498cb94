package snapshot

import (
	"bytes"
	"hash/maphash"
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
// meets its records. While the read goes on a strike is kept (struck) so
// that the read does not take the key back; once the read is done the
// struck entries go and a strike deletes.
//
// The set holds no pointer per key (a map of hashes to entries, the keys'
// bytes in large chunks): a million keys held as strings made the
// garbage collector scan them all at every cycle, which took half the
// process's CPU while the chunks were read. A key whose hash another key
// holds already (rare: 64 bits) goes to a map of strings beside.
type staleKeys struct {
	mu      sync.Mutex
	hash    func([]byte) uint64 // maphash with the set's seed (tests: one that collides)
	idx     map[uint64]int32    // the key's hash → its entry in ents
	ents    []staleEntry
	chunks  [][]byte            // the keys' bytes; an entry's never straddle two
	collide map[string]keyState // keys whose hash idx holds for another key
	reading bool
	// bytes is the set's estimated size (staleKeyBytes per entry made; an
	// entry removed is not given back); past limit the set is dropped
	// and over says why nothing is tombstoned.
	bytes, limit int64
	over         bool
}

type keyState uint8

const (
	keyGone   keyState = iota // removed (its bytes stay in the chunk)
	keyLive                   // live before the mark
	keyStruck                 // struck while the read goes on
)

// staleEntry is a key held: its bytes at chunks[chunk][pos:pos+n].
type staleEntry struct {
	chunk, pos, n uint32
	state         keyState
}

// staleChunk is the size of the chunks that hold the keys' bytes (a
// longer key has a chunk of its own).
const staleChunk = 1 << 20

// staleKeyOverhead is what an entry of staleKeys costs beyond its key's
// bytes: its entry (16 bytes, in a slice grown by doubling) and its slot
// in the index (16 bytes and a control byte, at the map's load), measured
// by TestStaleKeysCostPerKey (58 bytes in all for a 14-byte JSON key such
// as {"id":1234567}, 200,000 of them).
const staleKeyOverhead = 48

// DefaultStaleKeysLimit bounds one topic's stale keys held by an
// incremental snapshot: 1 GiB, some 17 million keys of 14 bytes. A table
// with more keys in its topic is snapshotted without tombstones there,
// loudly (docs/incremental-snapshots.md, "Stale keys"). Tuning's
// StaleKeysLimit lowers it for tests.
const DefaultStaleKeysLimit int64 = 1 << 30

func newStaleKeys(limit int64) *staleKeys {
	seed := maphash.MakeSeed()
	hash := func(b []byte) uint64 { return maphash.Bytes(seed, b) }
	return &staleKeys{hash: hash, idx: map[uint64]int32{}, reading: true, limit: limit}
}

func staleKeyBytes(key []byte) int64 { return int64(len(key)) + staleKeyOverhead }

func (s *staleKeys) bytesOf(e staleEntry) []byte {
	return s.chunks[e.chunk][e.pos : e.pos+e.n]
}

// get returns key's state (keyGone if not held). Under s.mu.
func (s *staleKeys) get(key []byte) keyState {
	if i, ok := s.idx[s.hash(key)]; ok && bytes.Equal(s.bytesOf(s.ents[i]), key) {
		return s.ents[i].state
	}
	return s.collide[string(key)]
}

// put sets key's state, making its entry if it has none; the set is
// dropped once it outgrows its limit. Under s.mu.
func (s *staleKeys) put(key []byte, state keyState) {
	h := s.hash(key)
	i, ok := s.idx[h]
	switch {
	case ok && bytes.Equal(s.bytesOf(s.ents[i]), key):
		s.ents[i].state = state
		return
	case ok || s.collide[string(key)] != keyGone:
		if s.collide[string(key)] == keyGone && !s.grow(key) {
			return
		}
		if s.collide == nil {
			s.collide = map[string]keyState{}
		}
		s.collide[string(key)] = state
		return
	}
	if !s.grow(key) {
		return
	}
	last := len(s.chunks) - 1
	if last < 0 || len(s.chunks[last])+len(key) > cap(s.chunks[last]) {
		s.chunks = append(s.chunks, make([]byte, 0, max(staleChunk, len(key))))
		last++
	}
	c := s.chunks[last]
	s.ents = append(s.ents, staleEntry{chunk: uint32(last), pos: uint32(len(c)), n: uint32(len(key)), state: state})
	s.chunks[last] = append(c, key...)
	s.idx[h] = int32(len(s.ents) - 1)
}

// grow counts a new entry of key, and drops the set if it outgrows its
// limit (reporting false). Under s.mu.
func (s *staleKeys) grow(key []byte) bool {
	if s.bytes += staleKeyBytes(key); s.bytes > s.limit {
		s.idx, s.ents, s.chunks, s.collide, s.over = nil, nil, nil, nil, true
		return false
	}
	return true
}

// drop removes key's entry. Under s.mu.
func (s *staleKeys) drop(key []byte) {
	h := s.hash(key)
	if i, ok := s.idx[h]; ok && bytes.Equal(s.bytesOf(s.ents[i]), key) {
		s.ents[i].state = keyGone
		delete(s.idx, h)
		return
	}
	delete(s.collide, string(key))
}

// Strike: the main worker wrote key to the topic (emit.StaleKeys).
func (s *staleKeys) Strike(key []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.over:
	case s.reading:
		s.put(key, keyStruck)
	default:
		s.drop(key)
	}
}

// see takes in a record the read met: before the mark, it makes its key
// live (or, a tombstone, not) unless struck; at or past it, it strikes
// the key (a resumed snapshot's earlier runs wrote it). It reports false
// once the set outgrew its limit (the read may stop).
func (s *staleKeys) see(key []byte, tombstone, past bool) bool {
	if key == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over {
		return false
	}
	if past {
		if s.reading {
			s.put(key, keyStruck)
		} else {
			s.drop(key)
		}
		return !s.over
	}
	switch st := s.get(key); {
	case st == keyStruck: // the main worker wrote it since
	case tombstone:
		if st == keyLive {
			s.drop(key)
		}
	case st == keyGone:
		s.put(key, keyLive)
	}
	return !s.over
}

// readDone ends the read: the struck entries go, and from now on a
// strike deletes.
func (s *staleKeys) readDone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reading = false
	for i := range s.ents {
		if e := &s.ents[i]; e.state == keyStruck {
			delete(s.idx, s.hash(s.bytesOf(*e)))
			e.state = keyGone
		}
	}
	for k, st := range s.collide {
		if st == keyStruck {
			delete(s.collide, k)
		}
	}
}

// Left yields the keys live before the mark and not struck
// (emit.StaleKeys); none once the set outgrew its limit. It holds the
// lock while it yields: call it once the read is done. A key yielded is
// valid until the next.
func (s *staleKeys) Left() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, e := range s.ents {
			if e.state == keyLive && !yield(s.bytesOf(e)) {
				return
			}
		}
		for k, st := range s.collide {
			if st == keyLive && !yield([]byte(k)) {
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

// size is the number of keys held (live or struck).
func (s *staleKeys) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.ents {
		if e.state != keyGone {
			n++
		}
	}
	for _, st := range s.collide {
		if st != keyGone {
			n++
		}
	}
	return n
}
