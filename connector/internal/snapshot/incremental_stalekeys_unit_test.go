package snapshot

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The stale keys an incremental snapshot holds while its chunks are read
// (incremental_stalekeys.go), without Kafka: the read and the main
// worker's strikes in every order. The integration test is
// TestIncrementalSnapshotOnAnIdleServerTombstonesStaleKeys
// (connector/internal/it/incremental).

// TestStaleKeysLeavesOnlyKeysLiveBeforeTheMarkAndNeverWritten: a key is
// left (tombstoned) only when its last record before the mark is not a
// tombstone and the main worker wrote it at no point since the strikes
// began, whether its strike came before the read met it, while, or after.
func TestStaleKeysLeavesOnlyKeysLiveBeforeTheMarkAndNeverWritten(t *testing.T) {
	// Steps: "r k" a record of k before the mark, "t k" a tombstone of k
	// before the mark, "p k" a record of k at or past the mark, "s k" a
	// strike (the main worker wrote k), "done" the read's end.
	cases := []struct {
		name  string
		steps string
		left  string
	}{
		{"a key live before the mark, never written since", "r a; done", "a"},
		{"a key deleted before the mark", "r a; t a; done", ""},
		{"deleted, then written again before the mark", "r a; t a; r a; done", "a"},
		{"struck after the read met it", "r a; s a; done", ""},
		{"struck after the read ended", "r a; done; s a", ""},
		// The read is in flight when the stream writes the key: the
		// strike must outlive the read's later meeting with its records.
		{"struck before the read met it", "s a; r a; done", ""},
		{"struck before the read met it, then a tombstone and a record", "s a; r a; t a; r a; done", ""},
		{"a record past the mark (an earlier run wrote it)", "r a; p a; done", ""},
		{"a record past the mark only", "p a; done", ""},
		{"strikes of keys the topic never had", "s x; done; s y", ""},
		{"others untouched", "r a; r b; r c; s b; t c; done", "a"},
	}
	for _, c := range cases {
		for _, collide := range []bool{false, true} {
			name := c.name
			if collide {
				// Every key's hash the same: all but the first held
				// beside the index (staleKeys.collide).
				name += "/colliding hashes"
			}
			t.Run(name, func(t *testing.T) {
				s := newStaleKeys(1 << 20)
				if collide {
					s.hash = func([]byte) uint64 { return 7 }
				}
				testStaleSteps(t, s, c.steps, c.left)
			})
		}
	}
}

// testStaleSteps runs steps on s and checks the keys it leaves.
func testStaleSteps(t *testing.T, s *staleKeys, steps, want string) {
	t.Helper()
	for _, step := range strings.Split(steps, "; ") {
		op, key, _ := strings.Cut(step, " ")
		k := []byte(key)
		switch op {
		case "r":
			s.see(k, false, false)
		case "t":
			s.see(k, true, false)
		case "p":
			s.see(k, false, true)
		case "s":
			s.Strike(k)
		case "done":
			s.readDone()
		default:
			t.Fatalf("step %q", step)
		}
	}
	var left []string
	for k := range s.Left() {
		left = append(left, string(k))
	}
	slices.Sort(left)
	if got := strings.Join(left, " "); got != want {
		t.Fatalf("left %q, want %q", got, want)
	}
	if s.size() != len(left) {
		t.Fatalf("%d entries held after the read, want %d (the struck ones go)", s.size(), len(left))
	}
}

// TestStaleKeysOutgrowingTheirBoundLeaveNothing: past its bound the set
// is dropped and says so (outgrown): nothing is tombstoned, rather than a
// part of the keys (the caller logs it and shows it in status).
func TestStaleKeysOutgrowingTheirBoundLeaveNothing(t *testing.T) {
	key := []byte(`{"id":1234567}`)
	s := newStaleKeys(10 * staleKeyBytes(key))
	for i := range 10 {
		s.see(fmt.Appendf(nil, `{"id":%07d}`, i), false, false)
	}
	if s.outgrown() {
		t.Fatal("outgrown at its bound")
	}
	s.Strike([]byte(`{"id":9999999}`))
	if !s.outgrown() {
		t.Fatal("an eleventh entry (a strike held while the read goes on) did not outgrow a bound of ten")
	}
	s.see(key, false, false)
	s.readDone()
	for k := range s.Left() {
		t.Fatalf("key %s left by an outgrown set", k)
	}
}

// TestStaleKeysCostPerKey: what a held key costs in memory is within the
// estimate the bound counts (staleKeyBytes), for JSON keys of one bigint
// column as the bench's table has; docs/incremental-snapshots.md quotes it.
func TestStaleKeysCostPerKey(t *testing.T) {
	const n = 200_000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, `{"id":%d}`, 1_000_000+i) // 14 bytes
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := newStaleKeys(1 << 40)
	for _, k := range keys {
		s.see(k, false, false)
	}
	s.readDone()
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	est := float64(staleKeyBytes(keys[0]))
	t.Logf("%.1f bytes per 14-byte key held (the bound counts %.0f)", per, est)
	if per > est*1.25 {
		t.Fatalf("a held key costs %.1f bytes, the bound counts %.0f: raise staleKeyOverhead", per, est)
	}
	runtime.KeepAlive(s)
}
