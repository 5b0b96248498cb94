package stream

import (
	"errors"
	"fmt"

	"github.com/jackc/pglogrepl"

	"github.com/mooncdc/mooncdc/schema"
)

// Handler receives the decoded stream, in WAL commit order. Calls come from
// the session's goroutine, one at a time. A *schema.Change (and the tuples
// and bytes it holds) is valid only during the call: the decoder reuses it.
// An error returned by a Handler stops the session and is returned by Run.
type Handler interface {
	// Begin opens a transaction. tx stays valid until Commit returns; its
	// EndLSN is set just before Commit.
	Begin(tx *schema.Tx) error
	// Change delivers one change of the open transaction, or a
	// non-transactional logical message (ch.Tx == nil).
	Change(ch *schema.Change) error
	// Commit closes the open transaction.
	Commit(tx *schema.Tx) error
}

// ProtocolError reports pgoutput bytes that cannot be decoded: a malformed
// message, or one that does not fit the stream so far (a change for a
// relation never described, a change outside a transaction).
type ProtocolError struct {
	LSN schema.LSN
	Msg string
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("pgoutput protocol error at LSN %s: %s", e.LSN, e.Msg)
}

// Decoder turns pgoutput messages into changes. It holds the session's
// relation cache and the open transaction. It does no I/O; it is not safe
// for concurrent use.
type Decoder struct {
	relations  map[uint32]*schema.Relation
	tx         schema.Tx
	inTx       bool
	prevCommit schema.LSN
	lastEnd    schema.LSN
	seq        int
	tableSeq   map[uint32]int

	// reused per call, see Handler
	change  schema.Change
	before  schema.Tuple
	after   schema.Tuple
	message schema.Message
}

// NewDecoder returns a decoder with an empty relation cache.
func NewDecoder() *Decoder {
	return &Decoder{relations: make(map[uint32]*schema.Relation), tableSeq: make(map[uint32]int)}
}

// InTx reports whether a transaction is open (Begin seen, Commit not yet).
func (d *Decoder) InTx() bool { return d.inTx }

// LastEnd returns the end LSN of the last committed transaction decoded.
func (d *Decoder) LastEnd() schema.LSN { return d.lastEnd }

// Decode decodes one pgoutput message whose XLogData started at walStart,
// and calls h for what it carries. A malformed message is a *ProtocolError,
// never a panic.
func (d *Decoder) Decode(walStart schema.LSN, data []byte, h Handler) error {
	if len(data) == 0 {
		return &ProtocolError{LSN: walStart, Msg: "empty message"}
	}
	msg, err := parse(data)
	if err != nil {
		return &ProtocolError{LSN: walStart, Msg: fmt.Sprintf("message %q: %v", data[0], err)}
	}
	switch m := msg.(type) {
	case *pglogrepl.BeginMessage:
		if d.inTx {
			return &ProtocolError{LSN: walStart, Msg: "Begin inside an open transaction"}
		}
		d.tx = schema.Tx{Xid: m.Xid, CommitLSN: schema.LSN(m.FinalLSN), BeginLSN: walStart, CommitTime: m.CommitTime, PrevCommitLSN: d.prevCommit}
		d.inTx = true
		d.seq = 0
		clear(d.tableSeq)
		return h.Begin(&d.tx)
	case *pglogrepl.CommitMessage:
		if !d.inTx {
			return &ProtocolError{LSN: walStart, Msg: "Commit outside a transaction"}
		}
		d.tx.EndLSN = schema.LSN(m.TransactionEndLSN)
		d.inTx = false
		d.prevCommit = d.tx.CommitLSN
		d.lastEnd = d.tx.EndLSN
		return h.Commit(&d.tx)
	case *pglogrepl.RelationMessage:
		return d.relation(walStart, m)
	case *pglogrepl.InsertMessage:
		rel, err := d.rowRelation(walStart, m.RelationID)
		if err != nil {
			return err
		}
		after, err := d.tuple(walStart, rel, m.Tuple, d.after)
		if err != nil {
			return err
		}
		d.after = after
		return d.emit(h, walStart, schema.OpCreate, rel, nil, after)
	case *pglogrepl.UpdateMessage:
		rel, err := d.rowRelation(walStart, m.RelationID)
		if err != nil {
			return err
		}
		var before schema.Tuple
		if m.OldTuple != nil {
			if before, err = d.tuple(walStart, rel, m.OldTuple, d.before); err != nil {
				return err
			}
			d.before = before
		}
		after, err := d.tuple(walStart, rel, m.NewTuple, d.after)
		if err != nil {
			return err
		}
		d.after = after
		return d.emit(h, walStart, schema.OpUpdate, rel, before, after)
	case *pglogrepl.DeleteMessage:
		rel, err := d.rowRelation(walStart, m.RelationID)
		if err != nil {
			return err
		}
		before, err := d.tuple(walStart, rel, m.OldTuple, d.before)
		if err != nil {
			return err
		}
		d.before = before
		return d.emit(h, walStart, schema.OpDelete, rel, before, nil)
	case *pglogrepl.TruncateMessage:
		if !d.inTx {
			return &ProtocolError{LSN: walStart, Msg: "Truncate outside a transaction"}
		}
		for _, oid := range m.RelationIDs {
			rel, err := d.rowRelation(walStart, oid)
			if err != nil {
				return err
			}
			d.change = schema.Change{
				Op: schema.OpTruncate, Relation: rel,
				Cascade:         m.Option&pglogrepl.TruncateOptionCascade != 0,
				RestartIdentity: m.Option&pglogrepl.TruncateOptionRestartIdentity != 0,
			}
			if err := d.deliver(h, walStart, rel.OID); err != nil {
				return err
			}
		}
		return nil
	case *pglogrepl.LogicalDecodingMessage:
		// Content aliases the receive buffer; the Change is only valid during
		// the Handler call, so no copy is needed.
		d.message = schema.Message{Transactional: m.Transactional, Prefix: m.Prefix, Content: m.Content}
		d.change = schema.Change{Op: schema.OpMessage, Message: &d.message}
		if m.Transactional {
			if !d.inTx {
				return &ProtocolError{LSN: walStart, Msg: "transactional Message outside a transaction"}
			}
			return d.deliver(h, schema.LSN(m.LSN), 0)
		}
		d.change.LSN = schema.LSN(m.LSN)
		if d.inTx {
			// Not expected without streaming; keep the open transaction's
			// numbering untouched.
			return &ProtocolError{LSN: walStart, Msg: "non-transactional Message inside a transaction"}
		}
		return h.Change(&d.change)
	case *pglogrepl.TypeMessage, *pglogrepl.OriginMessage:
		// Type names matter for custom types (a later mapping); the origin is
		// not part of Debezium's record.
		return nil
	default:
		return &ProtocolError{LSN: walStart, Msg: fmt.Sprintf("unexpected message %T", msg)}
	}
}

