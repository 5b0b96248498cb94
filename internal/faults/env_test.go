//go:build faults

package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

const offsetsTopic = "mooncdc-offsets"

// env is one scenario run: a fresh Postgres, broker, load and connector.
type env struct {
	t      *testing.T
	sc     string
	mode   string
	rng    *rand.Rand
	dir    string
	name   string // connector name = topic prefix
	pg     *pgtest.Cluster
	broker *kafkatest.Process
	proxy  *pgProxy // mooncdc's way to Postgres
	gen    *generator

	cfgPath string
	ha      bool   // the config has ha.enabled
	pgExtra string // more keys of the postgres section (scenario.postgres)
	insts   []*instance
	cur     *instance // the instance expected to be running
	notes   []string  // what the scenario observed, for the report

	bigHandedOver bool // the offsets topic showed the big table handed over
}

const configTemplate = `# Written by the faults suite.
name: %s
postgres:
  url: %s
  tables: [public.big, public.mid, public.small]
%skafka:
  brokers: [%s]
  delivery: %s
snapshot:
  mode: initial
  chunk_rows: 25000
  connections_per_table: 2
  retry_delay: 1s
log:
  level: info
  format: json
%s`

// haSection turns standby instances on (scenarios with ha set).
const haSection = `ha:
  enabled: true
  session_timeout: 10s
`

