package stream

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/schema"
)

// msg builds pgoutput messages for tests.
type msg []byte

func (m msg) u8(v byte) msg    { return append(m, v) }
func (m msg) u16(v uint16) msg { return binary.BigEndian.AppendUint16(m, v) }
func (m msg) u32(v uint32) msg { return binary.BigEndian.AppendUint32(m, v) }
func (m msg) u64(v uint64) msg { return binary.BigEndian.AppendUint64(m, v) }
func (m msg) str(s string) msg { return append(append(m, s...), 0) }

func beginMsg(final uint64, xid uint32) []byte {
	return msg{'B'}.u64(final).u64(uint64(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC).Sub(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).Microseconds())).u32(xid)
}

func commitMsg(commit, end uint64) []byte {
	return msg{'C'}.u8(0).u64(commit).u64(end).u64(0)
}

func relationMsg(oid uint32, ns, name string, ident byte, cols ...schema.Column) []byte {
	m := msg{'R'}.u32(oid).str(ns).str(name).u8(ident).u16(uint16(len(cols)))
	for _, c := range cols {
		var flags byte
		if c.Key {
			flags = 1
		}
		m = m.u8(flags).str(c.Name).u32(c.TypeOID).u32(uint32(c.TypeMod))
	}
	return m
}

// tuple encodes values: nil → 'n', "\x00toast" → 'u', else text.
func tuple(m msg, vals ...*string) msg {
	m = m.u16(uint16(len(vals)))
	for _, v := range vals {
		switch {
		case v == nil:
			m = m.u8('n')
		case *v == "\x00toast":
			m = m.u8('u')
		default:
			m = m.u8('t').u32(uint32(len(*v)))
			m = append(m, *v...)
		}
	}
	return m
}

func s(v string) *string { return &v }

type recorded struct {
	op            schema.Op
	table         string
	before, after []string
	seq, tableSeq int
	lsn           schema.LSN
	xid           uint32
}

type recorder struct {
	begins, commits []schema.Tx
	changes         []recorded
}

func (r *recorder) Begin(tx *schema.Tx) error  { r.begins = append(r.begins, *tx); return nil }
func (r *recorder) Commit(tx *schema.Tx) error { r.commits = append(r.commits, *tx); return nil }
func (r *recorder) Change(ch *schema.Change) error {
	rc := recorded{op: ch.Op, seq: ch.Seq, tableSeq: ch.TableSeq, lsn: ch.LSN}
	if ch.Tx != nil {
		rc.xid = ch.Tx.Xid
	}
	if ch.Relation != nil {
		rc.table = ch.Relation.QualifiedName()
	}
	if ch.Message != nil {
		rc.table = "message:" + ch.Message.Prefix + ":" + string(ch.Message.Content)
	}
	rc.before, rc.after = flat(ch.Before), flat(ch.After)
	r.changes = append(r.changes, rc)
	return nil
}

func flat(t schema.Tuple) []string {
	if t == nil {
		return nil
	}
	out := make([]string, len(t))
	for i, v := range t {
		switch v.Kind {
		case schema.ValueNull:
			out[i] = "NULL"
		case schema.ValueUnchangedToast:
			out[i] = "TOAST"
		default:
			out[i] = string(v.Data)
		}
	}
	return out
}

var ordersCols = []schema.Column{
	{Name: "id", TypeOID: 20, TypeMod: -1, Key: true},
	{Name: "note", TypeOID: 25, TypeMod: -1},
}

