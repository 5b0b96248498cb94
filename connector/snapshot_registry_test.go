package connector_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// manyTables creates schema many with n tables t01… of (id int primary
// key, v text) and a row each.
func manyTables(e *env, n int) {
	e.exec(`CREATE SCHEMA many`)
	e.exec(fmt.Sprintf(`DO $$ BEGIN FOR i IN 1..%d LOOP
		EXECUTE format('CREATE TABLE many.t%%s (id int PRIMARY KEY, v text)', lpad(i::text, 2, '0'));
		EXECUTE format('INSERT INTO many.t%%s VALUES (1, ''x'')', lpad(i::text, 2, '0'));
	END LOOP; END $$`, n))
}

// TestSnapshotRunWaitsOutARegistryOutageAndStopsCleanly: with the
// registry answering 503 the copies (and the prefetch) wait, retrying; a
// stop ends the wait and is clean, and parks no table (a copy whose
// registration the stop ended was taken for the table's fault, errored
// until `mooncdc resnapshot`); at the next start, with the registry back,
// every table is copied and each subject has one version.
func TestSnapshotRunWaitsOutARegistryOutageAndStopsCleanly(t *testing.T) {
	const tables = 10
	e := newEnv(t)
	reg := srtest.New(t)
	manyTables(e, tables)
	reg.FailNextOn(srtest.EndpointRegister, 1<<30, 503)
	cfg := avroConfig(e, reg, "pfdown", "many.*")
	cfg.Heartbeat.Interval = 0 // its schemas would be registered at start
	core, logs := observerLogger()
	p, err := connector.New(cfg, core)
	if err != nil {
		t.Fatal(err)
	}
	r := runPipeline(t, p)
	r.waitReady(t)
	eventually.True(t, 30*time.Second, 20*time.Millisecond, "the copies never waited for the registry", func() bool {
		return logs.FilterMessageSnippet("Schema Registry unavailable").Len() != 0
	})
	time.Sleep(500 * time.Millisecond) // a few retries
	if took, err := stopWithin(t, r, 10*time.Second); err != nil {
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
	start(t, cfg)
	for i := 1; i <= tables; i++ {
		for _, role := range []string{"key", "value"} {
			subject := fmt.Sprintf("pfdown.many.t%02d-%s", i, role)
			if vs := reg.Versions(subject); len(vs) != 1 {
				t.Errorf("subject %s has versions %v, want one", subject, vs)
			}
		}
	}
}
