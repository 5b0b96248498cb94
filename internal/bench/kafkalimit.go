package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
)

// The Kafka limit of the snapshot part: franz-go alone producing records
// of the shape of mooncdc's snapshot records into a fresh kfake broker.
const kafkaLimitTopic = "kafkalimit." + snapQualified

// kafkaLimitResult is the Kafka limit run. Times are from the first
// Produce call.
type kafkaLimitResult struct {
	elapsed    time.Duration // first Produce → every promise returned OK
	records    int64         // in the topic afterwards
	keyBytes   int64
	valueBytes int64
	window     int64 // in-flight bytes bound
	template   bool  // the values follow mooncdc's first record
	clientCPU  cpuTime
	brokerCPU  cpuTime
	hostBusy   time.Duration
	// brokerBytes is the broker's data directory after the run: the
	// records as stored (compressed batches).
	brokerBytes int64
}

// snapValueMaker builds the record of row id: a Debezium-like snapshot
// envelope whose "after" holds the row as loadSnapshotTable makes it (id,
// payload md5(id)||md5(id+1), n id%1000, at) and whose other fields are
// those of mooncdc's first record when there is one, so that the values
// have mooncdc's size and compressibility; and mooncdc's three headers
// (connector/internal/record/headers.go), the LSNs of its first record and the row's
// number.
type snapValueMaker struct {
	at     []byte // the "at" column, a JSON value
	suffix []byte // from `,"source":` to the end
	// lsn and commit are the first two headers' values, shared by every
	// record (franz-go only reads them).
	lsn, commit []byte
}

func newSnapValueMaker(first *kgo.Record) (m snapValueMaker, fromTemplate bool) {
	m.lsn, m.commit = []byte("12345678"), []byte("12345678")
	if first != nil {
		for _, h := range first.Headers {
			switch h.Key {
			case connector.HeaderLSN:
				m.lsn = h.Value
			case connector.HeaderCommitLSN:
				m.commit = h.Value
			}
		}
		var v struct {
			After map[string]json.RawMessage `json:"after"`
		}
		if json.Unmarshal(first.Value, &v) == nil && v.After["at"] != nil {
			if i := bytes.Index(first.Value, []byte(`},"source":`)); i >= 0 {
				m.at, m.suffix = v.After["at"], append([]byte(nil), first.Value[i+1:]...)
				return m, true
			}
		}
	}
	now := time.Now().UTC()
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	m.at = []byte(`"` + now.Format("2006-01-02T15:04:05.000000Z") + `"`)
	m.suffix = []byte(`,"source":{"version":"` + config.Version + `","connector":"postgresql","name":"` + snapConnector +
		`","ts_ms":` + ms + `,"snapshot":"true","db":"postgres","sequence":"[null,\"12345678\"]","schema":"public","table":"` + snapTable +
		`","txId":789,"lsn":12345678,"xmin":null},"op":"r","ts_ms":` + ms + `,"transaction":null}`)
	return m, false
}

func appendMD5(dst []byte, id int64) []byte {
	sum := md5.Sum(strconv.AppendInt(nil, id, 10))
	return hex.AppendEncode(dst, sum[:])
}

// key returns {"id":<id>}.
func (m snapValueMaker) key(id int64) []byte {
	return append(strconv.AppendInt(append(make([]byte, 0, 16), `{"id":`...), id, 10), '}')
}

// headers returns the headers of row id: its number in the copy from 0.
func (m snapValueMaker) headers(id int64) []kgo.RecordHeader {
	return []kgo.RecordHeader{
		{Key: connector.HeaderLSN, Value: m.lsn},
		{Key: connector.HeaderCommitLSN, Value: m.commit},
		{Key: connector.HeaderTxSeq, Value: strconv.AppendInt(nil, id-1, 10)},
	}
}

