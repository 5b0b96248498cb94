package snapshot

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// registrations records the stand-in's register requests by subject, from
// its request log: how many, and how many it accepted.
type registrations struct {
	mu       sync.Mutex
	sent, ok map[string]int
}

var registerLine = regexp.MustCompile(`^srtest: POST /subjects/([^/]+)/versions -> (\d+)$`)

func (r *registrations) logf(format string, args ...any) {
	m := registerLine.FindStringSubmatch(fmt.Sprintf(format, args...))
	if m == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent[m[1]]++
	if m[2] == "200" {
		r.ok[m[1]]++
	}
}

func (r *registrations) counts(subject string) (sent, ok int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent[subject], r.ok[subject]
}

// manyTables creates schema many with n tables t01… of (id int primary
// key, v text) and a row each.
func manyTables(e *ittest.Env, n int) {
	e.Exec(`CREATE SCHEMA many`)
	e.Exec(fmt.Sprintf(`DO $$ BEGIN FOR i IN 1..%d LOOP
		EXECUTE format('CREATE TABLE many.t%%s (id int PRIMARY KEY, v text)', lpad(i::text, 2, '0'));
		EXECUTE format('INSERT INTO many.t%%s VALUES (1, ''x'')', lpad(i::text, 2, '0'));
	END LOOP; END $$`, n))
}

// TestSnapshotRunRegistersEachSubjectOnceAheadOfItsCopies: the subjects
// of a snapshot run's tables are registered many at once, ahead of the
// copies (a registry 50 ms away served far more requests at once than
// snapshot.workers copies registering one after the other can send), each
// with one request and one version: the copies found them registered or
// waited for the request out. A table whose schema the registry refuses
// is parked as without the prefetch (its copy fails for good, the subject
// gets no version of ours) and the other tables are handed over.
func TestSnapshotRunRegistersEachSubjectOnceAheadOfItsCopies(t *testing.T) {
	const tables, workers = 50, 2
	e := ittest.NewEnv(t)
	regs := &registrations{sent: map[string]int{}, ok: map[string]int{}}
	reg := srtest.New(t, srtest.WithLatency(50*time.Millisecond), srtest.WithLogf(regs.logf))
	manyTables(e, tables)
	// A subject of t07 that no schema of the table can follow.
	refused := "pf.many.t07-value"
	if _, err := reg.Register(refused, `"string"`); err != nil {
		t.Fatal(err)
	}
	cfg := ittest.AvroConfig(e, reg, "pf", "many.*")
	cfg.Snapshot.Workers = workers
	cfg.Snapshot.MaxRetries = 0
	r := ittest.StartStreaming(t, cfg)

	eventually.Succeeds(t, 120*time.Second, 50*time.Millisecond, func() error {
		waiting := 0
		for name, ph := range r.P.TablePhases() {
			switch {
			case name == "many.t07":
				if ph.Phase != "errored" || ph.Retry != "resnapshot" {
					waiting++
				} else if !strings.Contains(ph.LastError, "incompatible") {
					t.Fatalf("many.t07 errored for another reason: %s", ph.LastError)
				}
			case ph.Phase == "errored":
				t.Fatalf("table %s errored: %s", name, ph.LastError)
			case ph.Phase != "ready" && ph.Phase != "catchup":
				waiting++
			}
		}
		if waiting > 0 {
			return fmt.Errorf("%d tables not handed over (or t07 not parked)", waiting)
		}
		return nil
	})

	if got := reg.MaxInFlight(); got < 3*workers {
		t.Errorf("at most %d registry requests at once; %d copies registering one after the other send at most %d: no prefetch ran ahead of them",
			got, workers, workers)
	}
	for i := 1; i <= tables; i++ {
		for _, role := range []string{"key", "value"} {
			subject := fmt.Sprintf("pf.many.t%02d-%s", i, role)
			sent, ok := regs.counts(subject)
			versions := reg.Versions(subject)
			switch {
			case subject == refused:
				if ok != 0 || len(versions) != 1 {
					t.Errorf("refused subject %s: %d registrations accepted, versions %v; want 0 and the seeded one", subject, ok, versions)
				}
			case sent != 1 || ok != 1 || len(versions) != 1:
				t.Errorf("subject %s: %d register requests (%d accepted), versions %v; want one of each", subject, sent, ok, versions)
			}
		}
	}
}

// TestSnapshotRunWaitsOutARegistryOutageAndStopsCleanly: with the
// registry answering 503 the copies (and the prefetch) wait, retrying; a
// stop ends the wait and is clean, and parks no table (a copy whose
// registration the stop ended was taken for the table's fault, errored
// until `mooncdc resnapshot`); at the next start, with the registry back,
// every table is copied and each subject has one version.
func TestSnapshotRunWaitsOutARegistryOutageAndStopsCleanly(t *testing.T) {
	const tables = 10
	e := ittest.NewEnv(t)
	reg := srtest.New(t)
	manyTables(e, tables)
	reg.FailNextOn(srtest.EndpointRegister, 1<<30, 503)
	cfg := ittest.AvroConfig(e, reg, "pfdown", "many.*")
	cfg.Heartbeat.Interval = 0 // its schemas would be registered at start
	core, logs := ittest.ObserverLogger()
	p, err := connector.New(cfg, core)
	if err != nil {
		t.Fatal(err)
	}
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	eventually.True(t, 30*time.Second, 20*time.Millisecond, "the copies never waited for the registry", func() bool {
		return logs.FilterMessageSnippet("Schema Registry unavailable").Len() != 0
	})
	time.Sleep(500 * time.Millisecond) // a few retries
	if took, err := ittest.StopWithin(t, r, 10*time.Second); err != nil {
		t.Fatalf("stop while the registry is retried: %v after %s, want nil", err, took)
	}
	for name, ph := range p.TablePhases() {
		switch {
		case ph.Phase == "ready" || ph.Phase == "catchup":
			t.Fatalf("table %s handed over while the registry refused every schema", name)
		case ph.Phase == "errored" && ph.Retry == "resnapshot":
			t.Fatalf("the stop parked table %s for good: %s", name, ph.LastError)
		}
	}

	reg.FailNextOn(srtest.EndpointRegister, 0, 0)
	ittest.Start(t, cfg)
	for i := 1; i <= tables; i++ {
		for _, role := range []string{"key", "value"} {
			subject := fmt.Sprintf("pfdown.many.t%02d-%s", i, role)
			if vs := reg.Versions(subject); len(vs) != 1 {
				t.Errorf("subject %s has versions %v, want one", subject, vs)
			}
		}
	}
}
