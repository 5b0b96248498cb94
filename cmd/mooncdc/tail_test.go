package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// tailTS is the timestamp the tests give their records, so that the printed
// lines are known exactly.
var tailTS = time.Date(2025, 1, 2, 10, 4, 5, 123_000_000, time.UTC)

const tailTSText = `"timestamp":"2025-01-02T10:04:05.123Z"`

// createTopic creates topic with one partition (so that records print in
// the order they were produced).
func tailCreateTopic(t *testing.T, cl *kgo.Client, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

func tailProduce(t *testing.T, cl *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, r := range recs {
		if r.Timestamp.IsZero() {
			r.Timestamp = tailTS
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

func tailRec(topic, key, value string, headers ...string) *kgo.Record {
	r := &kgo.Record{Topic: topic, Key: []byte(key)}
	if value != "" {
		r.Value = []byte(value)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: headers[i], Value: []byte(headers[i+1])})
	}
	return r
}

// runTail runs the command line with a deadline, so that a tail that
// never gets its records fails the test instead of hanging it.
func runTail(t *testing.T, args []string, environ []string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code = run(ctx, append([]string{"tail"}, args...), environ, &out, &errb)
	if ctx.Err() != nil {
		t.Fatalf("tail %q did not finish in 60s; stdout:\n%s\nstderr:\n%s", args, out.String(), errb.String())
	}
	return code, out.String(), errb.String()
}

func tailRaw(b []byte) string { return `{"raw_base64":"` + base64.StdEncoding.EncodeToString(b) + `"}` }

func tailLines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

func TestTailPrintsJSONRecordsTombstonesAndHeadersDecoded(t *testing.T) {
	broker := kafkatest.New(t)
	cl := broker.Client(t)
	const topic = "shop.public.orders"
	tailCreateTopic(t, cl, topic)
	tailProduce(t, cl,
		// JSON with spaces and newlines, as a hand-written producer might send it.
		tailRec(topic, `{"id": 1}`, "{\n  \"before\": null,\n  \"after\": {\"id\": 1, \"note\": \"a <b> & c\", \"qty\": 2.50},\n  \"op\": \"c\"\n}",
			connector.HeaderLSN, "100", connector.HeaderCommitLSN, "120", connector.HeaderTxSeq, "0"),
		tailRec(topic, `{"id":1}`, "", connector.HeaderLSN, "130", connector.HeaderCommitLSN, "140", connector.HeaderTxSeq, "1"),
		tailRec(topic, `{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false},"payload":{"id":2}}`, `{"op":"d"}`),
	)

	code, stdout, stderr := runTail(t, []string{"--brokers", broker.Addr(), "--from-beginning", "--max", "3", topic}, nil)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	want := []string{
		`{"topic":"shop.public.orders","partition":0,"offset":0,` + tailTSText + `,"headers":{"mooncdc.commit_lsn":"120","mooncdc.lsn":"100","mooncdc.tx_seq":"0"},` +
			`"key":{"id":1},"value":{"before":null,"after":{"id":1,"note":"a <b> & c","qty":2.50},"op":"c"}}`,
		`{"topic":"shop.public.orders","partition":0,"offset":1,` + tailTSText + `,"headers":{"mooncdc.commit_lsn":"140","mooncdc.lsn":"130","mooncdc.tx_seq":"1"},` +
			`"key":{"id":1},"value":null}`,
		`{"topic":"shop.public.orders","partition":0,"offset":2,` + tailTSText + `,"headers":{},` +
			`"key":{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false},"payload":{"id":2}},"value":{"op":"d"}}`,
	}
	if got := tailLines(stdout); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, strings.Join(want, "\n"))
	}
	if !strings.Contains(stderr, "reading shop.public.orders from the beginning") {
		t.Errorf("stderr does not say where it reads from:\n%s", stderr)
	}

	// --pretty prints the same object indented.
	code, stdout, stderr = runTail(t, []string{"--pretty", "--brokers", broker.Addr(), topic, "--from-beginning", "--max=1"}, nil)
	if code != 0 {
		t.Fatalf("--pretty: exit %d, stderr:\n%s", code, stderr)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, []byte(want[0]), "", "  "); err != nil {
		t.Fatal(err)
	}
	if stdout != indented.String()+"\n" {
		t.Errorf("--pretty stdout:\n%s\nwant:\n%s", stdout, indented.String())
	}
	if !strings.Contains(stdout, "\n  \"value\": {\n    \"before\": null,\n") {
		t.Errorf("--pretty does not indent the value:\n%s", stdout)
	}
}

