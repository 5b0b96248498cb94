package connector

import (
	"sync"

	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// tableState is one table's phase (design.md, "Table phases"), as the
// pipeline holds it in memory and stores it in the offsets topic.
type tableState struct {
	offsets.Table
	retryAt int64 // Unix ms when an errored table may be copied again; 0: wait for resnapshot
	// settleAt is the main worker's position when a streaming table was
	// sent back to init: its records up to there may still be in flight,
	// and the copy's read of the topic's live keys must see them.
	settleAt schema.LSN
}

// phaseView is an immutable snapshot of every table's phase. The main
// worker takes one at each Begin; a change of phase makes a new view.
type phaseView map[string]*tableState

// emits reports whether the main worker emits a change to table in a
// transaction whose commit record starts at commit. Only a handed-over
// table is emitted, and under catchup(L) or ready(L) only transactions
// the copy worker did not emit: those with commit LSN >= L. (L is always a
// record boundary, so "commit LSN >= L" is "end LSN > L".)
//
// A relation whose name has no phase but whose oid has one is a table
// renamed after its phase was written (ALTER TABLE … RENAME TO): its
// changes under the new name follow the old name's phase, so nothing
// between the rename and the discovery of the new name is lost.
func (v phaseView) emits(table string, oid uint32, commit schema.LSN) bool {
	ts := v[table]
	if ts == nil {
		ts = v.renamed(oid)
	}
	if ts == nil {
		return false
	}
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

// renamed returns the phase written for the relation oid under another
// name, or nil. A dropped table's phase is not one: its oid may be a new
// table's since, and a renamed table's old name is dropped once the new
// name has the phase.
func (v phaseView) renamed(oid uint32) *tableState {
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
func (v phaseView) emitsChange(table string, oid uint32, commit, lsn schema.LSN) bool {
	if ts := v[table]; ts != nil && ts.Phase == offsets.PhaseErrored && ts.ParkedLSN != 0 {
		return lsn < schema.LSN(ts.ParkedLSN) && commit >= schema.LSN(ts.LSN)
	}
	return v.emits(table, oid, commit)
}

// phases is the pipeline mutex of the seed: it serialises the main
// worker's progress with every change of phase, so that a handover and the
// main worker's decision for a transaction can never interleave.
//
// The main worker calls begin (under the mutex it advances its position D
// to just past the transaction's commit LSN and takes the current view),
// commit and idle (D moves to the position it has decided everything
// before). A copy worker at position P hands over only if P >= D, under
// the same mutex, after its records up to P are acknowledged and with the
// new phase written to the offsets topic before the view changes. So a
// transaction with commit LSN c is emitted by the copy worker iff c < P and
// by the main worker iff c >= P: exactly once.
type phases struct {
	mu       sync.Mutex
	mainPos  schema.LSN // D: every transaction with commit LSN < D is decided by the main worker
	view     phaseView
	catchups int // tables in catchup, so begin does not scan when there are none
	// fresh holds the tables this run's discovery found after its first
	// pass: created (or published) while mooncdc streams, so the first
	// Relation message of one announces a CREATE (schemachange.go).
	fresh map[string]bool
	// store hands a changed state to the offsets topic's producer; it is
	// called with mu held, in the order of the changes, so that the
	// records reach the topic in that order whoever made them (the main
	// worker's promotions and shapes, the snapshotter's phases), and
	// must not block (Pipeline.enqueueTable). Nil stores nothing.
	store func(*tableState)
}

// setShape records the shape fingerprint of table (or of the table
// renamed from it, by oid), stores it and returns its new state, or nil
// when it has no phase or already has that shape.
func (p *phases) setShape(table string, oid uint32, fp string) *tableState {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.view[table]
	if cur == nil {
		cur = p.view.renamed(oid)
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

// storeLocked stores ts (see store); p.mu must be held.
func (p *phases) storeLocked(ts *tableState) {
	if p.store != nil {
		p.store(ts)
	}
}

// markFresh records that discovery found table after its first pass.
func (p *phases) markFresh(table string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fresh == nil {
		p.fresh = map[string]bool{}
	}
	p.fresh[table] = true
}

// isFresh reports whether discovery found table after its first pass.
func (p *phases) isFresh(table string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fresh[table]
}

func newPhases(start schema.LSN, tables map[string]*tableState) *phases {
	p := &phases{mainPos: start, view: phaseView{}}
	for name, ts := range tables {
		p.view[name] = ts
		if ts.Phase == offsets.PhaseCatchup {
			p.catchups++
		}
	}
	return p
}

// begin records that the main worker is deciding the transaction with
// commit LSN commit, and returns the view to decide it with, and the
// tables that moved from catchup to ready (stored).
func (p *phases) begin(commit schema.LSN) (phaseView, []*tableState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if commit+1 > p.mainPos {
		p.mainPos = commit + 1
	}
	moved := p.promoteLocked()
	return p.view, moved
}

// advance records that the main worker decided everything before pos (a
// commit's end LSN, or the server's WAL end between transactions).
func (p *phases) advance(pos schema.LSN) []*tableState {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pos > p.mainPos {
		p.mainPos = pos
	}
	return p.promoteLocked()
}

// promoteLocked moves catchup(L) tables to ready(L) once the main worker is
// past L, and stores them.
func (p *phases) promoteLocked() []*tableState {
	if p.catchups == 0 {
		return nil
	}
	var moved []*tableState
	next := make(phaseView, len(p.view))
	for name, ts := range p.view {
		if ts.Phase == offsets.PhaseCatchup && p.mainPos >= schema.LSN(ts.LSN) {
			c := *ts
			c.Phase = offsets.PhaseReady
			ts = &c
			moved = append(moved, ts)
			p.catchups--
		}
		next[name] = ts
	}
	if moved != nil {
		p.view = next
	}
	for _, ts := range moved {
		p.storeLocked(ts)
	}
	return moved
}

// get returns table's state, or nil.
func (p *phases) get(table string) *tableState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.view[table]
}

// all returns the current view.
func (p *phases) all() phaseView {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.view
}

// setLocked replaces table's state; p.mu must be held.
func (p *phases) setLocked(ts *tableState) {
	next := make(phaseView, len(p.view)+1)
	for k, v := range p.view {
		next[k] = v
	}
	if old := next[ts.Table.Table]; old != nil && old.Phase == offsets.PhaseCatchup {
		p.catchups--
	}
	if ts.Phase == offsets.PhaseCatchup {
		p.catchups++
	}
	next[ts.Table.Table] = ts
	p.view = next
}
