package connector_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
)

// resumeEnv is a table of 20 chunks (rt: id, n as the mutator writes
// them, and a pad that fills the pages), copied by a pipeline that
// checkpoints at every chunk's end.
type resumeEnv struct {
	*ittest.Env
	m    *ittest.Mutator
	cfg  config.Config
	name string
	rows int
}

func newResumeEnv(t *testing.T, name string, mode config.Delivery) *resumeEnv {
	e := ittest.NewEnv(t)
	ittest.Tune(t, func(tu *connector.Tuning) { tu.CheckpointEvery = -1 }) // at every chunk's end
	e.Exec(`CREATE TABLE rt (id int PRIMARY KEY, n bigint, pad text NOT NULL DEFAULT repeat('x', 200))`)
	const rows = 20000
	m := ittest.NewMutator(t, e, rows+2000, "rt")
	m.Seed("rt", rows)
	e.Exec(`ANALYZE rt`)
	cfg := e.Config(name, "public.rt")
	cfg.Kafka.Delivery = mode
	cfg.Snapshot.ChunkRows = rows / 20
	cfg.Snapshot.ConnectionsPerTable = 2
	cfg.Snapshot.RetryDelay = 200 * time.Millisecond
	// pad is hashed (column.mask.hash.v2): the copy's two connections
	// encode with the table's one schema plan, hash state and all, and a
	// state shared between them is a data race under -race.
	cfg.Format.ColumnHash = []config.ColumnHashRule{{Columns: []string{"public.rt.pad"}, Algorithm: "SHA-256", Salt: "s", Version: 2}}
	return &resumeEnv{Env: e, m: m, cfg: cfg, name: name, rows: rows}
}

// crashMidCopy runs the pipeline until its copy of rt stored its progress
// `checkpoints` times, then aborts it (the crash stand-in: nothing more
// reaches Kafka or Postgres). Transactions written right after the
// snapshot are changes the resume must stream. It returns the progress
// stored in the offsets topic.
func (re *resumeEnv) crashMidCopy(t *testing.T, checkpoints int32) *offsets.CopyProgress {
	t.Helper()
	p := ittest.NewPipeline(t, re.cfg)
	var n atomic.Int32
	p.Hooks().Set(func(point, table string) {
		switch point {
		case connector.HookSnapshotCreated:
			re.m.Run(context.Background(), 20) // after the snapshot: streamed by the resume
		case connector.HookChunkCopied:
			time.Sleep(20 * time.Millisecond) // the chunk's acks come before the next chunk's end
		case connector.HookCopyCheckpoint:
			if n.Add(1) == checkpoints {
				p.Abort()
				time.Sleep(300 * time.Millisecond) // no checkpoint meanwhile: this one holds them
			}
		}
	})
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	select {
	case <-r.Done:
		r.Done <- connector.ErrAborted
	case <-time.After(60 * time.Second):
		t.Fatal("the copy did not checkpoint")
	}
	if ph := p.TablePhases()["public.rt"]; ph.Phase != offsets.PhaseCopying {
		t.Fatalf("crash meant during the copy, but the table is %s", ph.Phase)
	}
	prog := re.storedProgress(t)
	if prog == nil || prog.DoneCount() == 0 || prog.DoneCount() == prog.Chunks {
		t.Fatalf("want a progress with some chunks done, got %+v", prog)
	}
	if !re.slotExists(t, prog.Slot) {
		t.Fatalf("the copy slot %s is gone after the crash", prog.Slot)
	}
	return prog
}