// parse wraps pglogrepl.Parse: the library indexes its input without
// checking lengths, so a malformed message would panic; here it is an error.
func parse(data []byte) (m pglogrepl.Message, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("truncated or malformed message (%v)", r)
		}
	}()
	m, err = pglogrepl.Parse(data)
	if err == nil && m == nil {
		err = errors.New("unknown message type")
	}
	return m, err
}

func (d *Decoder) relation(walStart schema.LSN, m *pglogrepl.RelationMessage) error {
	if int(m.ColumnNum) != len(m.Columns) {
		return &ProtocolError{LSN: walStart, Msg: "relation column count mismatch"}
	}
	rel := &schema.Relation{
		OID:             m.RelationID,
		Schema:          m.Namespace,
		Table:           m.RelationName,
		ReplicaIdentity: m.ReplicaIdentity,
		Columns:         make([]schema.Column, len(m.Columns)),
	}
	if rel.Schema == "" {
		rel.Schema = "pg_catalog"
	}
	for i, c := range m.Columns {
		rel.Columns[i] = schema.Column{Name: c.Name, TypeOID: c.DataType, TypeMod: c.TypeModifier, Key: c.Flags&1 != 0}
		if c.Flags&1 != 0 {
			rel.KeyIndexes = append(rel.KeyIndexes, i)
		}
	}
	d.relations[rel.OID] = rel
	return nil
}

func (d *Decoder) rowRelation(walStart schema.LSN, oid uint32) (*schema.Relation, error) {
	rel := d.relations[oid]
	if rel == nil {
		return nil, &ProtocolError{LSN: walStart, Msg: fmt.Sprintf("change for relation %d before its Relation message", oid)}
	}
	return rel, nil
}

func (d *Decoder) tuple(walStart schema.LSN, rel *schema.Relation, td *pglogrepl.TupleData, buf schema.Tuple) (schema.Tuple, error) {
	if td == nil {
		return nil, &ProtocolError{LSN: walStart, Msg: "missing tuple"}
	}
	if len(td.Columns) != len(rel.Columns) {
		return nil, &ProtocolError{LSN: walStart, Msg: fmt.Sprintf("tuple of %s has %d columns, relation has %d", rel.QualifiedName(), len(td.Columns), len(rel.Columns))}
	}
	buf = buf[:0]
	for _, c := range td.Columns {
		switch c.DataType {
		case pglogrepl.TupleDataTypeNull:
			buf = append(buf, schema.Value{Kind: schema.ValueNull})
		case pglogrepl.TupleDataTypeToast:
			buf = append(buf, schema.Value{Kind: schema.ValueUnchangedToast})
		case pglogrepl.TupleDataTypeText:
			buf = append(buf, schema.Value{Kind: schema.ValueText, Data: c.Data})
		default:
			// mooncdc never asks for binary tuples.
			return nil, &ProtocolError{LSN: walStart, Msg: fmt.Sprintf("unexpected tuple data kind %q", c.DataType)}
		}
	}
	return buf, nil
}

func (d *Decoder) emit(h Handler, walStart schema.LSN, op schema.Op, rel *schema.Relation, before, after schema.Tuple) error {
	if !d.inTx {
		return &ProtocolError{LSN: walStart, Msg: "row change outside a transaction"}
	}
	d.change = schema.Change{Op: op, Relation: rel, Before: before, After: after}
	return d.deliver(h, walStart, rel.OID)
}

// deliver numbers d.change within the open transaction and hands it over.
func (d *Decoder) deliver(h Handler, lsn schema.LSN, oid uint32) error {
	d.change.Tx = &d.tx
	d.change.LSN = lsn
	d.change.Seq = d.seq
	d.seq++
	if oid != 0 {
		d.change.TableSeq = d.tableSeq[oid]
		d.tableSeq[oid]++
	}
	return h.Change(&d.change)
}