// Avro schemas of a Debezium-like key and value, with the types the
// rendering treats specially: unions of a primitive and of a record,
// decimals, timestamps, dates, bytes, NaN.
const (
	tailKeySchema   = `{"type":"record","name":"Key","namespace":"shop.public.orders","fields":[{"name":"id","type":"long"}]}`
	tailValueSchema = `{"type":"record","name":"Envelope","namespace":"shop.public.orders","fields":[
		{"name":"before","type":["null",{"type":"record","name":"Value","fields":[
			{"name":"id","type":"long"},
			{"name":"name","type":["null","string"],"default":null},
			{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
			{"name":"created","type":{"type":"long","logicalType":"timestamp-millis"}},
			{"name":"day","type":["null",{"type":"int","logicalType":"date"}],"default":null},
			{"name":"data","type":"bytes"},
			{"name":"score","type":"double"},
			{"name":"tags","type":{"type":"array","items":"string"}}]}],"default":null},
		{"name":"after","type":["null","Value"],"default":null},
		{"name":"op","type":"string"},
		{"name":"ts_ms","type":["null","long"],"default":null}]}`
)

// confluent frames an Avro encoding of v as Confluent's wire format.
func tailConfluent(t *testing.T, id int, schema string, v any) []byte {
	t.Helper()
	s, err := avro.ParseWithCache(schema, "", &avro.SchemaCache{})
	if err != nil {
		t.Fatal(err)
	}
	body, err := avro.Marshal(s, v)
	if err != nil {
		t.Fatalf("avro encode: %v", err)
	}
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), body...)
}

func tailRegistry(t *testing.T) (reg *srtest.Registry, keyID, valueID int) {
	t.Helper()
	reg = srtest.New(t)
	var err error
	if keyID, err = reg.Register("shop.public.orders-key", tailKeySchema); err != nil {
		t.Fatal(err)
	}
	if valueID, err = reg.Register("shop.public.orders-value", tailValueSchema); err != nil {
		t.Fatal(err)
	}
	return reg, keyID, valueID
}

func tailAvroEnviron(reg *srtest.Registry) []string {
	return []string{"MOONCDC_FORMAT_KEY=avro", "MOONCDC_FORMAT_VALUE=avro", "MOONCDC_FORMAT_SCHEMA_REGISTRY_URL=" + reg.URL()}
}

func TestTailDecodesConfluentAvroWithTheRegistrySchema(t *testing.T) {
	broker := kafkatest.New(t)
	cl := broker.Client(t)
	reg, keyID, valueID := tailRegistry(t)
	const topic = "shop.public.orders"
	tailCreateTopic(t, cl, topic)

	row := map[string]any{
		"id":      int64(7),
		"name":    "Zoë <x>",
		"price":   big.NewRat(1250, 100),
		"created": tailTS,
		"day":     time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC),
		"data":    []byte{0, 1, 2},
		"score":   0.25,
		"tags":    []any{"a", "b"},
	}
	envelope := map[string]any{"before": nil, "after": map[string]any{"shop.public.orders.Value": row}, "op": "c", "ts_ms": int64(1735812245123)}
	key := tailConfluent(t, keyID, tailKeySchema, map[string]any{"id": int64(7)})
	tailProduce(t, cl,
		&kgo.Record{Topic: topic, Key: key, Value: tailConfluent(t, valueID, tailValueSchema, envelope)},
		&kgo.Record{Topic: topic, Key: key}, // tombstone
	)

	code, stdout, stderr := runTail(t, []string{"--brokers", broker.Addr(), "--from-beginning", "--max", "2", topic}, tailAvroEnviron(reg))
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	want := []string{
		`{"topic":"shop.public.orders","partition":0,"offset":0,` + tailTSText + `,"headers":{},"key":{"id":7},` +
			`"value":{"before":null,"after":{"id":7,"name":"Zoë <x>","price":12.50,"created":"2025-01-02T10:04:05.123Z","day":"2025-01-02","data":"AAEC","score":0.25,"tags":["a","b"]},"op":"c","ts_ms":1735812245123}}`,
		`{"topic":"shop.public.orders","partition":0,"offset":1,` + tailTSText + `,"headers":{},"key":{"id":7},"value":null}`,
	}
	if got := tailLines(stdout); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, strings.Join(want, "\n"))
	}
	if strings.Contains(stderr, "raw_base64") {
		t.Errorf("stderr reports an undecoded record:\n%s", stderr)
	}

	// Without a registry the same bytes are not Avro to tail: raw, and
	// stderr says what to configure.
	code, stdout, stderr = runTail(t, []string{"--brokers", broker.Addr(), "--from-beginning", "--max", "1", topic}, nil)
	if code != 0 || !strings.Contains(stdout, `"key":{"raw_base64":"`) || !strings.Contains(stderr, "format.schema_registry.url") {
		t.Errorf("without a registry: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestTailStartsAtTheEndByDefault(t *testing.T) {
	broker := kafkatest.New(t)
	cl := broker.Client(t)
	const topic = "shop.public.orders"
	tailCreateTopic(t, cl, topic)
	tailProduce(t, cl, tailRec(topic, `{"id":1}`, `{"old":1}`), tailRec(topic, `{"id":2}`, `{"old":2}`))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr syncBuf
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"tail", "--brokers", broker.Addr(), "--max", "1", topic}, nil, &stdout, &stderr)
	}()
	// The notice comes once the end offsets are known: whatever is
	// produced after it is new.
	deadline, _ := ctx.Deadline()
	eventually.Succeeds(t, time.Until(deadline), 10*time.Millisecond, func() error {
		if strings.Contains(stderr.String(), "from the end") {
			return nil
		}
		select {
		case code := <-done:
			t.Fatalf("tail exited %d before reading; stderr:\n%s", code, stderr.String())
		default:
		}
		return fmt.Errorf("tail did not start; stderr:\n%s", stderr.String())
	})
	tailProduce(t, cl, tailRec(topic, `{"id":3}`, `{"new":3}`))
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
		}
	case <-ctx.Done():
		t.Fatalf("tail printed nothing new in 60s; stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	want := `{"topic":"shop.public.orders","partition":0,"offset":2,` + tailTSText + `,"headers":{},"key":{"id":3},"value":{"new":3}}` + "\n"
	if stdout.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), want)
	}
}

