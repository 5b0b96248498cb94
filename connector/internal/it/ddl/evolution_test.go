package ddl

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/srtest"
	"github.com/mooncdc/mooncdc/offsets"
)

// evolutionEnv starts a pipeline with Avro records of public.a (id int
// primary key, v int) and public.b, with the DDL event trigger installed
// by run (trigger) or without it (the change derived from pgoutput's
// Relation messages).
func evolutionEnv(t *testing.T, name string, mode config.Delivery, trigger bool, policy string) (*ittest.Env, *srtest.Registry, *ittest.Running) {
	e, reg, _, r := evolutionEnvConfig(t, name, mode, trigger, policy)
	return e, reg, r
}

func evolutionEnvConfig(t *testing.T, name string, mode config.Delivery, trigger bool, policy string) (*ittest.Env, *srtest.Registry, config.Config, *ittest.Running) {
	t.Helper()
	e := ittest.NewEnv(t)
	reg := srtest.New(t)
	e.Exec(`CREATE TABLE public.a (id int PRIMARY KEY, v int)`)
	e.Exec(`CREATE TABLE public.b (id int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO a VALUES (1, 1), (2, 2)`)
	cfg := ittest.AvroConfig(e, reg, name, "public.a", "public.b")
	cfg.Kafka.Delivery = mode
	cfg.DDL.Capture = trigger
	cfg.Format.SchemaRegistry.SchemaEvolution = policy
	cfg.Heartbeat.Records = false
	return e, reg, cfg, ittest.Start(t, cfg)
}

// avroRows rebuilds a table from its Avro records as a consumer does: per
// key the last record wins, a delete or tombstone removes the row. v is
// printed with %v (an int before an int→text change, a string after).
func avroRows(t *testing.T, reg *srtest.Registry, addr, topic string) (rows map[int]string, recs []ittest.AvroRecord) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rows = map[int]string{}
	for _, r := range kafkatest.ReadAll(ctx, t, addr, -1, topic) {
		var ar ittest.AvroRecord
		ar.KeyID, ar.Key = ittest.DecodeAvro(t, reg, r.Key)
		id := ar.Key["id"].(int)
		if r.Value == nil {
			delete(rows, id)
			continue
		}
		ar.ValueID, ar.Value = ittest.DecodeAvro(t, reg, r.Value)
		recs = append(recs, ar)
		a, ok := ar.Value["after"].(map[string]any)
		if !ok {
			delete(rows, id)
			continue
		}
		rows[id] = fmt.Sprint(a["v"])
	}
	return rows, recs
}