func newEnv(t *testing.T, sc scenario, mode string, seed uint64) *env {
	e := &env{t: t, sc: sc.name, mode: mode, rng: rand.New(rand.NewPCG(seed, 1)),
		name: "f_" + sc.name + "_" + strings.ReplaceAll(mode, "-", "_")}
	if os.Getenv("FAULTS_KEEP") != "" {
		d, err := os.MkdirTemp("", "faults-"+sc.name+"-")
		if err != nil {
			t.Fatal(err)
		}
		e.dir = d
		t.Logf("FAULTS_KEEP: the scenario's files stay in %s", d)
	} else {
		e.dir = t.TempDir()
	}
	e.pg = pgtest.New(t)
	e.proxy = startProxy(t, fmt.Sprintf("127.0.0.1:%d", e.pg.Port()), envInt(t, "FAULTS_PG_RATE", 5_000_000))
	e.broker = kafkatest.StartProcess(t, filepath.Join(e.dir, "kafka"))
	specs := tables
	if sc.bigRows != nil {
		specs = append([]tableSpec(nil), tables...)
		specs[0].seed = int64(sc.bigRows(t))
	}
	e.gen = newGenerator(e.pg.URL(""), envInt(t, "FAULTS_TPS", 150), seed, specs)
	e.gen.updateKeys = sc.updateKeys
	// Registered after pgtest and kafkatest: runs before they stop.
	t.Cleanup(func() {
		if e.gen.stop != nil {
			e.gen.stop()
			<-e.gen.done
		}
		for _, in := range e.insts {
			if in.running() {
				in.kill9()
			}
		}
		if t.Failed() {
			// The last two processes: the one that ran at the end and the
			// one killed (or fenced, or stopped) before it.
			for _, in := range e.insts[max(0, len(e.insts)-2):] {
				t.Logf("the end of mooncdc %s's log (%s):\n%s", in.label, in.logPath, in.tail(30))
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := e.gen.setup(ctx); err != nil {
		t.Fatalf("create the tables: %v", err)
	}
	e.ha, e.pgExtra = sc.ha, sc.postgres
	e.cfgPath = e.writeConfig("mooncdc.yaml", e.proxy.addr(), e.broker.Addr())
	return e
}

// writeConfig writes the scenario's config, reaching Postgres at pgAddr
// and the broker at brokerAddr, to name in the scenario's directory and
// returns its path.
func (e *env) writeConfig(name, pgAddr, brokerAddr string) string {
	e.t.Helper()
	path := filepath.Join(e.dir, name)
	url := fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", pgAddr)
	ha := ""
	if e.ha {
		ha = haSection
	}
	cfg := fmt.Sprintf(configTemplate, e.name, strconv.Quote(url), e.pgExtra, brokerAddr, e.mode, ha)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path
}

func (e *env) topics() []string {
	var out []string
	for _, s := range tables {
		out = append(out, e.name+".public."+s.name)
	}
	return out
}

// rnd returns a random duration in [lo, hi).
func (e *env) rnd(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(e.rng.Int64N(int64(hi-lo)))
}

// startFirst starts the first instance and waits until it streams: a
// config mooncdc refuses (exactly-once before it is implemented) ends the
// scenario here, with mooncdc's words.
func (e *env) startFirst() *instance {
	e.t.Helper()
	in := e.startInstance("#1")
	if err := in.waitReady(60 * time.Second); err != nil {
		e.t.Fatalf("%v; the end of its log:\n%s", err, in.tail(20))
	}
	e.cur = in
	return in
}

// restart starts the next instance as the current one.
func (e *env) restart() *instance {
	e.cur = e.startInstance(fmt.Sprintf("#%d", len(e.insts)+1))
	return e.cur
}

// ensure checks that the current instance has not exited by itself; if it
// has, that is an error (reported with its log), and a new one is started
// so that the data can still be checked.
func (e *env) ensure() {
	e.t.Helper()
	if e.cur == nil || e.cur.running() || e.cur.killed {
		return
	}
	e.t.Errorf("mooncdc %s exited by itself with code %d after %v; the end of its log:\n%s",
		e.cur.label, e.cur.code(), e.cur.exitedAt.Sub(e.cur.started).Round(time.Millisecond), e.cur.tail(25))
	e.restart()
}

// phase classifies the current moment for the big table (see
// instance.phase); before the big table's first handover, a process that
// has not started copying it yet is starting up.
func (e *env) phase() string {
	ph := e.cur.phase(bigTable)
	if ph == "streaming" && !e.bigHandedOver && !e.cur.has("handed over", bigTable) && !e.cur.has("table ready", bigTable) {
		return "startup"
	}
	return ph
}

// sleep sleeps d, checking on the current instance every 100 ms.
func (e *env) sleep(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		time.Sleep(min(100*time.Millisecond, time.Until(end)))
		e.ensure()
	}
}

func (e *env) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	e.notes = append(e.notes, s)
	e.t.Log(s)
}

// tablePhases reads the connector's table records from the offsets topic:
// table → phase (the last value wins).
func (e *env) tablePhases(ctx context.Context) map[string]string {
	out := map[string]string{}
	for table, v := range e.tableRecords(ctx) {
		var val struct {
			Phase string `json:"phase"`
		}
		if json.Unmarshal([]byte(v), &val) == nil {
			out[table] = val.Phase
		}
	}
	return out
}

// tableRecords reads the connector's table records from the offsets
// topic: table → the last value, as JSON text.
func (e *env) tableRecords(ctx context.Context) map[string]string {
	out := map[string]string{}
	for _, r := range kafkatest.ReadAll(ctx, e.t, e.broker.Addr(), -1, offsetsTopic) {
		table, ok := e.tableOf(r.Key)
		switch {
		case !ok:
		case r.Value == nil:
			delete(out, table)
		default:
			out[table] = string(r.Value)
		}
	}
	return out
}

// tableHistory reads every record of the connector's tables in the
// offsets topic, in order: table → values (nil for a tombstone).
func (e *env) tableHistory(ctx context.Context) map[string][][]byte {
	out := map[string][][]byte{}
	for _, r := range kafkatest.ReadAll(ctx, e.t, e.broker.Addr(), -1, offsetsTopic) {
		if table, ok := e.tableOf(r.Key); ok {
			out[table] = append(out[table], r.Value)
		}
	}
	return out
}

// tableOf is the table an offsets record's key names, when it is one of
// this connector's table records (["<name>", {"table": …}]).
func (e *env) tableOf(key []byte) (string, bool) {
	var parts []json.RawMessage
	if json.Unmarshal(key, &parts) != nil || len(parts) != 2 {
		return "", false
	}
	var name string
	var part struct {
		Table string `json:"table"`
	}
	if json.Unmarshal(parts[0], &name) != nil || name != e.name || json.Unmarshal(parts[1], &part) != nil || part.Table == "" {
		return "", false
	}
	return part.Table, true
}

// tableValue is what the suite reads of a table record.
type tableValue struct {
	Phase string `json:"phase"`
	Copy  *struct {
		SnapshotLSN uint64  `json:"snapshot_lsn"`
		Chunks      int     `json:"chunks"`
		Done        [][]int `json:"done"`
		Rows        int64   `json:"rows"`
	} `json:"copy"`
}

// doneChunks is the number of chunks the progress says are done.
func (v tableValue) doneChunks() int {
	n := 0
	if v.Copy != nil {
		for _, r := range v.Copy.Done {
			n += r[1] - r[0] + 1
		}
	}
	return n
}

// copyStarts returns, per table (short name) handed over after a copy
// that resumed by chunk, the LSN of that copy's first snapshot, from the
// progress its records carried (check): the progress of the copy in the
// last records before the table's last handover.
func (e *env) copyStarts(ctx context.Context) map[string]uint64 {
	out := map[string]uint64{}
	for table, values := range e.tableHistory(ctx) {
		var cur, final uint64
		for _, raw := range values {
			var v tableValue
			if raw == nil || json.Unmarshal(raw, &v) != nil {
				continue
			}
			switch {
			case v.Phase == "ready" || v.Phase == "catchup":
				final = cur
			case v.Copy != nil:
				cur = v.Copy.SnapshotLSN
			default:
				cur = 0 // a copy from zero
			}
		}
		if final != 0 {
			out[strings.TrimPrefix(table, "public.")] = final
		}
	}
	return out
}

func (e *env) allReady(ctx context.Context) (bool, map[string]string) {
	ph := e.tablePhases(ctx)
	for _, s := range tables {
		if ph[qualified(s.name)] != "ready" {
			return false, ph
		}
	}
	return true, ph
}

// waitAllReady waits until the offsets topic has every table ready.
func (e *env) waitAllReady(timeout time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		ok, ph := e.allReady(ctx)
		cancel()
		if ok {
			e.bigHandedOver = true
			return
		}
		if time.Now().After(deadline) {
			rctx, rcancel := context.WithTimeout(context.Background(), 20*time.Second)
			recs := e.tableRecords(rctx)
			rcancel()
			e.t.Fatalf("the tables are not all ready after %v (phases %v; records %v); the end of mooncdc %s's log:\n%s",
				timeout, ph, recs, e.cur.label, e.cur.tail(25))
		}
		e.sleep(250 * time.Millisecond)
	}
}

// waitCopied waits until the current instance has copied the big table's
// rows (true), or the offsets topic says it is handed over already and
// will not be copied again (false).
func (e *env) waitCopied(timeout time.Duration) bool {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	lastPhases := time.Time{}
	for {
		e.ensure()
		if e.cur.has("table copied", bigTable) {
			return true
		}
		if time.Since(lastPhases) > time.Second {
			lastPhases = time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			ph := e.tablePhases(ctx)[bigTable]
			cancel()
			if ph == "ready" || ph == "catchup" {
				e.bigHandedOver = true
				return false
			}
		}
		if time.Now().After(deadline) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			recs := e.tableRecords(ctx)
			cancel()
			e.t.Fatalf("mooncdc %s has not copied %s after %v (its record in the offsets topic: %s); the end of its log:\n%s",
				e.cur.label, bigTable, timeout, recs[bigTable], e.cur.tail(20))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// slotCaughtUp reports whether the connector's slot has confirmed lsn.
func (e *env) slotCaughtUp(ctx context.Context, lsn string) (bool, string, error) {
	conn, err := e.pg.Connect(ctx, "")
	if err != nil {
		return false, "", err
	}
	defer conn.Close(context.Background())
	var ok bool
	var confirmed *string
	err = conn.QueryRow(ctx, `SELECT coalesce(confirmed_flush_lsn >= $1::pg_lsn, false), confirmed_flush_lsn::text
		FROM pg_replication_slots WHERE slot_name = $2`, lsn, "mooncdc_"+e.name).Scan(&ok, &confirmed)
	if err != nil {
		return false, "", err
	}
	c := "null"
	if confirmed != nil {
		c = *confirmed
	}
	return ok, c, nil
}

// finish stops the load, writes the sentinel transaction, waits until
// every table is ready and the slot has confirmed the sentinel, and stops
// mooncdc cleanly (exit 0 expected).
func (e *env) finish() {
	e.t.Helper()
	if err := e.gen.stopLoad(); err != nil {
		e.t.Fatalf("load generator: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lsn, err := e.gen.sentinel(ctx)
	if err != nil {
		e.t.Fatalf("sentinel transaction: %v", err)
	}
	start := time.Now()
	deadline := start.Add(4 * time.Minute)
	for {
		e.ensure()
		rctx, rcancel := context.WithTimeout(context.Background(), 20*time.Second)
		ready, ph := e.allReady(rctx)
		caught, confirmed, err := e.slotCaughtUp(rctx, lsn)
		rcancel()
		if ready && caught {
			break
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("mooncdc %s did not catch up within %v of the load's end: phases %v, slot confirmed %s, want >= %s (err %v); the end of its log:\n%s",
				e.cur.label, time.Since(start).Round(time.Second), ph, confirmed, lsn, err, e.cur.tail(25))
		}
		time.Sleep(250 * time.Millisecond)
	}
	e.t.Logf("caught up %v after the load stopped", time.Since(start).Round(100*time.Millisecond))
	// Standbys first, so that none takes over from the last one's stop.
	for _, in := range e.insts {
		if in != e.cur && in.running() {
			if code, err := in.stop(60 * time.Second); err != nil || code != 0 {
				e.t.Errorf("clean stop of standby mooncdc %s: exit code %d, %v; the end of its log:\n%s", in.label, code, err, in.tail(25))
			}
		}
	}
	code, err := e.cur.stop(60 * time.Second)
	if err != nil || code != 0 {
		e.t.Errorf("clean stop of mooncdc %s: exit code %d, %v; the end of its log:\n%s", e.cur.label, code, err, e.cur.tail(25))
	}
}

// readTables returns id → v of every table in Postgres.
func (e *env) readTables(ctx context.Context) []map[int64]int64 {
	e.t.Helper()
	conn, err := e.pg.Connect(ctx, "")
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var out []map[int64]int64
	for _, s := range tables {
		rows, err := conn.Query(ctx, "SELECT id, v FROM "+s.name)
		if err != nil {
			e.t.Fatal(err)
		}
		m := map[int64]int64{}
		for rows.Next() {
			var id, v int64
			if err := rows.Scan(&id, &v); err != nil {
				e.t.Fatal(err)
			}
			m[id] = v
		}
		if err := rows.Err(); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// runScenario sets up, runs the scenario's faults under load, finishes,
// checks and prints the summary line.
func runScenario(t *testing.T, sc scenario, mode string, base, seed uint64) {
	began := time.Now()
	t.Logf("scenario %s mode %s seed %d (FAULTS_SEED=%d reruns it)", sc.name, mode, seed, base)
	e := newEnv(t, sc, mode, seed)
	e.gen.start()
	faults := sc.run(e)
	e.finish()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	raw := map[string][]*kgo.Record{}
	topics := e.topics()
	for _, r := range kafkatest.ReadAll(ctx, t, e.broker.Addr(), -1, topics...) {
		for i, tp := range topics {
			if r.Topic == tp {
				raw[tables[i].name] = append(raw[tables[i].name], r)
			}
		}
	}
	v := check(raw, e.gen, e.readTables(ctx), e.copyStarts(ctx))
	if sc.verify != nil {
		sc.verify(e, raw, faults)
	}
	fmt.Printf("scenario=%s mode=%s kills=%d lost=%d duplicated=%d reordered=%d\n",
		sc.name, mode, faults, v.lost, v.duplicated, v.reordered)
	t.Logf("took %v; load: %s; %d mooncdc processes", time.Since(began).Round(time.Second), e.gen.stats(), len(e.insts))
	for _, c := range v.tables {
		t.Logf("  %s: %d records, %d change records, %d rows in the last snapshot (lsn %d)", c.table, c.records, c.changes, c.snapshotRow, c.snapshotLSN)
	}
	if !v.ok(mode) {
		what := "lost=0, reordered=0, equal tables"
		if mode == modeExactlyOnce {
			what = "lost=0, duplicated=0, reordered=0, equal tables"
		}
		t.Errorf("scenario %s in mode %s: want %s; got:\n%s", sc.name, mode, what, v.report())
	}
}