func TestTailWaitsForATopicThatDoesNotExistYet(t *testing.T) {
	broker := kafkatest.New(t)
	cl := broker.Client(t)
	const topic = "shop.public.later"

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr syncBuf
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"tail", "--brokers", broker.Addr(), "--max", "2", topic}, nil, &stdout, &stderr)
	}()
	deadline, _ := ctx.Deadline()
	eventually.Succeeds(t, time.Until(deadline), 10*time.Millisecond, func() error {
		if strings.Contains(stderr.String(), "does not exist yet") {
			return nil
		}
		select {
		case code := <-done:
			t.Fatalf("tail exited %d; stderr:\n%s", code, stderr.String())
		default:
		}
		return fmt.Errorf("no notice of the missing topic; stderr:\n%s", stderr.String())
	})
	// All the records of a topic created after the start are new, even
	// without --from-beginning.
	tailCreateTopic(t, cl, topic)
	tailProduce(t, cl, tailRec(topic, `{"id":1}`, `{"n":1}`), tailRec(topic, `{"id":2}`, `{"n":2}`))
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
		}
	case <-ctx.Done():
		t.Fatalf("the topic's records did not arrive; stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	if got := tailLines(stdout.String()); len(got) != 2 || !strings.Contains(got[0], `"offset":0`) || !strings.Contains(got[1], `"value":{"n":2}`) {
		t.Errorf("stdout:\n%s", stdout.String())
	}
}

func TestTailBadBytesDoNotStopIt(t *testing.T) {
	broker := kafkatest.New(t)
	cl := broker.Client(t)
	reg, keyID, valueID := tailRegistry(t)
	const topic, other = "shop.public.orders", "shop.public.other"
	tailCreateTopic(t, cl, topic)
	tailCreateTopic(t, cl, other)
	goodKey := tailConfluent(t, keyID, tailKeySchema, map[string]any{"id": int64(1)})
	framed := func(id int, body ...byte) []byte {
		return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), body...)
	}
	unknownID, truncated, tooLong := framed(999, 2), framed(valueID), append(slices.Clone(goodKey), 0)
	tailProduce(t, cl,
		&kgo.Record{Topic: topic, Key: []byte("plain text"), Value: []byte{0xff, 0xfe, '{'}},
		&kgo.Record{Topic: topic, Key: unknownID, Value: truncated},
		&kgo.Record{Topic: topic, Key: tooLong, Value: []byte{}},
		&kgo.Record{Topic: topic, Key: goodKey, Value: []byte(`{"fine":true}`)},
	)
	tailProduce(t, cl, &kgo.Record{Topic: other, Key: []byte{0, 0}, Value: []byte(`"ok"`)})

	code, stdout, stderr := runTail(t, []string{"--brokers", broker.Addr(), "--from-beginning", "--max", "5", topic, other}, tailAvroEnviron(reg))
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	got := map[string]string{}
	for _, l := range tailLines(stdout) {
		var r struct {
			Topic      string
			Offset     int64
			Key, Value json.RawMessage
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("not JSON: %s", l)
		}
		got[r.Topic[len("shop.public."):]+string(rune('0'+r.Offset))] = string(r.Key) + " " + string(r.Value)
	}
	want := map[string]string{
		"orders0": `{"raw_base64":"cGxhaW4gdGV4dA=="} {"raw_base64":"//57"}`,
		"orders1": tailRaw(unknownID) + " " + tailRaw(truncated),
		"orders2": tailRaw(tooLong) + ` {"raw_base64":""}`,
		"orders3": `{"id":1} {"fine":true}`,
		"other0":  `{"raw_base64":"AAA="} "ok"`,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: key and value %s, want %s", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("printed %d records, want %d:\n%s", len(got), len(want), stdout)
	}
	// One notice per topic, with the first record's reason.
	if n := strings.Count(stderr, "printed as"); n != 2 {
		t.Errorf("%d notices, want one per topic:\n%s", n, stderr)
	}
	for _, w := range []string{"shop.public.orders partition 0 offset 0: key: neither Confluent-framed Avro nor JSON", "shop.public.other partition 0 offset 0: key:"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
}

