package phases

import (
	"context"
	"math"
	"sync"

	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// State is one table's phase (design.md, "Table phases"), as the
// pipeline holds it in memory and stores it in the offsets topic.
type State struct {
	offsets.Table
	RetryAt int64 // Unix ms when an errored table may be copied again; 0: wait for resnapshot
	// settleAt is the main worker's position when a streaming table was
	// sent back to init: its records up to there may still be in flight,
	// and the copy's read of the topic's live keys must see them.
	SettleAt schema.LSN
}

// View is an immutable snapshot of every table's phase. The main
// worker takes one at each Begin; a change of phase makes a new view.
type View map[string]*State

// Emits reports whether the main worker emits a change to table in a
// transaction whose commit record starts at commit. Only a handed-over
// table is emitted, and under catchup(L) or ready(L) only transactions
// the copy worker did not emit: those with commit LSN >= L. (L is always a
// record boundary, so "commit LSN >= L" is "end LSN > L".)
//
// A relation whose name has no phase but whose oid has one is a table
// renamed after its phase was written (ALTER TABLE … RENAME TO): its
// changes under the new name follow the old name's phase, so nothing
// between the rename and the discovery of the new name is lost.
func (v View) Emits(table string, oid uint32, commit schema.LSN) bool {
	ts, _ := v.StateOf(table, oid)
	return ts != nil && emitsState(ts, oid, commit)
}

// emitsState is emits' rule for the state ts found.
func emitsState(ts *State, oid uint32, commit schema.LSN) bool {
	switch ts.Phase {
	case offsets.PhaseReady, offsets.PhaseCatchup:
		return commit >= schema.LSN(ts.LSN)
	case offsets.PhaseDropped:
		// Its changes before the DROP, which a main worker behind it has
		// yet to decide, are written as before; a table of the same name
		// created since is another relation (and another copy).
		return ts.LSN != 0 && ts.OID != 0 && oid == ts.OID && commit >= schema.LSN(ts.LSN)
	default:
		return false
	}
}

// Renamed returns the phase written for the relation oid under another
// name, or nil. A dropped table's phase is not one: its oid may be a new
// table's since, and a renamed table's old name is dropped once the new
// name has the phase.
func (v View) Renamed(oid uint32) *State {
	if oid == 0 {
		return nil
	}
	for _, ts := range v {
		if ts.OID == oid && ts.Phase != offsets.PhaseDropped {
			return ts
		}
	}
	return nil
}

// emitsChange is emits for the change at lsn: of a table the main worker
// parked at P (errored, ParkedLSN), the changes before P are still
// written. Only a replay from before P brings them again (a restart, a
// reconnect, an aborted Kafka transaction), when the park was stored
// before the records ahead of it were durable.
func (v View) emitsChange(table string, oid uint32, commit, lsn schema.LSN) bool {
	ts, own := v.StateOf(table, oid)
	return EmitsChange(ts, own, oid, commit, lsn)
}

// StateOf returns the state that decides table's changes: its own (own
// true), else the one written for its oid under another name (a rename,
// see emits), else nil.
func (v View) StateOf(table string, oid uint32) (ts *State, own bool) {
	if ts := v[table]; ts != nil {
		return ts, true
	}
	return v.Renamed(oid), false
}

// EmitsChange decides, by the state StateOf found, whether the main
// worker emits the change at lsn of relation oid in the transaction with
// commit LSN commit: View.Emits' rule, and the parked table's.
func EmitsChange(ts *State, own bool, oid uint32, commit, lsn schema.LSN) bool {
	if ts == nil {
		return false
	}
	if own && ts.Phase == offsets.PhaseErrored && ts.ParkedLSN != 0 {
		return lsn < schema.LSN(ts.ParkedLSN) && commit >= schema.LSN(ts.LSN)
	}
	return emitsState(ts, oid, commit)
}

// Rules is the pipeline mutex of the seed: it serialises the main
// worker's progress with every change of phase, so that a handover and the
// main worker's decision for a transaction can never interleave. It owns
// its lock: every change of a table's state goes through its methods.
//
// The main worker calls begin (under the mutex it advances its position M
// to just past the transaction's commit LSN and takes the current view),
// and advance (M moves to the position it has decided everything before:
// a commit's end LSN, the server's WAL end between transactions). A copy
// worker at position P hands over (handover) only if P >= M, under the
// same mutex, after its records up to P are acknowledged and with the new
// phase written to the offsets topic before the view changes. So a
// transaction with commit LSN c is emitted by the copy worker iff c < P and
// by the main worker iff c >= P: exactly once.
type Rules struct {
	mu      sync.Mutex
	mainPos schema.LSN // M: every transaction with commit LSN < M is decided by the main worker
	view    View
	// catchups counts the tables in catchup, and nextPromote is at most the
	// lowest LSN of one (a lower bound: a table that left catchup may have
	// set it), so that begin and advance scan the view only when M may
	// have passed one: a scan per transaction cost O(tables) with
	// thousands of tables handed over and waiting for M.
	catchups    int
	nextPromote schema.LSN
	// fresh holds the tables this run's discovery found after its first
	// pass: created (or published) while mooncdc streams, so the first
	// Relation message of one announces a CREATE (emit: schemachange.go).
	fresh map[string]bool
	// store hands a changed state to the ordered writer of table states
	// (stateWriter.enqueue) and returns the wait for it. It is called with
	// mu held, in the order of the changes, so that the records reach the
	// topic in that order whoever made them (the main worker's promotions
	// and shapes, the snapshotter's phases), and must not block. Nil
	// stores nothing.
	Store func(*State) (wait func(context.Context) error)
}

// Update changes table's state under the mutex and stores it: change
// gets a copy of the current state (a new one named table when it has
// none) and M, the main worker's position as the view changes. It
// returns the new state and the wait for its record.
func (p *Rules) Update(table string, change func(next *State, m schema.LSN)) (*State, func(context.Context) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	next := &State{}
	if cur := p.view[table]; cur != nil {
		*next = *cur
	}
	next.Table.Table = table
	next.ParkedLSN = 0 // only a park sets it, for the errored phase it writes
	change(next, p.mainPos)
	p.setLocked(next)
	return next, p.storeLocked(next)
}

// Note changes table's state in memory only, under the mutex, when it has
// one: for a change whose record another writer already made durable (an
// incremental snapshot's progress, written in the main worker's Kafka
// transaction with the rows it counts: delivery.MainSink.WithUnit), so
// that the states stored later carry it.
func (p *Rules) Note(table string, change func(next *State)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.view[table]
	if cur == nil {
		return
	}
	next := *cur
	next.ParkedLSN = 0
	change(&next)
	p.setLocked(&next)
}

// ResnapshotRequest is the state `mooncdc resnapshot` stores for table
// name to ask for its re-copy at nowMs (Request reads it): init, stamped
// newer than any earlier request of the table (old, its last state)
// whatever the clocks say, of type incremental, the re-copy a Debezium
// user asks for with an execute-snapshot signal, whose type defaults to
// incremental (AbstractSnapshotSignal.java:38, v3.6.1.Final): its rows
// say source.snapshot "incremental".
func ResnapshotRequest(name string, old offsets.Table, nowMs int64) offsets.Table {
	return offsets.Table{
		Table:          name,
		OID:            old.OID,
		Phase:          offsets.PhaseInit,
		UpdatedMs:      nowMs,
		ResnapshotMs:   max(nowMs, old.ResnapshotMs+1),
		ResnapshotType: offsets.ResnapshotIncremental,
	}
}

// IncrementalRequest is the state `mooncdc resnapshot --incremental`
// stores for table name to ask for an incremental snapshot of it at nowMs:
// its phase as it is (a ready table streams on meanwhile), stamped newer
// than any earlier request, with an unplanned progress
// (offsets.IncrementalRequested). A table that is not ready gets
// ResnapshotRequest's init instead: it has no stream to keep, and is
// copied as today.
func IncrementalRequest(name string, old offsets.Table, nowMs int64) offsets.Table {
	if old.Phase != offsets.PhaseReady {
		return ResnapshotRequest(name, old, nowMs)
	}
	t := old
	t.Table = name
	t.UpdatedMs = nowMs
	t.ResnapshotMs = max(nowMs, old.ResnapshotMs+1)
	t.ResnapshotType = offsets.ResnapshotIncremental
	t.Incremental = offsets.IncrementalRequested
	return t
}

// SlotLossRequest is the state on_slot_loss: resnapshot stores for table
// name, whose stored state is old, before it creates the new slot, so
// that a crash at any later point leaves the re-copy asked for: a ready
// table gets an incremental snapshot marked as the repair
// (offsets.IncrementalRepair; it streams on from the new slot meanwhile,
// and its rows are read again from page 0, whatever snapshot of it was
// under way), a table in any other phase (init, copying, catchup,
// errored) the blocking copy from scratch, whose records are marked as an
// initial snapshot's. ok is false for a dropped table: nothing to repair.
func SlotLossRequest(name string, old offsets.Table, nowMs int64) (t offsets.Table, ok bool) {
	switch old.Phase {
	case offsets.PhaseDropped:
		return old, false
	case offsets.PhaseReady:
		t = IncrementalRequest(name, old, nowMs)
		t.ResnapshotFilter, t.Incremental = "", offsets.IncrementalRepair
		return t, true
	}
	t = old
	t.Table = name
	t.Phase, t.LSN, t.ResnapshotFilter, t.ResnapshotType, t.Copy, t.Incremental = offsets.PhaseInit, 0, "", "", nil, ""
	t.UpdatedMs = nowMs
	t.ResnapshotMs = max(nowMs, old.ResnapshotMs+1)
	return t, true
}

// AddedBack is the state of table name when it comes back to the pipeline
// at nowMs (published or selected again) after it left it (old.LeftMs):
// its changes meanwhile are in no record. A ready table, whose topic has
// readers, gets an incremental snapshot marked as a repair, as
// SlotLossRequest's (offsets.IncrementalRepair): it streams on at once
// while its rows are read again in chunks, the keys deleted while it was
// out are tombstoned by the snapshot's stale-key pass, and where the
// incremental path cannot repair the table (refused, failed, updates
// skipped, stale keys past its bound) the blocking copy does. Any other phase is
// copied as a new table is (init, no re-copy markers): it was not
// streamed, or not yet. The left marker is cleared in the same record, so
// that a crash never leaves a table back without its request.
func AddedBack(name string, old offsets.Table, nowMs int64) offsets.Table {
	old.LeftMs = 0
	if old.Phase == offsets.PhaseReady {
		t := IncrementalRequest(name, old, nowMs)
		t.ResnapshotFilter, t.Incremental = "", offsets.IncrementalRepair
		return t
	}
	t := old
	t.Table = name
	t.UpdatedMs = nowMs
	t.Phase, t.LSN, t.Attempts, t.LastError, t.Retry, t.ParkedLSN = offsets.PhaseInit, 0, 0, "", "", 0
	// A copy's progress holds a slot whose stream, like the pipeline's,
	// carried none of the table's changes while it was out: copy anew.
	t.Copy, t.Incremental, t.ResnapshotFilter, t.ResnapshotType = nil, "", "", ""
	return t
}

// Request puts table back to init for a resnapshot request t, without
// storing it (the request is in the offsets topic already), keeping the
// Request's time so that later records carry it forward. A table that was
// streaming settles at M: its records up to there may still be in flight.
func (p *Rules) Request(t offsets.Table) {
	p.mu.Lock()
	defer p.mu.Unlock()
	next := &State{}
	if cur := p.view[t.Table]; cur != nil {
		*next = *cur
	} else {
		next.Table = t
	}
	next.ResnapshotMs, next.ResnapshotFilter, next.ResnapshotType = t.ResnapshotMs, t.ResnapshotFilter, t.ResnapshotType
	// A copy from scratch makes any incremental snapshot of the table moot.
	next.Incremental = ""
	if next.Phase == offsets.PhaseReady || next.Phase == offsets.PhaseCatchup {
		next.SettleAt = p.mainPos
	}
	next.Phase, next.LSN, next.Attempts, next.LastError, next.Retry, next.RetryAt = offsets.PhaseInit, 0, 0, "", "", 0
	p.setLocked(next)
}

// Inherit gives table the phase of old, a table renamed to it, as the
// view holds old now (a catchup may have become ready), stores it and
// waits for the record (at most until ctx ends).
func (p *Rules) Inherit(ctx context.Context, table string, old *State) *State {
	next, wait := p.Update(table, func(ts *State, _ schema.LSN) {
		if cur := p.view[old.Table.Table]; cur != nil {
			old = cur
		}
		ts.OID, ts.Phase, ts.LSN, ts.Shape = old.OID, old.Phase, old.LSN, old.Shape
	})
	_ = wait(ctx)
	return next
}

// Handover ends a copy of ts's table at P = pos (seed: handover), under
// the mutex. It returns false when P < M (the main worker is ahead: keep
// catching up). Else it makes the next state, ready(P) if P = M, else
// catchup(P), and has checkpoint store it durably with the copy's records
// (the copy sink's handover: every record up to P acknowledged, and the
// phase stored after them or with them); only when that succeeds does the
// view change, so the main worker sees the new phase only once it is
// durable. checkpoint runs under the mutex: the main worker waits
// meanwhile and cannot move past P, so a copy worker that reaches it
// hands over even under a steady stream of writes.
//
// handedOver, when not nil, runs after the view changed, still under the
// mutex (the copy ends its progress entry there, and the handed-over hook
// runs there, as before the seam).
func (p *Rules) Handover(ts *State, pos schema.LSN, checkpoint func(next *State) error,
	handedOver func(next *State, m schema.LSN)) (next *State, m schema.LSN, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m = p.mainPos
	if pos < m {
		return nil, m, nil
	}
	next = &State{Table: ts.Table}
	if cur := p.view[ts.Table.Table]; cur != nil {
		next.Shape = cur.Shape // the main worker's, written while the copy ran
		// The table left the pipeline while it was copied: it comes back
		// with its rows read again (discovery: leave.go).
		next.LeftMs, next.PubRel = cur.LeftMs, cur.PubRel
	}
	next.Phase = offsets.PhaseCatchup
	if pos == m {
		next.Phase = offsets.PhaseReady
	}
	next.LSN = uint64(pos)
	next.Attempts, next.LastError, next.Retry = 0, "", ""
	// A requested re-copy is done: a later copy of the table (a retry
	// after a crash, a slot-loss repair) copies every row again, and is
	// no re-copy a signal asked for (its markers, snapshot: snapshotrun.go).
	next.ResnapshotFilter, next.ResnapshotType = "", ""
	next.Copy = nil // the copy's progress ends with it; its slot is dropped (snapshot: copy_resume.go)
	if err := checkpoint(next); err != nil {
		return nil, m, err
	}
	p.setLocked(next)
	if handedOver != nil {
		handedOver(next, m)
	}
	return next, m, nil
}

// SetShape records the shape fingerprint of table (or of the table
// renamed from it, by oid), stores it and returns its new state, or nil
// when it has no phase or already has that shape.
func (p *Rules) SetShape(table string, oid uint32, fp string) *State {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.view[table]
	if cur == nil {
		cur = p.view.Renamed(oid)
	}
	if cur == nil || cur.Shape == fp {
		return nil
	}
	next := *cur
	next.Shape = fp
	p.setLocked(&next)
	p.storeLocked(&next)
	return &next
}

// storeLocked stores ts (see store) and returns the wait for it; p.mu
// must be held.
func (p *Rules) storeLocked(ts *State) func(context.Context) error {
	if p.Store == nil {
		return func(context.Context) error { return nil }
	}
	return p.Store(ts)
}

// MarkFresh records that discovery found table after its first pass.
func (p *Rules) MarkFresh(table string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fresh == nil {
		p.fresh = map[string]bool{}
	}
	p.fresh[table] = true
}

// IsFresh reports whether discovery found table after its first pass.
func (p *Rules) IsFresh(table string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fresh[table]
}

func New(start schema.LSN, tables map[string]*State) *Rules {
	p := &Rules{mainPos: start, view: View{}}
	for name, ts := range tables {
		p.view[name] = ts
		if ts.Phase == offsets.PhaseCatchup {
			p.catchingUp(schema.LSN(ts.LSN))
		}
	}
	return p
}

// Begin records that the main worker is deciding the transaction with
// commit LSN commit (M moves past it), and returns the view to decide it with, and the
// tables that moved from catchup to ready (stored).
func (p *Rules) Begin(commit schema.LSN) (View, []*State) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if commit+1 > p.mainPos {
		p.mainPos = commit + 1
	}
	moved := p.promoteLocked()
	return p.view, moved
}