// storedProgress reads rt's progress from the offsets topic.
func (re *resumeEnv) storedProgress(t *testing.T) *offsets.CopyProgress {
	t.Helper()
	re.fence(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(re.Kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := offsets.Load(ctx, cl, "mooncdc-offsets", re.name)
	if err != nil {
		t.Fatal(err)
	}
	return st.Tables["public.rt"].Copy
}

// fence ends what a crashed run left open, as the next start does before
// it reads the offsets (delivery: every transactional id, <name>-main and
// <name>-copy-<n>, takes a new producer epoch, which aborts its open
// transaction). The crash stand-in (Abort) may leave a transaction open,
// as a real crash does, when its abort is cancelled; read_committed reads
// of the offsets then wait for it for kafka.transaction_timeout (15 min).
func (re *resumeEnv) fence(t *testing.T) {
	t.Helper()
	if re.cfg.Kafka.Delivery != config.DeliveryExactlyOnce {
		return
	}
	workers := re.cfg.Snapshot.Workers
	if workers <= 0 {
		workers = config.DefaultSnapshotWorkers
	}
	ids := []string{re.cfg.Name + "-main"}
	for n := range workers {
		ids = append(ids, fmt.Sprintf("%s-copy-%d", re.cfg.Name, n))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, id := range ids {
		cl, err := kgo.NewClient(kgo.SeedBrokers(re.Kafka), kgo.TransactionalID(id))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = cl.ProducerID(ctx)
		cl.Close()
		if err != nil {
			t.Fatalf("fence %s: %v", id, err)
		}
	}
}

func (re *resumeEnv) slotExists(t *testing.T, slot string) bool {
	t.Helper()
	var n int
	re.Scan(fmt.Sprintf(`SELECT count(*) FROM pg_replication_slots WHERE slot_name = '%s'`, slot), &n)
	return n == 1
}

// idsOnPages returns up to limit ids of rows on heap pages [from, to).
func (re *resumeEnv) idsOnPages(t *testing.T, from, to int64, limit int) []int {
	t.Helper()
	conn, err := re.PG.Connect(context.Background(), "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT id FROM rt WHERE (ctid::text::point)[0] >= $1 AND (ctid::text::point)[0] < $2 ORDER BY ctid LIMIT $3`,
		from, to, limit)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// page is the heap page of row id.
func (re *resumeEnv) page(t *testing.T, id int) int64 {
	t.Helper()
	var pg float64
	re.Scan(fmt.Sprintf(`SELECT (ctid::text::point)[0] FROM rt WHERE id = %d`, id), &pg)
	return int64(pg)
}

// write runs one transaction of statements on rt and records its writes
// in the mutator's log: an update or insert of each id in set (new n), a
// delete of each id in del.
func (re *resumeEnv) write(t *testing.T, set, del []int) {
	t.Helper()
	m := re.m
	conn, err := re.PG.Connect(context.Background(), "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	type ev struct {
		key int
		n   int64
	}
	var evs []ev
	err = pgx.BeginFunc(context.Background(), conn, func(tx pgx.Tx) error {
		for _, id := range set {
			m.N++
			if _, err := tx.Exec(context.Background(), `INSERT INTO rt (id, n) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n`, id, m.N); err != nil {
				return err
			}
			evs = append(evs, ev{id, m.N})
		}
		for _, id := range del {
			if _, err := tx.Exec(context.Background(), `DELETE FROM rt WHERE id = $1`, id); err != nil {
				return err
			}
			evs = append(evs, ev{id, -1})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range evs {
		m.Events["rt"][v.key] = append(m.Events["rt"][v.key], v.n)
		m.Exists["rt"][v.key] = v.n >= 0
	}
}

// chunkPages is chunk i's pages [from, to) in p's plan (the last one to
// the end).
func chunkPages(p *offsets.CopyProgress, i int) (int64, int64) {
	from, to := int64(i)*p.ChunkPages, int64(i+1)*p.ChunkPages
	if i == p.Chunks-1 {
		to = 1 << 40
	}
	return from, to
}

// seedTopic writes to rt's topic, before any copy, records an earlier
// copy could have left: keys the table does not have (900000…900009: the
// copy must tombstone them), and older states of the rows ids (rows of
// every chunk: the copy writes them again, and must not tombstone them
// after a resume).
func (re *resumeEnv) seedTopic(t *testing.T, ids []int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(re.Kafka), kgo.DefaultProduceTopic(re.name+".public.rt"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 1, 1, nil, re.name+".public.rt"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		ids = append(ids, 900000+i)
	}
	for _, id := range ids {
		rec := &kgo.Record{Key: []byte(fmt.Sprintf(`{"id":%d}`, id)),
			Value: []byte(fmt.Sprintf(`{"before":null,"after":{"id":%d,"n":-7,"pad":""},"source":{},"op":"c"}`, id))}
		if err := cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResumedCopyLosesNothing: a copy of a table of 20 chunks crashes
// after some chunks are in Kafka; while mooncdc is down, rows move between
// chunks (an UPDATE of a row of a done chunk lands in a chunk not done, one
// of a chunk not done in a done chunk's freed page), rows are deleted and
// inserted. The next run resumes from the chunks done instead of from
// zero, and the table rebuilt from its topic equals Postgres, with each
// change record once (both delivery modes). Keys an earlier copy left in
// the topic are tombstoned if the table lacks them, and kept if a done
// chunk wrote them again.
func TestResumedCopyLosesNothing(t *testing.T) {
	for _, mode := range []config.Delivery{config.DeliveryAtLeastOnce, config.DeliveryExactlyOnce} {
		t.Run(string(mode), func(t *testing.T) {
			re := newResumeEnv(t, "resume"+strings.ReplaceAll(string(mode), "-", ""), mode)
			re.seedTopic(t, []int{1, 7000, 13000, 19999})
			prog := re.crashMidCopy(t, 5)
			var done, pending []int
			for i := 0; i < prog.Chunks; i++ {
				if prog.IsDone(i) {
					done = append(done, i)
				} else {
					pending = append(pending, i)
				}
			}
			isDone := func(page int64) bool { return prog.IsDone(int(min(page/prog.ChunkPages, int64(prog.Chunks-1)))) }
			t.Logf("crashed with chunks %v done of %d (%d rows, base %d)", prog.Done, prog.Chunks, prog.Rows, prog.BaseLSN)
			if len(done) < 2 || len(pending) < 2 {
				t.Fatalf("want at least two chunks done and two not: done %v", done)
			}

			// Free the first page of a done chunk, so that rows updated
			// next move into it.
			d0, _ := chunkPages(prog, done[0])
			freed := re.idsOnPages(t, d0, d0+1, 1000)
			re.write(t, nil, freed)
			re.Exec(`VACUUM rt`)
			// Rows of a chunk not done: updated into the freed page (of a
			// done chunk), and deleted.
			q0, q1 := chunkPages(prog, pending[0])
			fromPending := re.idsOnPages(t, q0, q1, len(freed)+10)
			re.write(t, fromPending[:len(freed)], fromPending[len(freed):])
			movedIn := 0
			for _, id := range fromPending[:len(freed)] {
				if isDone(re.page(t, id)) {
					movedIn++
				}
			}
			// Rows of another done chunk: updated, they land past the
			// freed space, in the last chunk (not done).
			d20, d21 := chunkPages(prog, done[1])
			fromDone := re.idsOnPages(t, d20+1, d21, 40)
			re.write(t, fromDone, nil)
			movedOut := 0
			for _, id := range fromDone {
				if !isDone(re.page(t, id)) {
					movedOut++
				}
			}
			if movedIn == 0 || movedOut == 0 {
				t.Fatalf("the test meant rows to move between chunks: %d of a chunk not done moved into a done one, %d the other way", movedIn, movedOut)
			}
			var inserts []int
			for id := re.rows; id < re.rows+50; id++ {
				inserts = append(inserts, id)
			}
			re.write(t, inserts, nil)
			total := len(re.TableRows("rt"))

			p := ittest.NewPipeline(t, re.cfg)
			p.Hooks().Set(func(point, table string) {
				if point == connector.HookSnapshotCreated {
					re.m.Run(context.Background(), 15) // after the resume's snapshot: the catch-up's
				}
			})
			r := ittest.RunPipeline(t, p)
			r.WaitReady(t)
			r.WaitHandedOver(t)
			resumed := ittest.Counter(p.Metrics().TableCopyRowsResumed.WithLabelValues("public.rt"))
			copied := ittest.Counter(p.Metrics().TableCopyRows.WithLabelValues("public.rt"))
			t.Logf("resumed: %v rows of done chunks not copied again, %v rows copied, of %d", resumed, copied, total)
			if resumed != float64(prog.Rows) || copied >= float64(total) {
				t.Fatalf("the copy did not resume from its chunks: %v rows copied of %d (%v resumed; the progress held %d)", copied, total, resumed, prog.Rows)
			}
			re.m.Run(context.Background(), 20)
			v := ittest.Converge(t, re.Env, re.name, "rt")
			ittest.CheckNoChangeRepeats(t, "rt", v)
			checkResumedCopy(t, "rt", v, re.m.Events["rt"])
			waitSlotGone(t, re.Env, prog.Slot)
			if got := p.TablePhases()["public.rt"].Copy; got != nil {
				t.Fatalf("the handover kept the copy's progress: %+v", got)
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// checkResumedCopy is checkAfterLastSnapshot for a copy whose base B is
// its first snapshot and that resumed after every write but the seed: a
// key with a snapshot row is judged from its last one (done chunks' rows
// are as of B, the others' as of the resume's snapshot); a key without one
// (deleted, or inserted into a done chunk's pages, after B) has every
// write after the seed as a change record, in order, once.
func checkResumedCopy(t *testing.T, table string, v ittest.TableView, events map[int][]int64) {
	t.Helper()
	withRow := map[int][]int64{}
	for key, writes := range events {
		recs := v.Records[key]
		hasRow := false
		var changes []int64
		for _, r := range recs {
			hasRow = hasRow || r.Op == "r" || r.Op == "x"
			changes = append(changes, r.N)
		}
		if hasRow {
			withRow[key] = writes
			continue
		}
		after := writes
		if key < 20000 && len(after) > 0 && after[0] == 0 {
			after = after[1:] // the seed, before B
		}
		if fmt.Sprint(after) != fmt.Sprint(changes) {
			var where []string
			for _, r := range recs {
				where = append(where, r.Where())
			}
			t.Fatalf("%s key %d (in no snapshot): change records %v, want every write after the base %v (all writes %v); the records: %s",
				table, key, changes, after, writes, strings.Join(where, "; "))
		}
	}
	ittest.CheckAfterLastSnapshot(t, table, v, withRow)
}

func waitSlotGone(t *testing.T, e *ittest.Env, slot string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		e.Scan(fmt.Sprintf(`SELECT count(*) FROM pg_replication_slots WHERE slot_name = '%s'`, slot), &n)
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the copy slot %s is still there after the handover", slot)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestResumedCopyStartsOverAfterARewrite: a table rewritten while
// mooncdc is down (VACUUM FULL: a new relfilenode, every row on new
// pages) is not resumed, whose chunks would no longer name their rows: it
// is copied from the start, from a new slot, and rebuilt equal.
func TestResumedCopyStartsOverAfterARewrite(t *testing.T) {
	re := newResumeEnv(t, "rewrite", config.DeliveryAtLeastOnce)
	prog := re.crashMidCopy(t, 4)
	re.write(t, []int{1, 2, 3, re.rows + 1}, []int{4, 5})
	re.Exec(`VACUUM FULL rt`)
	total := len(re.TableRows("rt"))
	p := ittest.NewPipeline(t, re.cfg)
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	r.WaitHandedOver(t)
	resumed := ittest.Counter(p.Metrics().TableCopyRowsResumed.WithLabelValues("public.rt"))
	copied := ittest.Counter(p.Metrics().TableCopyRows.WithLabelValues("public.rt"))
	if resumed != 0 || copied != float64(total) {
		t.Fatalf("a rewritten table must be copied from the start: %v rows copied of %d, %v resumed", copied, total, resumed)
	}
	re.m.Run(context.Background(), 20)
	v := ittest.Converge(t, re.Env, "rewrite", "rt")
	ittest.CheckNoChangeRepeats(t, "rt", v)
	ittest.CheckAfterLastSnapshot(t, "rt", v, re.m.Events["rt"])
	waitSlotGone(t, re.Env, prog.Slot)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestUnusedCopySlotsAreDropped: a copy slot of this pipeline that no
// table's progress names (a copy that crashed before its first
// checkpoint, a table handed over or gone) is dropped, since it would
// retain WAL forever; slots of other names are left alone, even one that
// looks like a copy slot without its tag (another pipeline's slot).
func TestUnusedCopySlotsAreDropped(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE small_t (id int PRIMARY KEY, n bigint)`)
	cfg := e.Config("sweep", "public.small_t")
	orphan := pgsource.CopySlotName("mooncdc_sweep", 424242) // the pipeline's slot is mooncdc_<name>
	others := []string{orphan + "_x", "mooncdc_sweep_copy_424242", "mooncdc_sweep_copyx", "another_pipeline"}
	for _, s := range append([]string{orphan}, others...) {
		e.Exec(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, s)
	}
	r := ittest.Start(t, cfg)
	waitSlotGone(t, e, orphan)
	for _, s := range others {
		var n int
		e.Scan(fmt.Sprintf(`SELECT count(*) FROM pg_replication_slots WHERE slot_name = '%s'`, s), &n)
		if n != 1 {
			t.Errorf("slot %s is not a copy slot of this pipeline, but was dropped", s)
		}
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestResumeCrashedInItsStreamResumesFromItsNewBase: a resume that dies
// while it streams the changes since its base has moved the base forward
// at the transaction ends it checkpointed; the next run streams from
// there, and the table is rebuilt equal (in exactly-once mode with each
// change record once).
//
// "exactly-once, table states late": the ordered writer of table states
// (a client of its own, outside the copy's Kafka transactions) is slow
// when the crash comes: its write of an early checkpoint's state is held
// in flight until the crash, and what it sends after is lost. In
// exactly-once mode a checkpoint commits its progress in the copy's
// transaction and then has the ordered writer store it again; if that
// second write of checkpoint k could land after checkpoint k+1's commit,
// the stored progress went back to k's base while Kafka held the changes
// up to k+1's, and the next run wrote them again (seen once under a load
// of 10: a delete twice).
func TestResumeCrashedInItsStreamResumesFromItsNewBase(t *testing.T) {
	for _, tc := range []struct {
		name       string
		mode       config.Delivery
		lateStates bool
	}{
		{"at-least-once", config.DeliveryAtLeastOnce, false},
		{"exactly-once", config.DeliveryExactlyOnce, false},
		{"exactly-once,_table_states_late", config.DeliveryExactlyOnce, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "restream" + strings.ReplaceAll(string(tc.mode), "-", "")
			if tc.lateStates {
				name += "late"
			}
			re := newResumeEnv(t, name, tc.mode)
			first := re.crashMidCopy(t, 3)
			re.m.Run(context.Background(), 40) // while down: the next resume streams them

			p := ittest.NewPipeline(t, re.cfg)
			var late *lateStates
			if tc.lateStates {
				late = re.lateStates(t)
			}
			var n atomic.Int32
			var last atomic.Pointer[offsets.CopyProgress]
			p.Hooks().Set(func(point, table string) {
				if point != connector.HookCopyCheckpoint {
					return
				}
				switch n.Add(1) {
				case 1:
					late.arm()
				case 2:
					// The ordered writer's record of an early checkpoint is
					// in flight before the next ones commit (it lingers 5 ms
					// in the client, longer than a checkpoint of this stream).
					late.waitHeld(t)
				case 5: // a checkpoint of the stream (one per transaction here)
					last.Store(p.TablePhases()["public.rt"].Copy)
					p.Abort()
					late.crash()
					time.Sleep(300 * time.Millisecond)
				}
			})
			r := ittest.RunPipeline(t, p)
			r.WaitReady(t)
			select {
			case err := <-r.Done:
				r.Done <- err // for the cleanup
			case <-time.After(60 * time.Second):
				t.Fatal("the resume did not checkpoint")
			}
			late.disarm()
			second := re.storedProgress(t)
			if second == nil || second.BaseLSN <= first.BaseLSN || second.DoneCount() != first.DoneCount() {
				t.Fatalf("want the base moved within the stream, chunks as before (%d done, base %d); got %+v", first.DoneCount(), first.BaseLSN, second)
			}
			if tc.lateStates {
				if late.held.Load() != 1 {
					t.Fatalf("the test meant to hold one write of the table states' writer, held %d", late.held.Load())
				}
				if want := last.Load(); want == nil || second.BaseLSN != want.BaseLSN {
					t.Errorf("the stored progress went back: base %d, but the last checkpoint before the crash committed base %+v", second.BaseLSN, want)
				}
			}

			r = ittest.StartStreaming(t, re.cfg)
			r.WaitHandedOver(t)
			if got := ittest.Counter(r.P.Metrics().TableCopyRowsResumed.WithLabelValues("public.rt")); got != float64(first.Rows) {
				t.Fatalf("resumed %v rows, want the %d of the first run's chunks", got, first.Rows)
			}
			re.m.Run(context.Background(), 10)
			v := ittest.Converge(t, re.Env, re.name, "rt")
			if tc.mode == config.DeliveryExactlyOnce {
				ittest.CheckNoChangeRepeats(t, "rt", v)
				checkResumedCopy(t, "rt", v, re.m.Events["rt"])
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// lateStates makes the ordered writer of table states (the plain,
// non-transactional producer's writes to the offsets topic) late, as a slow
// network can: once armed, its first produce request is held at the broker
// until the crash (at most 2 s), then written; what it sends after the
// crash is lost (its connection closed), as a crash loses what the process
// had not delivered. Its methods do nothing on nil.
type lateStates struct {
	state   atomic.Int32 // 0 idle, 1 armed, 2 crashed, 3 disarmed
	taken   atomic.Bool
	held    atomic.Int32
	crashed chan struct{}
}

func (re *resumeEnv) lateStates(t *testing.T) *lateStates {
	t.Helper()
	l := &lateStates{crashed: make(chan struct{})}
	c := re.Broker.Cluster()
	topic := re.cfg.Kafka.OffsetsTopic
	// Produce requests name a topic by its id (v13 on) or its name.
	cl, err := kgo.NewClient(kgo.SeedBrokers(re.Kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	details, err := kadm.NewClient(cl).ListTopics(context.Background(), topic)
	if err != nil || details[topic].Err != nil {
		t.Fatalf("the offsets topic: %v %v", err, details[topic].Err)
	}
	id := details[topic].ID
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		pr := req.(*kmsg.ProduceRequest)
		st := l.state.Load()
		if pr.TransactionID != nil || st == 0 || st == 3 || !slices.ContainsFunc(pr.Topics, func(tp kmsg.ProduceRequestTopic) bool { return tp.Topic == topic || tp.TopicID == id }) {
			return nil, nil, false
		}
		if st == 2 {
			return nil, errors.New("lost in the crash"), true
		}
		if l.taken.CompareAndSwap(false, true) {
			l.held.Add(1)
			c.SleepControl(func() {
				select {
				case <-l.crashed:
				case <-time.After(2 * time.Second):
				}
			})
		}
		return nil, nil, false
	})
	return l
}

func (l *lateStates) arm() {
	if l != nil {
		l.state.CompareAndSwap(0, 1)
	}
}

// waitHeld waits (at most 2 s) until a write is held.
func (l *lateStates) waitHeld(t *testing.T) {
	if l == nil {
		return
	}
	deadline := time.Now().Add(2 * time.Second)
	for l.held.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if l.held.Load() == 0 {
		t.Errorf("no write of the table states' writer came within 2 s")
	}
}

func (l *lateStates) crash() {
	if l != nil && l.state.CompareAndSwap(1, 2) {
		close(l.crashed)
	}
}

func (l *lateStates) disarm() {
	if l != nil {
		l.state.Store(3)
	}
}