func TestTailPrintsTheDebeziumEnvelopesThatRunWrites(t *testing.T) {
	pg := pgtest.New(t)
	broker := kafkatest.New(t)
	if err := pg.Exec(context.Background(), "postgres", `CREATE TABLE t (id int PRIMARY KEY, note text); INSERT INTO t VALUES (1, 'old')`); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "name: e2e\npostgres:\n  tables: [public.t]\nmetrics:\n  listen: \"\"\n")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var runErr syncBuf
	runDone := make(chan int, 1)
	go func() {
		runDone <- run(ctx, []string{"run", "--config", cfg, "--postgres-url", pg.URL("postgres"), "--brokers", broker.Addr(), "--log-format", "console"}, nil, &bytes.Buffer{}, &runErr)
	}()
	defer func() {
		cancel()
		if code := <-runDone; code != 0 {
			t.Errorf("run exited %d:\n%s", code, runErr.String())
		}
	}()

	// The topic appears with the snapshot; tail waits for it.
	var stdout, stderr syncBuf
	tailDone := make(chan int, 1)
	go func() {
		tailDone <- run(ctx, []string{"tail", "--config", cfg, "--brokers", broker.Addr(), "--from-beginning", "--max", "2", "e2e.public.t"}, nil, &stdout, &stderr)
	}()
	// Once the snapshot's record is in Kafka, a new row is streamed.
	deadline, _ := ctx.Deadline()
	eventually.Succeeds(t, time.Until(deadline), 20*time.Millisecond, func() error {
		if !strings.Contains(stdout.String(), `"op":"r"`) {
			return fmt.Errorf("no snapshot record; tail stderr:\n%s\nrun:\n%s", stderr.String(), runErr.String())
		}
		return nil
	})
	if err := pg.Exec(context.Background(), "postgres", `INSERT INTO t VALUES (2, 'hello')`); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-tailDone:
		if code != 0 {
			t.Fatalf("tail exit %d, stderr:\n%s", code, stderr.String())
		}
	case <-ctx.Done():
		t.Fatalf("no insert record; stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}

	type envelope struct {
		Headers map[string]string
		Key     map[string]any
		Value   struct {
			Before, After map[string]any
			Op            string
			Source        map[string]any
		}
	}
	got := tailLines(stdout.String())
	if len(got) != 2 {
		t.Fatalf("printed %d records, want 2:\n%s", len(got), stdout.String())
	}
	var snap, insert envelope
	if err := json.Unmarshal([]byte(got[0]), &snap); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(got[1]), &insert); err != nil {
		t.Fatal(err)
	}
	if snap.Value.Op != "r" || snap.Value.After["note"] != "old" || snap.Key["id"] != 1.0 {
		t.Errorf("snapshot record: %s", got[0])
	}
	if insert.Value.Op != "c" || insert.Value.Before != nil || insert.Value.After["id"] != 2.0 || insert.Value.After["note"] != "hello" ||
		insert.Key["id"] != 2.0 || insert.Value.Source["table"] != "t" {
		t.Errorf("insert record: %s", got[1])
	}
	for _, h := range []string{connector.HeaderLSN, connector.HeaderCommitLSN, connector.HeaderTxSeq} {
		if insert.Headers[h] == "" {
			t.Errorf("header %s missing: %s", h, got[1])
		}
	}
}