// Advance records that the main worker decided everything before pos (a
// commit's end LSN, or the server's WAL end between transactions).
func (p *Rules) Advance(pos schema.LSN) []*State {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pos > p.mainPos {
		p.mainPos = pos
	}
	return p.promoteLocked()
}

// promoteLocked moves catchup(L) tables to ready(L) once the main worker is
// past L, and stores them.
func (p *Rules) promoteLocked() []*State {
	if p.catchups == 0 || p.mainPos < p.nextPromote {
		return nil
	}
	var moved []*State
	next := make(View, len(p.view))
	lowest := schema.LSN(math.MaxUint64)
	for name, ts := range p.view {
		if ts.Phase == offsets.PhaseCatchup {
			if p.mainPos >= schema.LSN(ts.LSN) {
				c := *ts
				c.Phase = offsets.PhaseReady
				ts = &c
				moved = append(moved, ts)
				p.catchups--
			} else {
				lowest = min(lowest, schema.LSN(ts.LSN))
			}
		}
		next[name] = ts
	}
	p.nextPromote = lowest
	if moved != nil {
		p.view = next
	}
	for _, ts := range moved {
		p.storeLocked(ts) // not waited for: catchup(L) and ready(L) mean the same to a main worker past L
	}
	return moved
}

// WithView runs f with the current view, under the mutex: nothing changes
// a phase meanwhile (a handover also ends its copy's progress entry under
// it, so Status reads both consistently).
func (p *Rules) WithView(f func(View)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p.view)
}

// Get returns table's state, or nil.
func (p *Rules) Get(table string) *State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.view[table]
}

// All returns the current view.
func (p *Rules) All() View {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.view
}

// setLocked replaces table's state; p.mu must be held.
func (p *Rules) setLocked(ts *State) {
	next := make(View, len(p.view)+1)
	for k, v := range p.view {
		next[k] = v
	}
	if old := next[ts.Table.Table]; old != nil && old.Phase == offsets.PhaseCatchup {
		p.catchups--
	}
	if ts.Phase == offsets.PhaseCatchup {
		p.catchingUp(schema.LSN(ts.LSN))
	}
	next[ts.Table.Table] = ts
	p.view = next
}

// catchingUp counts a table in catchup at lsn; p.mu must be held (or p
// not yet shared).
func (p *Rules) catchingUp(lsn schema.LSN) {
	if p.catchups == 0 || lsn < p.nextPromote {
		p.nextPromote = lsn
	}
	p.catchups++
}