func (m snapValueMaker) value(id int64) []byte {
	b := make([]byte, 0, 128+len(m.at)+len(m.suffix))
	b = append(b, `{"before":null,"after":{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"payload":"`...)
	b = appendMD5(b, id)
	b = appendMD5(b, id+1)
	b = append(b, `","n":`...)
	b = strconv.AppendInt(b, id%1000, 10)
	b = append(b, `,"at":`...)
	b = append(b, m.at...)
	b = append(b, '}')
	return append(b, m.suffix...)
}

// runKafkaLimit produces n records of the snapshot's shape to a topic of
// one partition (mooncdc's default kafka.topic_partitions) on brk, with a
// client configured like mooncdc's producer (connector/setup.go
// producerOpts) and at most window bytes (keys and values) unacked, as
// mooncdc's copy worker, and times it until every promise has returned.
func runKafkaLimit(ctx context.Context, brk *broker, cfg config.Config, n int, first *kgo.Record) (kafkaLimitResult, error) {
	var res kafkaLimitResult
	res.window = cfg.Kafka.MaxInflightBytes / int64(max(cfg.Snapshot.Workers, 1))
	maxBytes := cfg.Kafka.MaxInflightBytes
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brk.addr),
		kgo.ClientID("mooncdc-bench-kafkalimit"),
		kgo.RequiredAcks(kgo.AllISRAcks()), // idempotent writes: franz-go's default
		kgo.MaxBufferedBytes(int(maxBytes)*2+64<<20),
		kgo.MaxBufferedRecords(1<<24),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.ProducerBatchCompression(connector.CompressionCodec(cfg.Kafka.Compression)),
	)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	resp, err := kadm.NewClient(cl).CreateTopic(tctx, cfg.Kafka.TopicPartitions, int16(cfg.Kafka.TopicReplicationFactor), nil, kafkaLimitTopic)
	cancel()
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return res, fmt.Errorf("create topic %s: %w", kafkaLimitTopic, err)
	}
	mk, fromTemplate := newSnapValueMaker(first)
	res.template = fromTemplate
	// Connect and learn the topic's leader before the clock starts, as
	// mooncdc has before its copy starts.
	if err := cl.Ping(ctx); err != nil {
		return res, err
	}

	var (
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		inflight int64
		pending  int
		firstErr error
	)
	var broker0 cpuTime
	if u, sy, err := procCPU(brk.pid()); err == nil {
		broker0 = cpuTime{u, sy}
	}
	su0, ss0 := selfRusage()
	start, busy0 := time.Now(), hostBusy()
	for i := range n {
		id := int64(i + 1)
		rec := &kgo.Record{Topic: kafkaLimitTopic, Key: mk.key(id), Value: mk.value(id), Headers: mk.headers(id)}
		size := int64(len(rec.Key) + len(rec.Value))
		res.keyBytes += int64(len(rec.Key))
		res.valueBytes += int64(len(rec.Value))
		mu.Lock()
		for inflight > 0 && inflight+size > res.window && firstErr == nil {
			cond.Wait()
		}
		err := firstErr
		inflight += size
		pending++
		mu.Unlock()
		if err != nil {
			break
		}
		cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
			mu.Lock()
			inflight -= size
			pending--
			if err != nil && firstErr == nil {
				firstErr = err
			}
			cond.Broadcast()
			mu.Unlock()
		})
	}
	mu.Lock()
	for pending > 0 {
		cond.Wait()
	}
	err = firstErr
	mu.Unlock()
	res.elapsed = time.Since(start)
	res.hostBusy = hostBusy() - busy0
	su1, ss1 := selfRusage()
	res.clientCPU = cpuTime{su1 - su0, ss1 - ss0}
	if u, sy, err := procCPU(brk.pid()); err == nil {
		res.brokerCPU = cpuTime{u - broker0.user, sy - broker0.sys}
	}
	if err != nil {
		return res, fmt.Errorf("produce: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if res.records, err = recordCount(cctx, brk.addr, kafkaLimitTopic); err != nil {
		return res, fmt.Errorf("count records in Kafka: %w", err)
	}
	if res.records < int64(n) {
		return res, fmt.Errorf("delivery: topic %s holds %d records, want at least %d", kafkaLimitTopic, res.records, n)
	}
	return res, nil
}