func TestTailUsageErrorsExitTwo(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "no topic", args: []string{"--brokers", "127.0.0.1:1"}, want: []string{"name at least one topic", "Usage: mooncdc tail"}},
		{name: "bad topic", args: []string{"--brokers", "127.0.0.1:1", "shop.public.orders", "a/b"}, want: []string{`"a/b"`, "<topic prefix>.<schema>.<table>"}},
		{name: "negative max", args: []string{"--max", "-1", "t"}, want: []string{"--max -1"}},
		{name: "max not a number", args: []string{"t", "--max=lots"}, want: []string{"--max lots"}},
		{name: "max without value", args: []string{"t", "--max"}, want: []string{"--max: needs a number"}},
		{name: "pretty not a bool", args: []string{"--pretty=maybe", "t"}, want: []string{"--pretty=maybe"}},
		{name: "bad postgres url still checked", args: []string{"--postgres-url", "postgres://u:s3cret@h:x/db", "t"}, want: []string{"postgres.url:"}},
		{name: "avro without registry", args: []string{"--brokers", "127.0.0.1:1", "t"}, want: []string{"format.schema_registry.url: required"}},
		{name: "unknown flag", args: []string{"--follow", "t"}, want: []string{"-follow"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var environ []string
			if tt.name == "avro without registry" {
				environ = []string{"MOONCDC_FORMAT_VALUE=avro"}
			}
			code, stdout, stderr := runTail(t, tt.args, environ)
			if code != connector.ExitConfig {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, connector.ExitConfig, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if stdout != "" || strings.Contains(stderr, "s3cret") {
				t.Errorf("stdout %q; stderr:\n%s", stdout, stderr)
			}
		})
	}
}

func TestTailUnreachableKafkaExitsOne(t *testing.T) {
	old := tailStartTimeout
	tailStartTimeout = 2 * time.Second
	defer func() { tailStartTimeout = old }()
	code, stdout, stderr := runTail(t, []string{"--brokers", "127.0.0.1:1", "shop.public.orders"}, nil)
	if code != connector.ExitRuntime || !strings.Contains(stderr, "kafka.brokers 127.0.0.1:1") || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

func TestTailStopsCleanlyOnCancel(t *testing.T) {
	broker := kafkatest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuf
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"tail", "--brokers", broker.Addr(), "nothing.here"}, nil, &stdout, &stderr)
	}()
	eventually.Within(30*time.Second, 10*time.Millisecond, func() bool { return strings.Contains(stderr.String(), "does not exist yet") })
	cancel() // what SIGINT does
	select {
	case code := <-done:
		if code != 0 || stdout.String() != "" {
			t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout.String(), stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("tail did not stop on cancel")
	}
}

func TestTailHelp(t *testing.T) {
	for _, args := range [][]string{{"help", "tail"}, {"tail", "--help"}, {"tail", "-h"}} {
		code, stdout, _ := runCLI(t, args, nil)
		if code != 0 {
			t.Errorf("%q: exit %d", args, code)
		}
		for _, w := range []string{"Usage: mooncdc tail", "--pretty", "--from-beginning", "--max N", "<topic prefix>.<schema>.<table>", "raw_base64", "read_committed", "--brokers"} {
			if !strings.Contains(stdout, w) {
				t.Errorf("%q: usage does not mention %s", args, w)
			}
		}
	}
}

func TestTailSplitFlags(t *testing.T) {
	tests := []struct {
		args []string
		want tailOptions
		rest []string
	}{
		{args: []string{"a", "--pretty", "b"}, want: tailOptions{pretty: true}, rest: []string{"a", "b"}},
		{args: []string{"-from-beginning", "--max", "3", "a"}, want: tailOptions{fromBeginning: true, max: 3}, rest: []string{"a"}},
		{args: []string{"--max=0", "--pretty=false", "a"}, want: tailOptions{}, rest: []string{"a"}},
		// A config flag's value is not a tail flag, nor is anything after "--".
		{args: []string{"--name", "--pretty", "a", "--", "--max"}, rest: []string{"--name", "--pretty", "a", "--", "--max"}},
		{args: []string{"--config=f.yaml", "--pretty", "a"}, want: tailOptions{pretty: true}, rest: []string{"--config=f.yaml", "a"}},
	}
	for _, tt := range tests {
		o, rest, err := splitTailFlags(tt.args)
		if err != nil || o != tt.want || strings.Join(rest, " ") != strings.Join(tt.rest, " ") {
			t.Errorf("splitTailFlags(%q) = %+v, %q, %v; want %+v, %q", tt.args, o, rest, err, tt.want, tt.rest)
		}
	}
}
