package ddl

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// slotWAL returns the WAL the slot retains (current − restart_lsn) and how
// far its confirmed_flush_lsn trails the current WAL position.
func slotWAL(t *testing.T, e *ittest.Env, slot string) (retained, behind int64) {
	t.Helper()
	conn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	err = conn.QueryRow(context.Background(), `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint,
		pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint
		FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&retained, &behind)
	if err != nil {
		t.Fatal(err)
	}
	return retained, behind
}

// An idle captured database while another database writes 100 MB: the
// slot must not keep that WAL. Two things move it: the stream confirms the
// server's WAL end from keepalives when nothing is pending, and the
// heartbeats (a logical message into the captured database when the stream
// is idle) give it a position of its own to confirm when the walsender
// sends none. (With heartbeat.interval 0 the bound still holds here through
// the keepalives; the heartbeat records below do not.)
func TestHeartbeatsKeepAnIdleSlotsWALBounded(t *testing.T) {
	e := ittest.NewPrivateEnv(t) // it makes a database
	e.Exec(`CREATE TABLE public.idle (id int PRIMARY KEY)`)
	e.Exec(`CREATE DATABASE other`)
	if err := e.PG.Exec(context.Background(), "other", `CREATE TABLE big (id int PRIMARY KEY, pad text)`); err != nil {
		t.Fatal(err)
	}
	cfg := e.Config("hb", "public.idle")
	cfg.Heartbeat.Interval = 500 * time.Millisecond
	ittest.Start(t, cfg)

	// ~100 MB of WAL in the other database (1,000-byte rows, uncompressible
	// enough: md5 chains), in 10 transactions.
	for i := range 10 {
		err := e.PG.Exec(context.Background(), "other", `INSERT INTO big SELECT g, repeat(md5(g::text), 32)
			FROM generate_series($1::int, $1::int + 9999) g`, i*10000)
		if err != nil {
			t.Fatal(err)
		}
	}
	if retained, _ := slotWAL(t, e, "mooncdc_hb"); retained < 90<<20 {
		t.Logf("retained %d bytes right after the load", retained)
	}
	// restart_lsn moves at the next xl_running_xacts the slot decodes past
	// its confirmed position (the background writer logs one every 15 s
	// while WAL is written); then the slot keeps little.
	const bound = 16 << 20
	eventually.Succeeds(t, 90*time.Second, 250*time.Millisecond, func() error {
		retained, behind := slotWAL(t, e, "mooncdc_hb")
		if retained < bound && behind < 1<<20 {
			t.Logf("slot retains %d bytes, confirmed %d bytes behind the WAL", retained, behind)
			return nil
		}
		return fmt.Errorf("after 100 MB written elsewhere the idle slot still retains %d bytes (confirmed %d behind); want < %d", retained, behind, bound)
	})

	// The heartbeats reached Kafka as records, and not as messages.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Debezium's default heartbeat topic (HeartbeatImpl.java:46,
	// AbstractTopicNamingStrategy.java:142-147).
	recs := kafkatest.ReadAll(ctx, t, e.Kafka, 1, "__debezium-heartbeat.hb")
	if len(recs) == 0 {
		t.Fatal("no heartbeat record on __debezium-heartbeat.hb")
	}
	if got := string(recs[0].Key); got != `{"serverName":"hb"}` {
		t.Errorf("heartbeat key = %s, want {\"serverName\":\"hb\"}", got)
	}
	// Debezium's value is {ts_ms} and nothing else (HeartbeatImpl.java:163-166).
	var v map[string]int64
	if err := json.Unmarshal(recs[0].Value, &v); err != nil || v["ts_ms"] == 0 || len(v) != 1 {
		t.Errorf("heartbeat value %s: want {\"ts_ms\":…} (%v)", recs[0].Value, err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	if msgs := kafkatest.ReadAll(ctx2, t, e.Kafka, -1, "hb.message"); len(msgs) != 0 {
		t.Errorf("heartbeats leaked into hb.message: %d records", len(msgs))
	}
}

// probeHeartbeats consumes a test_decoding slot and counts mooncdc's
// heartbeat messages in it.
func probeHeartbeats(t *testing.T, e *ittest.Env) int {
	t.Helper()
	conn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	err = conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_logical_slot_get_changes('probe', NULL, NULL)
		WHERE data LIKE '%prefix: ' || $1 || '%'`, config.HeartbeatMessagePrefix).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// heartbeat.records false keeps the heartbeats in Postgres only, and
// heartbeat.interval 0 turns them off.
func TestHeartbeatRecordsCanBeTurnedOff(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	e.Exec(`SELECT pg_create_logical_replication_slot('probe', 'test_decoding')`)
	cfg := e.Config("quiet", "public.t")
	cfg.Heartbeat.Interval = 200 * time.Millisecond
	cfg.Heartbeat.Records = false
	r := ittest.Start(t, cfg)
	time.Sleep(2 * time.Second)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	// An emit cancelled by the stop may still commit on the server after
	// the client gave up on it: let it land before the probe reads.
	time.Sleep(500 * time.Millisecond)
	if n := probeHeartbeats(t, e); n < 3 {
		t.Errorf("%d heartbeat messages in 2s at a 200ms interval; want several", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if recs := kafkatest.ReadAll(ctx, t, e.Kafka, -1, "__debezium-heartbeat.quiet"); len(recs) != 0 {
		t.Errorf("heartbeat.records false, yet %d heartbeat records", len(recs))
	}

	cfg.Heartbeat.Interval = 0
	r = ittest.Start(t, cfg)
	time.Sleep(2 * time.Second)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	if n := probeHeartbeats(t, e); n != 0 {
		t.Errorf("heartbeat.interval 0, yet %d heartbeat messages", n)
	}
	cfg.Heartbeat.Interval = 10 * time.Millisecond
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "heartbeat.interval") {
		t.Errorf("heartbeat.interval 10ms: want an error naming the key, got %v", err)
	}
}

// Exactly-once: heartbeat records are written in Kafka transactions that
// commit (read_committed sees them), the stop is clean, and a heartbeat
// message of another connector on the same database makes no record.
func TestHeartbeatsInExactlyOnceModeAndOnlyOurOwn(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	cfg := e.Config("eo", "public.t")
	cfg.Kafka.Delivery = config.DeliveryExactlyOnce
	cfg.Heartbeat.Interval = 300 * time.Millisecond
	r := ittest.Start(t, cfg)
	foreign := e.LSN(`SELECT pg_logical_emit_message(false, '` + config.HeartbeatMessagePrefix + `', '{"name":"other","ts_ms":1}')`)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	recs := kafkatest.ReadAll(ctx, t, e.Kafka, 3, "__debezium-heartbeat.eo")
	if len(recs) < 3 {
		t.Fatalf("%d heartbeat records read_committed, want 3", len(recs))
	}
	for _, rec := range recs {
		var lsn uint64 // the message's, in the mooncdc.lsn header (the value is Debezium's {ts_ms})
		for _, h := range rec.Headers {
			if h.Key == connector.HeaderLSN {
				lsn, _ = strconv.ParseUint(string(h.Value), 10, 64)
			}
		}
		if string(rec.Key) != `{"serverName":"eo"}` || lsn == 0 || lsn == foreign {
			t.Errorf("heartbeat record %s %s: another connector's heartbeat (lsn %d) made a record, or the key is wrong", rec.Key, rec.Value, foreign)
		}
	}
	if err := r.Stop(t); err != nil {
		t.Fatalf("clean stop after heartbeats in exactly-once mode: %v", err)
	}
}

// Heartbeat records in the configured formats, as Debezium's heartbeats
// go through its converters: Avro with schemas registered under the
// heartbeat topic's subjects, and JSON with schemas.
func TestHeartbeatRecordsInTheConfiguredFormats(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)

	reg := srtest.New(t)
	cfg := ittest.AvroConfig(e, reg, "hbavro", "public.t")
	cfg.Heartbeat.Interval = 200 * time.Millisecond
	r := ittest.Start(t, cfg)
	recs := ittest.ReadAvro(t, reg, e.Kafka, 1, "__debezium-heartbeat.hbavro")
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	if got := recs[0].Key["serverName"]; got != "hbavro" {
		t.Errorf("Avro heartbeat key %v, want serverName hbavro", recs[0].Key)
	}
	if ts, _ := recs[0].Value["ts_ms"].(int64); ts <= 0 {
		t.Errorf("Avro heartbeat value %v, want ts_ms", recs[0].Value)
	}
	if len(recs[0].Value) != 1 {
		t.Errorf("Avro heartbeat value %v, want ts_ms alone", recs[0].Value)
	}
	for _, subject := range []string{"__debezium-heartbeat.hbavro-key", "__debezium-heartbeat.hbavro-value"} {
		if len(reg.Versions(subject)) != 1 {
			t.Errorf("subject %s: %d versions registered, want 1", subject, len(reg.Versions(subject)))
		}
	}

	cfg = e.Config("hbjs", "public.t")
	cfg.Format.JSONSchemas = true
	cfg.Heartbeat.Interval = 200 * time.Millisecond
	r = ittest.Start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw := kafkatest.ReadAll(ctx, t, e.Kafka, 1, "__debezium-heartbeat.hbjs")
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	if len(raw) == 0 {
		t.Fatal("no heartbeat record with json_schemas")
	}
	ittest.UnwrapConnect(t, raw[0]) // JsonConverter's rules
	// ServerNameKey and Heartbeat, version 1 (SchemaFactory.java:53-57, 165-179).
	wantKey := `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"serverName"}],"optional":false,` +
		`"name":"io.debezium.connector.common.ServerNameKey","version":1},"payload":{"serverName":"hbjs"}}`
	if string(raw[0].Key) != wantKey {
		t.Errorf("key\n got  %s\n want %s", raw[0].Key, wantKey)
	}
	wantSchema := `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"ts_ms"}],"optional":false,` +
		`"name":"io.debezium.connector.common.Heartbeat","version":1},"payload":{"ts_ms":`
	var v struct {
		Payload map[string]int64 `json:"payload"`
	}
	if err := json.Unmarshal(raw[0].Value, &v); err != nil || !strings.HasPrefix(string(raw[0].Value), wantSchema) ||
		v.Payload["ts_ms"] <= 0 || len(v.Payload) != 1 {
		t.Errorf("value %s: want %s…} (%v)", raw[0].Value, wantSchema, err)
	}
}
