package incremental

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

// TestIncrementalSnapshotShowsItsWindowAndVoidsOneHeldPastItsLife: a
// chunk's read that does not end holds its window (here the test hook
// right after the chunk's snapshot holds it, as a COPY the server is slow
// to serve would; a lock no longer can, the chunk takes its lock before
// its snapshot), and a transaction left open updates rows of that chunk.
// The pipeline's /status
// shows the window (its chunk's pages, its age, not read yet); past its
// longest life (1 s here) the window is voided with a warning naming the
// table, the chunk and why, and /status says so. Once the transaction
// ends, the void window's chunk is read again under a new snapshot and the
// snapshot completes: a consumer of the topic ends with the table, the
// transaction's updates included.
func TestIncrementalSnapshotShowsItsWindowAndVoidsOneHeldPastItsLife(t *testing.T) {
	e := ittest.NewEnv(t)
	const life = time.Second
	ittest.Tune(t, func(tu *connector.Tuning) { tu.IncrementalWindowLife = life })
	smallChunks(t, 1)
	slowChunks(t, 100*time.Millisecond)
	const rows = 2000
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, g FROM generate_series(1, $1::int) g`, rows)
	cfg := e.Config("held", "public.orders")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Snapshot.ConnectionsPerTable = 1
	core, logs := observer.New(zap.WarnLevel)
	p, err := connector.New(cfg, zap.New(zapcore.NewTee(zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)).Core(), core)), ittest.Options(t)...)
	if err != nil {
		t.Fatal(err)
	}
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	r.WaitHandedOver(t)

	ctx := context.Background()
	conn, err := e.PG.Connect(ctx, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var hold atomic.Bool
	release := make(chan struct{})
	p.Hooks().Set(func(point, table string) {
		if point == connector.HookChunkSnapshot && table == "public.orders" && hold.CompareAndSwap(true, false) {
			<-release
		}
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	ittest.RequestIncremental(t, e, cfg, "public.orders")
	waitPlanned(t, r, "public.orders")
	hold.Store(true)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// The window waits for its chunk's read, held.
	var w connector.IncrementalWindow
	eventually.True(t, 10*time.Second, 10*time.Millisecond, "no open window of public.orders in /status", func() bool {
		ws := r.P.Status().Windows["public.orders"]
		if len(ws) == 0 {
			return false
		}
		w = ws[0]
		return !w.Read && w.AgeSeconds > 0.2 // past a chunk that was being read unlocked
	})
	if w.EndPage != w.FirstPage+1 || w.Rows != 0 || w.Void != "" || w.WaitingForStream || w.High == "" {
		t.Fatalf("window in /status %+v: want one page being read, no rows, not void", w)
	}
	// The JSON that `mooncdc status` reads has it.
	js, err := json.Marshal(r.P.Status())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"incremental_windows":{"public.orders":[{"id":`) {
		t.Fatalf("/status JSON has no window: %s", js)
	}
	// Rows of the held chunk change in the transaction that holds it.
	if _, err := tx.Exec(ctx, `UPDATE orders SET v = -v WHERE ctid >= $1::tid AND ctid < $2::tid`,
		"("+itoa(w.FirstPage)+",0)", "("+itoa(w.EndPage)+",0)"); err != nil {
		t.Fatal(err)
	}

	// Past its life it is void.
	eventually.True(t, 10*time.Second, 10*time.Millisecond, "the held window was not voided past its life", func() bool {
		for _, o := range r.P.Status().Windows["public.orders"] {
			if o.ID == w.ID && strings.Contains(o.Void, "longest life") {
				return true
			}
		}
		return false
	})
	if age := time.Since(w.Opened); age < life {
		t.Fatalf("the window was voided %v after it opened, before its life (%v)", age, life)
	}
	warned := logs.FilterMessageSnippet("longest life").All()
	if len(warned) != 1 {
		t.Fatalf("%d warnings of a window past its life, want 1: %v", len(warned), warned)
	}
	f := warned[0].ContextMap()
	chunk := "pages [" + itoa(w.FirstPage) + ", " + itoa(w.EndPage) + ")"
	if f["table"] != "public.orders" || f["chunk"] != chunk || !strings.Contains(f["why"].(string), "its chunk's read has not ended") {
		t.Fatalf("warning %v: want the table, the chunk (%s) and why", f, chunk)
	}

	close(release)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	waitIncremental(t, r, "public.orders", 30*time.Second)
	if ws := r.P.Status().Windows; len(ws) != 0 {
		t.Fatalf("windows in /status after the snapshot ended: %+v", ws)
	}
	e.Exec(`INSERT INTO orders (id, v) VALUES (0, -7)`)
	var evs []ittest.Event
	eventually.True(t, 30*time.Second, 50*time.Millisecond, "the last change did not reach the topic", func() bool {
		evs = ittest.Decode(t, readAll(t, e.Kafka, "held.public.orders", -1))
		last := evs[len(evs)-1]
		return last.After != nil && last.After["v"].(float64) == -7
	})
	sameRows(t, rebuild(t, evs), tableRows(t, e, "orders"))
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
