package transforms

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/offsets"
)

// TestAFailingTransformParksOnlyItsTable: Cast$Value of items' code to
// int32 fails on "x" (Cast.java:301-307 at apache/kafka 1eb7644349c:
// "Value (x) was out of range for requested data type"). That change parks
// items, errored at the change's LSN with the transform's alias and the
// cause in its status (resnapshot to resume, as parking works); the other
// table goes on streaming; the failure is counted in
// mooncdc_format_errors_total{stage="transform"}. The rows before it were
// written.
func TestAFailingTransformParksOnlyItsTable(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE items (id int PRIMARY KEY, code text); CREATE TABLE other (id int PRIMARY KEY, v int)`)
	e.Exec(`INSERT INTO items VALUES (1, '7'); INSERT INTO other VALUES (1, 1)`)
	cfg := e.Config("tp", "public.items", "public.other")
	cfg.Heartbeat.Records = false
	cfg.Transforms = map[string]string{
		"transforms":                     "codeToInt",
		"transforms.codeToInt.type":      "org.apache.kafka.connect.transforms.Cast$Value",
		"transforms.codeToInt.spec":      "code:int32",
		"transforms.codeToInt.predicate": "isItems",
		"predicates":                     "isItems",
		"predicates.isItems.type":        "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
		"predicates.isItems.pattern":     `.*\.items`,
	}
	cfg.Format.Envelope = "flat" // Cast acts on top-level fields: the flat row's
	r := ittest.Start(t, cfg)
	before := e.LSN(`pg_current_wal_lsn()`)
	e.Exec(`INSERT INTO items VALUES (2, 'x')`)
	after := e.LSN(`pg_current_wal_lsn()`)
	e.Exec(`INSERT INTO items VALUES (3, '9')`)
	e.Exec(`INSERT INTO other VALUES (2, 2)`)

	ph := ittest.WaitPhase(t, r, "public.items", func(p offsets.Table) bool { return p.Phase == offsets.PhaseErrored })
	if ph.ParkedLSN < before || ph.ParkedLSN >= after || ph.Retry != "resnapshot" {
		t.Errorf("items parked at %X (retry %q), want the failing insert's LSN, within %X..%X, and resnapshot", ph.ParkedLSN, ph.Retry, before, after)
	}
	for _, part := range []string{"codeToInt", "Cast$Value", "out of range"} {
		if !strings.Contains(ph.LastError, part) {
			t.Errorf("status error %q does not name %q", ph.LastError, part)
		}
	}
	items := ittest.ReadRaw(t, e.Kafka, 1, "tp.public.items")
	if v := string(items[0].Value); v != `{"id":1,"code":7}` {
		t.Errorf("items' snapshot row %s, want code cast to 7", v)
	}
	other := ittest.ReadRaw(t, e.Kafka, 2, "tp.public.other")
	if v := string(other[1].Value); v != `{"id":2,"v":2}` {
		t.Errorf("other's streamed row %s: the stream did not go on past items' failure", v)
	}
	if p := r.P.TablePhases()["public.other"]; p.Phase == offsets.PhaseErrored {
		t.Errorf("other errored too: %+v", p)
	}
	if n := testutil.ToFloat64(r.P.Metrics().FormatErrors.WithLabelValues("transform")); n != 1 {
		t.Errorf("mooncdc_format_errors_total{stage=transform} = %v, want 1", n)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
