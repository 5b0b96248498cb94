package emit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mooncdc/mooncdc/connector/internal/watermark"
	"github.com/mooncdc/mooncdc/schema"
)

// The open windows status shows (OpenWindows), and a window's longest
// life (Incremental.Life): a window within its life is shown with its
// chunk's pages, its rows and bytes, and whether it waits for the stream
// to pass its high watermark, and closes with its rows once the stream
// does; one past its life is voided at the next tick of the session loop,
// whether it waits for the stream or its chunk's read has not ended, with
// a warning naming the table, the chunk and why, and its reader is told
// to read the chunk again.
func TestWindowsAreShownAndVoidedPastTheirLongestLife(t *testing.T) {
	for _, tc := range []struct {
		name     string
		life     time.Duration
		readLate bool // the chunk's rows handed over only after the window expired
		void     string
	}{
		{"within its life, the stream behind its high watermark", time.Hour, false, ""},
		{"past its life, the stream behind its high watermark", 30 * time.Millisecond, false, "has not passed its high watermark 0/352"},
		{"past its life, its chunk still read", 30 * time.Millisecond, true, "its chunk's read has not ended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newEmitterFixture(t, 1_000_000, nil)
			core, logs := observer.New(zapcore.WarnLevel)
			q := NewIncremental()
			q.Life, q.Log = tc.life, zap.New(core)
			fx.em.Incremental = q
			ctx := context.Background()
			q.SetName(1, "public.t")
			serving(t, fx, func() error { _, err := q.Watch(ctx, 1, nil); return err })
			serving(t, fx, func() error { return q.SetFloor(ctx, 1) })
			rel := testRelation(1, "t")
			fx.tx(t, 100, &schema.Change{Op: schema.OpCreate, Relation: rel, After: row("1", "a")}) // ends at 110
			snap, err := watermark.ParseSnapshot("50:50:")
			if err != nil {
				t.Fatal(err)
			}
			chunk := watermark.Chunk{First: 4096, End: 5120}
			tk := q.Open(1, chunk, snap, 0x352) // 850: the stream is at 110
			var w *Window
			serving(t, fx, func() error { w, err = tk.Wait(ctx); return err })
			rows := []Row{{Key: watermark.Key("k7"), Value: &kgo.Record{Topic: "shop.public.t", Key: []byte(`{"id":7}`), Value: []byte(`{"op":"r"}`)}, Size: 340}}
			res := make(chan WindowResult, 1)
			complete := func() {
				go func() {
					r, err := tk.Complete(ctx, w, rows)
					if err != nil {
						t.Error(err)
					}
					res <- r
				}()
				for !q.pending.Load() {
					time.Sleep(time.Millisecond)
				}
			}
			if !tc.readLate {
				complete()
			}
			if err := fx.em.Idle(0); err != nil { // served
				t.Fatal(err)
			}
			shown := q.OpenWindows(time.Now())
			if ws := shown["public.t"]; len(ws) != 1 || ws[0].ID != w.ID() || ws[0].FirstPage != 4096 || ws[0].EndPage != 5120 ||
				ws[0].High != "0/352" || ws[0].AgeSeconds < 0 || ws[0].Void != "" ||
				(tc.readLate && (ws[0].Read || ws[0].WaitingForStream || ws[0].Rows != 0)) ||
				(!tc.readLate && (!ws[0].Read || !ws[0].WaitingForStream || ws[0].Rows != 1 || ws[0].Bytes != 340)) {
				t.Fatalf("shown windows %+v, want window %d of public.t, pages 4096-5120, read %v", shown, w.ID(), !tc.readLate)
			}
			if tc.void != "" {
				time.Sleep(2 * tc.life) // past its life
			}
			if err := fx.em.Idle(0); err != nil { // a tick: expires
				t.Fatal(err)
			}
			if tc.readLate {
				if ws := q.OpenWindows(time.Now())["public.t"]; len(ws) != 1 || !strings.Contains(ws[0].Void, tc.void) {
					t.Fatalf("shown windows %+v, want the one being read void: %q", ws, tc.void)
				}
				complete()
			}
			if tc.void == "" {
				fx.tx(t, 900, &schema.Change{Op: schema.OpCreate, Relation: rel, After: row("2", "b")}) // past 850
			}
			var got WindowResult
			for done := false; !done; {
				select {
				case got = <-res:
					done = true
				case <-time.After(time.Millisecond):
					if err := fx.em.Idle(0); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := fx.em.Idle(0); err != nil {
				t.Fatal(err)
			}
			if ws := q.OpenWindows(time.Now()); ws != nil {
				t.Fatalf("windows shown after the window ended: %+v", ws)
			}
			warned := logs.FilterMessageSnippet("longest life").All()
			if tc.void == "" {
				if got.Void != "" || got.Rows != 1 || len(warned) != 0 {
					t.Fatalf("window result %+v, %d warnings: want its row written, no warning", got, len(warned))
				}
				return
			}
			if !strings.Contains(got.Void, tc.void) || got.Rows != 0 {
				t.Fatalf("window result %+v: want void, %q", got, tc.void)
			}
			if len(warned) != 1 {
				t.Fatalf("%d warnings of a window past its life, want 1", len(warned))
			}
			f := warned[0].ContextMap()
			if f["table"] != "public.t" || f["chunk"] != chunk.String() || !strings.Contains(f["why"].(string), tc.void) {
				t.Fatalf("warning fields %v: want the table, the chunk %s and why", f, chunk)
			}
		})
	}
}

// A window voided by the stream (a change of unknown key the snapshot does
// not see)
// while its chunk is read is shown void at the transaction's end, not
// only once its read ends.
func TestAWindowVoidedByTheStreamIsShownVoid(t *testing.T) {
	fx := newEmitterFixture(t, 1_000_000, nil)
	q := NewIncremental()
	fx.em.Incremental = q
	ctx := context.Background()
	serving(t, fx, func() error { _, err := q.Watch(ctx, 1, nil); return err })
	serving(t, fx, func() error { return q.SetFloor(ctx, 1) })
	snap, err := watermark.ParseSnapshot("50:50:")
	if err != nil {
		t.Fatal(err)
	}
	tk := q.Open(1, watermark.Chunk{First: 0, End: 8}, snap, 0x352)
	serving(t, fx, func() error { _, err := tk.Wait(ctx); return err })
	if ws := q.OpenWindows(time.Now())[("oid 1")]; len(ws) != 1 || ws[0].Void != "" {
		t.Fatalf("shown %+v, want one window, not void", ws)
	}
	rel := testRelation(1, "t")
	fx.tx(t, 100, &schema.Change{Op: schema.OpCreate, Relation: rel, After: row("1", "a")})
	// Transaction 110, not seen by 50:50:, with a key column sent as
	// unchanged TOAST: it may touch any row of the chunk.
	toast := schema.Tuple{{Kind: schema.ValueUnchangedToast}, {Kind: schema.ValueText, Data: []byte("b")}}
	fx.tx(t, 110, &schema.Change{Op: schema.OpUpdate, Relation: rel, Before: row("1", "a"), After: toast})
	if ws := q.OpenWindows(time.Now())["oid 1"]; len(ws) != 1 || !strings.Contains(ws[0].Void, "key is not known") || ws[0].Read {
		t.Fatalf("shown %+v after a change of unknown key, want the window being read, void", ws)
	}
}