func TestDecoderTransactionRoundTrip(t *testing.T) {
	d := NewDecoder()
	r := &recorder{}
	steps := []struct {
		lsn  schema.LSN
		data []byte
	}{
		{100, beginMsg(500, 7)},
		{100, relationMsg(16384, "public", "orders", 'd', ordersCols...)},
		{110, tuple(msg{'I'}.u32(16384).u8('N'), s("1"), s("hello"))},
		{120, tuple(tuple(msg{'U'}.u32(16384).u8('K'), s("1"), nil).u8('N'), s("2"), s("\x00toast"))},
		{130, tuple(msg{'D'}.u32(16384).u8('K'), s("2"), nil)},
		{140, msg{'T'}.u32(1).u8(1).u32(16384)},
		{150, msg{'M'}.u8(1).u64(150).str("app").u32(2).u8('h').u8('i')},
		{500, commitMsg(500, 510)},
		{600, msg{'M'}.u8(0).u64(600).str("free").u32(1).u8('x')},
	}
	for _, st := range steps {
		if err := d.Decode(st.lsn, st.data, r); err != nil {
			t.Fatalf("decode at %s: %v", st.lsn, err)
		}
	}
	if len(r.begins) != 1 || r.begins[0].Xid != 7 || r.begins[0].CommitLSN != 500 {
		t.Fatalf("begin: %+v", r.begins)
	}
	if len(r.commits) != 1 || r.commits[0].EndLSN != 510 {
		t.Fatalf("commit: %+v", r.commits)
	}
	want := []recorded{
		{op: 'c', table: "public.orders", after: []string{"1", "hello"}, seq: 0, tableSeq: 0, lsn: 110, xid: 7},
		{op: 'u', table: "public.orders", before: []string{"1", "NULL"}, after: []string{"2", "TOAST"}, seq: 1, tableSeq: 1, lsn: 120, xid: 7},
		{op: 'd', table: "public.orders", before: []string{"2", "NULL"}, seq: 2, tableSeq: 2, lsn: 130, xid: 7},
		{op: 't', table: "public.orders", seq: 3, tableSeq: 3, lsn: 140, xid: 7},
		{op: 'm', table: "message:app:hi", seq: 4, lsn: 150, xid: 7},
		{op: 'm', table: "message:free:x", lsn: 600},
	}
	if len(r.changes) != len(want) {
		t.Fatalf("got %d changes, want %d: %+v", len(r.changes), len(want), r.changes)
	}
	for i := range want {
		g, w := r.changes[i], want[i]
		if g.op != w.op || g.table != w.table || g.seq != w.seq || g.tableSeq != w.tableSeq || g.lsn != w.lsn || g.xid != w.xid ||
			!equal(g.before, w.before) || !equal(g.after, w.after) {
			t.Errorf("change %d:\n got  %+v\n want %+v", i, g, w)
		}
	}
	if d.InTx() {
		t.Fatal("still in a transaction after Commit")
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDecoderRejectsStreamThatDoesNotFit(t *testing.T) {
	rel := relationMsg(1, "public", "t", 'd', ordersCols...)
	cases := map[string][][]byte{
		"change before relation":    {beginMsg(9, 1), tuple(msg{'I'}.u32(2).u8('N'), s("1"), s("x"))},
		"change outside tx":         {rel, tuple(msg{'I'}.u32(1).u8('N'), s("1"), s("x"))},
		"commit outside tx":         {commitMsg(1, 2)},
		"begin inside tx":           {beginMsg(9, 1), beginMsg(9, 2)},
		"tuple width mismatch":      {beginMsg(9, 1), rel, tuple(msg{'I'}.u32(1).u8('N'), s("1"))},
		"truncated insert":          {beginMsg(9, 1), rel, msg{'I'}.u32(1).u8('N').u16(2).u8('t').u32(100)},
		"unknown message":           {{'Z', 1, 2}},
		"empty":                     {{}},
		"truncated begin":           {{'B', 1}},
		"binary tuple never asked":  {beginMsg(9, 1), rel, msg{'I'}.u32(1).u8('N').u16(2).u8('b').u32(1).u8('1').u8('n')},
		"transactional msg outside": {msg{'M'}.u8(1).u64(150).str("app").u32(0)},
	}
	for name, msgs := range cases {
		t.Run(name, func(t *testing.T) {
			d := NewDecoder()
			var err error
			for _, m := range msgs {
				if err = d.Decode(42, m, &recorder{}); err != nil {
					break
				}
			}
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("want *ProtocolError, got %v", err)
			}
		})
	}
}

// FuzzDecode feeds arbitrary bytes after a valid relation and Begin: a
// malformed message must be an error, never a panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(tuple(msg{'I'}.u32(1).u8('N'), s("1"), s("x"))))
	f.Add([]byte(tuple(tuple(msg{'U'}.u32(1).u8('O'), s("1"), nil).u8('N'), s("2"), s("\x00toast"))))
	f.Add([]byte(tuple(msg{'D'}.u32(1).u8('K'), s("2"), nil)))
	f.Add([]byte(msg{'T'}.u32(1).u8(3).u32(1)))
	f.Add([]byte(msg{'M'}.u8(1).u64(150).str("app").u32(2).u8('h').u8('i')))
	f.Add(relationMsg(1, "public", "t", 'f', ordersCols...))
	f.Add(commitMsg(1, 2))
	f.Add([]byte(msg{'Y'}.u32(5).str("public").str("mood")))
	f.Add([]byte(msg{'O'}.u64(5).str("origin")))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder()
		r := &recorder{}
		if err := d.Decode(1, relationMsg(1, "public", "t", 'd', ordersCols...), r); err != nil {
			t.Fatal(err)
		}
		if err := d.Decode(2, beginMsg(9, 1), r); err != nil {
			t.Fatal(err)
		}
		_ = d.Decode(3, data, r)
		_ = NewDecoder().Decode(3, data, r)
	})
}
