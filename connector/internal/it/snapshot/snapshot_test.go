package snapshot

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

func TestSnapshotThreeTablesUnderWritesRebuildEqualAndChangesOnce(t *testing.T) {
	e := ittest.NewEnv(t)
	for _, tb := range []string{"big", "mid", "empty"} {
		e.Exec(`CREATE TABLE ` + tb + ` (id int PRIMARY KEY, n bigint)`)
	}
	m := ittest.NewMutator(t, e, 120000, "big", "mid", "empty")
	m.Seed("big", 100000)
	m.Seed("mid", 10000)
	e.Exec(`ANALYZE big`) // so the big table is copied in ctid ranges
	cfg := e.Config("snap", "public.big", "public.mid", "public.empty")
	cfg.Snapshot.ChunkRows = 20000
	cfg.Snapshot.ConnectionsPerTable = 4 // ranges copied in parallel, whatever the machine's default
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); m.Run(ctx, 1<<30) }()
	r := ittest.Start(t, cfg) // the writer runs through the copies and the handovers
	time.Sleep(300 * time.Millisecond)
	stop()
	wg.Wait()
	for _, tb := range []string{"big", "mid", "empty"} {
		v := ittest.Converge(t, e, "snap", tb)
		ittest.CheckExactlyOnceAfterSnapshot(t, tb, v, m.Events[tb])
		t.Logf("%s: %d rows, %d snapshot records", tb, len(v.Rows), v.Reads)
	}
	if n := ittest.Counter(r.P.Metrics().TableCopyRows.WithLabelValues("public.big")); n < 100000*0.9 {
		t.Errorf("mooncdc_table_copy_rows_total{table=public.big} = %v", n)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestHandoverCatchupWhenCopyIsAhead holds the main worker at the Begin of
// a transaction committed before the copy's snapshot, so the copy worker is
// ahead of it when it hands over: catchup(P), and the main worker, once
// released, skips what the snapshot and the copy worker already emitted.
func TestHandoverCatchupWhenCopyIsAhead(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE hot (id int PRIMARY KEY, n bigint)`)
	e.Exec(`CREATE TABLE other (id int PRIMARY KEY, n bigint)`)
	m := ittest.NewMutator(t, e, 50, "hot", "other")
	m.Seed("hot", 50)
	cfg := e.Config("ahead", "public.hot", "public.other")
	cfg.Snapshot.Mode = config.SnapshotNever // both ready at once; hot is re-copied below
	cfg.Snapshot.DiscoveryInterval = time.Second
	r := ittest.Start(t, cfg)

	release := make(chan struct{})
	var handedOver sync.Map
	r.P.Hooks().Set(func(point, table string) {
		if strings.HasPrefix(point, connector.HookHandedOver) {
			handedOver.Store(table, strings.TrimPrefix(point, connector.HookHandedOver))
			return
		}
		if point == connector.HookMainBegin {
			select {
			case <-release:
			case <-time.After(60 * time.Second):
			}
		}
	})
	m.Run(context.Background(), 10) // the main worker stops at the first of these
	ittest.Resnapshot(t, "ahead", e, r, "public.hot")
	eventually.Succeeds(t, 60*time.Second, 20*time.Millisecond, func() error {
		ph, ok := handedOver.Load("public.hot")
		if !ok {
			return fmt.Errorf("no handover: %+v", r.P.TablePhases())
		}
		if ph != "catchup" {
			t.Fatalf("hot handed over as %v, want catchup (the copy was ahead of the main worker)", ph)
		}
		return nil
	})
	close(release)
	m.Run(context.Background(), 30)
	v := ittest.Converge(t, e, "ahead", "hot")
	ittest.CheckAfterLastSnapshot(t, "hot", v, m.Events["hot"])
	ittest.Converge(t, e, "ahead", "other")
	eventually.Succeeds(t, 30*time.Second, 20*time.Millisecond, func() error {
		if ph := r.P.TablePhases()["public.hot"]; ph.Phase != "ready" {
			return fmt.Errorf("hot not promoted to ready once the main worker passed the handover: %+v", ph)
		}
		return nil
	})
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestHandoverReadyWhenCopyIsBehind holds the copy worker after its COPY
// while the main worker moves on: the copy catches up to the main worker's
// position and hands over with ready(P), P == the main position.
func TestHandoverReadyWhenCopyIsBehind(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE slow (id int PRIMARY KEY, n bigint)`)
	e.Exec(`CREATE TABLE busy (id int PRIMARY KEY, n bigint)`)
	m := ittest.NewMutator(t, e, 50, "slow", "busy")
	m.Seed("slow", 50)
	copied, release := make(chan struct{}), make(chan struct{})
	var copiedOnce sync.Once
	cfg := e.Config("behind", "public.slow", "public.busy")
	p, err := connector.New(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatal(err)
	}
	var handedOver sync.Map
	p.Hooks().Set(func(point, table string) {
		if point == connector.HookCopied && table == "public.slow" {
			copiedOnce.Do(func() { close(copied) })
			<-release
		}
		if strings.HasPrefix(point, connector.HookHandedOver) {
			handedOver.Store(table, strings.TrimPrefix(point, connector.HookHandedOver))
		}
	})
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	// slow's copy has its snapshot (the copies start a moment after the
	// stream: writing before would leave nothing to catch up) ...
	select {
	case <-copied:
	case <-time.After(60 * time.Second):
		t.Fatal("slow's copy did not finish its COPY within 60s")
	}
	// ... the main worker moves on (busy's and slow's changes) while slow's
	// copy waits, and is past all of them before the copy goes on: else the
	// copy's catch-up (slow's changes alone) could overtake it on a busy
	// machine and rightly hand over as catchup.
	m.Run(context.Background(), 50)
	r.WaitDurable(t, e.LSN(`pg_current_wal_lsn()`))
	close(release)
	r.WaitHandedOver(t)
	if ph, _ := handedOver.Load("public.slow"); ph != "ready" {
		t.Fatalf("slow handed over as %v, want ready (the copy was behind the main worker)", ph)
	}
	m.Run(context.Background(), 20)
	for _, tb := range []string{"slow", "busy"} {
		v := ittest.Converge(t, e, "behind", tb)
		ittest.CheckExactlyOnceAfterSnapshot(t, tb, v, m.Events[tb])
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
