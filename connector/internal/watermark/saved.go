package watermark

import (
	"errors"
	"fmt"
)

// Saved is the part of a Tracker's log that a restart needs: the streamed
// transactions no snapshot has yet shown visible, with their keys. The
// pipeline's offsets record keeps it beside the durable LSN D, so that a
// new session, whose stream starts at D, knows the transactions before D
// that a later snapshot may still not see (a commit waiting for a
// synchronous standby); the transactions after D it streams again.
type Saved struct {
	Entries []SavedEntry `json:"entries,omitempty"`
	// LostMax is set when entries were forgotten unproven: the greatest
	// of their xids (windows wait for a snapshot whose xmin passes it).
	LostMax *uint32 `json:"lost_max,omitempty"`
}

// SavedEntry is one logged transaction's changes to one table. Keys are
// the encoded record keys (JSON or Avro bytes, base64 in JSON); Unknown
// marks an entry without them.
type SavedEntry struct {
	Xid     uint32   `json:"xid"`
	Table   uint32   `json:"table"`
	Keys    [][]byte `json:"keys,omitempty"`
	Unknown string   `json:"unknown,omitempty"`
}

// Save returns the log, with at most maxKeys keys in all: an entry that
// would pass it is saved without its keys (a window its transaction is
// invisible to is then refused until it is visible, never wrong). Call it
// at a transaction boundary, at or after the durable LSN it is stored
// with.
func (t *Tracker[R]) Save(maxKeys int) Saved {
	var out Saved
	if t.lost {
		m := t.lostMax
		out.LostMax = &m
	}
	n := 0
	for _, e := range t.log {
		se := SavedEntry{Xid: e.xid, Table: e.table, Unknown: e.unknown}
		if se.Unknown == "" && n+len(e.keys) > maxKeys {
			se.Unknown = "too many keys to save"
		}
		if se.Unknown == "" {
			for k := range e.keys {
				se.Keys = append(se.Keys, []byte(k))
			}
			n += len(e.keys)
		}
		out.Entries = append(out.Entries, se)
	}
	return out
}

// Restore loads a saved log into a tracker that has seen nothing yet (a
// new session, before its first Begin).
func (t *Tracker[R]) Restore(s Saved) error {
	if len(t.log) > 0 || t.inTxn || len(t.windows) > 0 {
		return errors.New("restore into a tracker that is in use")
	}
	for _, se := range s.Entries {
		if se.Xid < firstNormalXid {
			return fmt.Errorf("restore: saved transaction %d: %w", se.Xid, ErrSpecialXid)
		}
		e := &entry{xid: se.Xid, table: se.Table, unknown: se.Unknown}
		if e.unknown == "" {
			e.keys = make(map[Key]struct{}, len(se.Keys))
			for _, k := range se.Keys {
				e.keys[Key(k)] = struct{}{}
			}
		} else if len(se.Keys) > 0 {
			return fmt.Errorf("restore: saved transaction %d of table %d has keys and is marked unknown", se.Xid, se.Table)
		}
		t.log = append(t.log, e)
		t.held += 1 + len(e.keys)
	}
	if s.LostMax != nil {
		t.lost, t.lostMax = true, *s.LostMax
	}
	t.evict()
	return nil
}