// pgRows is what Postgres holds in table (id, v::text).
func pgRows(t *testing.T, e *ittest.Env, table string) map[int]string {
	t.Helper()
	conn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT id, coalesce(v::text, '<nil>') FROM `+table)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for rows.Next() {
		var id int
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		out[id] = v
	}
	return out
}

// TestIncompatibleDDLParksTheTableAtItsDDL: with schema_evolution park,
// an ALTER COLUMN TYPE int→text, which BACKWARD compatibility refuses,
// parks the table at the DDL itself (the status names the DDL and the
// registry's reason) before any row of the new shape; every row before it
// is written, none after it, the other table streams on, and after the
// subject is made to accept the change and the table is copied again a
// consumer rebuilding it sees what Postgres holds. Both delivery modes;
// with the event trigger (decided at its DDL message) and without it
// (decided at the new Relation message, before its first row).
func TestIncompatibleDDLParksTheTableAtItsDDL(t *testing.T) {
	for _, trigger := range []bool{true, false} {
		for _, mode := range []config.Delivery{config.DeliveryAtLeastOnce, config.DeliveryExactlyOnce} {
			t.Run(fmt.Sprintf("%s/trigger=%v", mode, trigger), func(t *testing.T) {
				e, reg, r := evolutionEnv(t, "park", mode, trigger, config.EvolutionPark)
				e.Exec(`INSERT INTO a VALUES (3, 3)`)
				e.Exec(`INSERT INTO b VALUES (1, 'one')`)
				// Rows of both shapes in one transaction, around the DDL, and
				// more of the new shape right after, all in flight at once.
				alter := `ALTER TABLE a ALTER COLUMN v TYPE text`
				e.Exec(`BEGIN; INSERT INTO a VALUES (4, 4); UPDATE a SET v = 20 WHERE id = 2; ` + alter + `; INSERT INTO a VALUES (5, 'five'); COMMIT`)
				e.Exec(`INSERT INTO a VALUES (6, 'six')`)
				e.Exec(`UPDATE a SET v = 'one' WHERE id = 1`)
				e.Exec(`INSERT INTO b VALUES (2, 'two')`)

				ph := ittest.WaitPhase(t, r, "public.a", func(p offsets.Table) bool { return p.Phase == "errored" })
				if ph.Retry != "resnapshot" || !strings.Contains(ph.LastError, "park.public.a-value") ||
					!strings.Contains(ph.LastError, "schema_evolution") || !strings.Contains(ph.LastError, "cannot read") {
					t.Fatalf("errored phase = %+v", ph)
				}
				if trigger && !strings.Contains(ph.LastError, alter) {
					t.Fatalf("the status does not name the DDL: %s", ph.LastError)
				}
				ittest.ReadAvro(t, reg, e.Kafka, 2, "park.public.b") // b streams on
				e.Exec(`INSERT INTO a VALUES (7, 'seven')`)
				e.Exec(`INSERT INTO b VALUES (3, 'three')`)
				ittest.ReadAvro(t, reg, e.Kafka, 3, "park.public.b")

				// Exactly the rows before the DDL: snapshot 1, 2; then 3, 4 and
				// the update of 2; nothing of the new shape.
				rows, recs := avroRows(t, reg, e.Kafka, "park.public.a")
				if want := map[int]string{1: "1", 2: "20", 3: "3", 4: "4"}; fmt.Sprint(rows) != fmt.Sprint(want) || len(recs) != 5 {
					t.Fatalf("table a from Kafka %v (%d records), want %v in 5 records", rows, len(recs), want)
				}
				if v := reg.Versions("park.public.a-value"); len(v) != 1 {
					t.Fatalf("value subject versions %v: the refused schema was registered", v)
				}

				// The operator makes the registry accept the change, then
				// copies the table again.
				reg.SetCompatibility("park.public.a-value", srtest.None)
				ittest.Resnapshot(t, "park", e, r, "public.a")
				ittest.WaitPhase(t, r, "public.a", func(p offsets.Table) bool { return p.Phase == "ready" || p.Phase == "catchup" })
				e.Exec(`INSERT INTO a VALUES (8, 'eight')`)
				e.Exec(`UPDATE a SET v = 'three' WHERE id = 3`)
				want := pgRows(t, e, "a")
				eventually.Succeeds(t, 60*time.Second, 200*time.Millisecond, func() error {
					if rows, _ := avroRows(t, reg, e.Kafka, "park.public.a"); fmt.Sprint(rows) != fmt.Sprint(want) {
						return fmt.Errorf("table a rebuilt from Kafka %v, Postgres holds %v", rows, want)
					}
					return nil
				})
				if err := r.Stop(t); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestCompatibleDDLStreamsWithoutPause: a nullable column added (BACKWARD
// compatible) is checked at the DDL and streams on: no park, the rows of
// both shapes in order, a second value schema version.
func TestCompatibleDDLStreamsWithoutPause(t *testing.T) {
	for _, trigger := range []bool{true, false} {
		t.Run(fmt.Sprintf("trigger=%v", trigger), func(t *testing.T) {
			e, reg, r := evolutionEnv(t, "compat", config.DeliveryAtLeastOnce, trigger, config.EvolutionPark)
			e.Exec(`BEGIN; INSERT INTO a VALUES (3, 3); ALTER TABLE a ADD COLUMN note text; INSERT INTO a VALUES (4, 4, 'n'); COMMIT`)
			e.Exec(`INSERT INTO a VALUES (5, 5, 'm')`)
			recs := ittest.ReadAvro(t, reg, e.Kafka, 5, "compat.public.a")
			for i, rec := range recs {
				if got := ittest.After(t, rec)["id"]; got != i+1 {
					t.Fatalf("record %d has id %v", i, got)
				}
			}
			if got := ittest.After(t, recs[4])["note"]; got != "m" {
				t.Errorf("record after the ALTER: %v", ittest.After(t, recs[4]))
			}
			if ph := r.P.TablePhases()["public.a"]; ph.Phase != "ready" {
				t.Errorf("phase %+v", ph)
			}
			if v := reg.Versions("compat.public.a-value"); len(v) != 2 {
				t.Errorf("value subject versions %v, want 2", v)
			}
			if n := reg.Requests(srtest.EndpointCompatibility); n == 0 {
				t.Error("the registry was not asked at the schema change")
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestIncompatibleDDLUnderNewSubjectAndForce: new_subject registers the
// new shape under <topic>-value-v2 and streams on, and a restart keeps to
// that subject; force registers it under the same subject with NONE for
// that one registration and puts the subject's level back (its own, or
// none). Neither parks the table or loses a row; with the event trigger
// and without it.
func TestIncompatibleDDLUnderNewSubjectAndForce(t *testing.T) {
	for _, tc := range []struct {
		policy  string
		own     srtest.Level // the subject's own level before, "" for none
		trigger bool
	}{
		{config.EvolutionNewSubject, "", true}, {config.EvolutionForce, srtest.Full, true}, {config.EvolutionForce, "", true},
		{config.EvolutionNewSubject, "", false}, {config.EvolutionForce, "", false},
	} {
		t.Run(fmt.Sprintf("%s/%s/trigger=%v", tc.policy, tc.own, tc.trigger), func(t *testing.T) {
			name := strings.ReplaceAll(tc.policy, "_", "")
			e, reg, cfg, r := evolutionEnvConfig(t, name, config.DeliveryExactlyOnce, tc.trigger, tc.policy)
			subject := name + ".public.a-value"
			if tc.own != "" {
				reg.SetCompatibility(subject, tc.own)
			}
			e.Exec(`BEGIN; INSERT INTO a VALUES (3, 3); ALTER TABLE a ALTER COLUMN v TYPE text; INSERT INTO a VALUES (4, 'four'); COMMIT`)
			e.Exec(`INSERT INTO a VALUES (5, 'five')`)
			recs := ittest.ReadAvro(t, reg, e.Kafka, 5, name+".public.a")
			for i, rec := range recs {
				if got := ittest.After(t, rec)["id"]; got != i+1 {
					t.Fatalf("record %d has id %v", i, got)
				}
			}
			if got := ittest.After(t, recs[4])["v"]; got != "five" {
				t.Errorf("record after the ALTER: %v", ittest.After(t, recs[4]))
			}
			if ph := r.P.TablePhases()["public.a"]; ph.Phase != "ready" {
				t.Fatalf("phase %+v", ph)
			}
			switch tc.policy {
			case config.EvolutionNewSubject:
				if v := reg.Versions(subject); len(v) != 1 {
					t.Errorf("%s versions %v, want the first only", subject, v)
				}
				if v := reg.Versions(subject + "-v2"); len(v) != 1 {
					t.Errorf("%s-v2 versions %v, want 1", subject, v)
				}
				// A restart finds the newest generation: the same shape
				// goes on under -v2, and a compatible change follows it.
				if err := r.Stop(t); err != nil {
					t.Fatal(err)
				}
				r = ittest.Start(t, cfg)
				e.Exec(`INSERT INTO a VALUES (6, 'six')`)
				e.Exec(`ALTER TABLE a ADD COLUMN note text`)
				e.Exec(`INSERT INTO a VALUES (7, 'seven', 'n')`)
				recs = ittest.ReadAvro(t, reg, e.Kafka, 7, name+".public.a")
				if got := ittest.After(t, recs[6])["note"]; got != "n" {
					t.Errorf("record after the restart and a compatible change: %v", ittest.After(t, recs[6]))
				}
				if v := reg.Versions(subject); len(v) != 1 {
					t.Errorf("%s versions %v after the restart, want the first only", subject, v)
				}
				if v := reg.Versions(subject + "-v2"); len(v) != 2 {
					t.Errorf("%s-v2 versions %v, want 2 (the changed type, then the added column)", subject, v)
				}
			case config.EvolutionForce:
				if v := reg.Versions(subject); len(v) != 2 {
					t.Errorf("%s versions %v, want 2", subject, v)
				}
				want := tc.own
				if want == "" {
					want = srtest.Backward // the global level applies again
				}
				if l := reg.Compatibility(subject); l != want {
					t.Errorf("%s compatibility %s after force, want %s", subject, l, want)
				}
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestParkAtDDLSurvivesACrashBeforeTheDDLIsDurable: the table's errored
// phase is stored at once, while the rows before the DDL may still be in
// an open Kafka transaction. A crash then aborts that transaction; the
// restart replays it from the durable LSN and must still write the rows
// before the DDL (the park holds from the DDL's position on, not from its
// transaction's start), and none after it.
func TestParkAtDDLSurvivesACrashBeforeTheDDLIsDurable(t *testing.T) {
	e := ittest.NewEnv(t)
	reg := srtest.New(t)
	e.Exec(`CREATE TABLE public.a (id int PRIMARY KEY, v int)`)
	e.Exec(`CREATE TABLE public.b (id int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO a VALUES (1, 1), (2, 2)`)
	cfg := ittest.AvroConfig(e, reg, "crash", "public.a", "public.b")
	cfg.Kafka.Delivery = config.DeliveryExactlyOnce
	cfg.DDL.Capture = true
	cfg.Heartbeat.Records = false
	r := ittest.Start(t, cfg)
	slow := cfg
	slow.Kafka.TransactionMaxInterval = time.Minute // the DDL's Kafka transaction stays open
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	r = ittest.StartStreaming(t, slow)

	e.Exec(`INSERT INTO a VALUES (3, 3)`)
	e.Exec(`BEGIN; INSERT INTO a VALUES (4, 4); UPDATE a SET v = 20 WHERE id = 2; ALTER TABLE a ALTER COLUMN v TYPE text; INSERT INTO a VALUES (5, 'five'); COMMIT`)
	e.Exec(`INSERT INTO b VALUES (1, 'one')`)
	ittest.WaitPhase(t, r, "public.a", func(p offsets.Table) bool { return p.Phase == "errored" })
	// Crash once the park is stored: an abort racing the park's own write
	// to the offsets topic is another test's matter.
	eventually.True(t, 60*time.Second, 50*time.Millisecond, "the park of public.a is not in the offsets topic",
		func() bool { return parkStored(t, e.Kafka, "crash", "public.a") })
	r.Crash(t)

	r = ittest.StartStreaming(t, cfg)
	ittest.ReadAvro(t, reg, e.Kafka, 1, "crash.public.b")
	rows, recs := avroRows(t, reg, e.Kafka, "crash.public.a")
	if want := map[int]string{1: "1", 2: "20", 3: "3", 4: "4"}; fmt.Sprint(rows) != fmt.Sprint(want) || len(recs) != 5 {
		t.Fatalf("table a from Kafka %v (%d records), want %v in 5 records", rows, len(recs), want)
	}
	if ph := r.P.TablePhases()["public.a"]; ph.Phase != "errored" || !strings.Contains(ph.LastError, "ALTER COLUMN v TYPE text") {
		t.Fatalf("after the restart: %+v", ph)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// parkStored reports whether the offsets topic holds table's errored
// phase with its park position.
func parkStored(t *testing.T, addr, name, table string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, rec := range kafkatest.ReadAll(ctx, t, addr, -1, "mooncdc-offsets") {
		if strings.Contains(string(rec.Key), `"`+name+`"`) && strings.Contains(string(rec.Key), `"table":"`+table+`"`) &&
			strings.Contains(string(rec.Value), `"phase":"errored"`) && strings.Contains(string(rec.Value), `"parked_lsn":`) {
			return true
		}
	}
	return false
}

// TestIncompatibleChangeWhileStoppedFollowsThePolicy: a change no DDL
// check saw (made while mooncdc was stopped: the restart's first shape is
// no change) is refused at its first row's registration; new_subject and
// force act there as at a DDL, park parks the table; and a resnapshot
// after switching a parked table's policy to new_subject copies it under
// the new subject.
func TestIncompatibleChangeWhileStoppedFollowsThePolicy(t *testing.T) {
	for _, policy := range []string{config.EvolutionNewSubject, config.EvolutionForce, config.EvolutionPark} {
		t.Run(policy, func(t *testing.T) {
			name := "stopped" + strings.ReplaceAll(policy, "_", "")
			e, reg, cfg, r := evolutionEnvConfig(t, name, config.DeliveryAtLeastOnce, false, policy)
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
			e.Exec(`ALTER TABLE a ALTER COLUMN v TYPE text`)
			r = ittest.StartStreaming(t, cfg)
			e.Exec(`INSERT INTO a VALUES (3, 'three')`)
			subject := name + ".public.a-value"
			if policy == config.EvolutionPark {
				ph := ittest.WaitPhase(t, r, "public.a", func(p offsets.Table) bool { return p.Phase == "errored" })
				if !strings.Contains(ph.LastError, "incompatible") {
					t.Fatalf("errored phase %+v", ph)
				}
				if err := r.Stop(t); err != nil {
					t.Fatal(err)
				}
				cfg.Format.SchemaRegistry.SchemaEvolution = config.EvolutionNewSubject
				r = ittest.StartStreaming(t, cfg)
				ittest.Resnapshot(t, name, e, r, "public.a")
				ittest.WaitPhase(t, r, "public.a", func(p offsets.Table) bool { return p.Phase == "ready" || p.Phase == "catchup" })
				e.Exec(`INSERT INTO a VALUES (4, 'four')`)
				want := pgRows(t, e, "a")
				eventually.Succeeds(t, 60*time.Second, 200*time.Millisecond, func() error {
					if rows, _ := avroRows(t, reg, e.Kafka, name+".public.a"); fmt.Sprint(rows) != fmt.Sprint(want) {
						return fmt.Errorf("table a rebuilt from Kafka %v, Postgres holds %v", rows, want)
					}
					return nil
				})
				if v := reg.Versions(subject + "-v2"); len(v) != 1 {
					t.Errorf("%s-v2 versions %v, want 1 (the copy's)", subject, v)
				}
			} else {
				recs := ittest.ReadAvro(t, reg, e.Kafka, 3, name+".public.a")
				if got := ittest.After(t, recs[2])["v"]; got != "three" {
					t.Fatalf("record after the change: %v", ittest.After(t, recs[2]))
				}
				if ph := r.P.TablePhases()["public.a"]; ph.Phase != "ready" {
					t.Fatalf("phase %+v", ph)
				}
				if policy == config.EvolutionNewSubject {
					if v := reg.Versions(subject + "-v2"); len(v) != 1 {
						t.Errorf("%s-v2 versions %v, want 1", subject, v)
					}
				} else if v := reg.Versions(subject); len(v) != 2 {
					t.Errorf("%s versions %v, want 2", subject, v)
				}
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}
