package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// opTombstone names the null-value record that follows a delete.
const opTombstone = "tombstone"

// record is one consumed Kafka record.
type record struct {
	Topic string
	Op    string // c, u, d, t, m or opTombstone
	Key   []byte
	Value []byte // nil for a tombstone
}

// consumer reads the demo topics the way any Kafka application would: a
// franz-go client, read_committed, from the start of each topic, and
// counts what it reads.
type consumer struct {
	cl        *kgo.Client
	samples   int
	avro      *avroDecoder // nil for JSON records
	done      chan struct{}
	closeOnce sync.Once

	mu        sync.Mutex
	counts    map[string]map[string]int // topic → op → records
	total     int
	last      time.Time           // when the newest record was read
	sampled   map[string][]record // op → the first records of each topic
	replica   *replica
	changed   chan struct{}           // closed and replaced on every poll with records
	watcher   func(record, time.Time) // sees every record as it is read; nil for none
	decodeErr error                   // the first record that did not decode
}

// startConsumer starts reading topics from broker, keeping the first
// samples records of each op and topic. The topics need not exist yet: mooncdc
// creates them with the first record. With avro, keys and values are Avro
// and decoded into the JSON records' shape; without, they are JSON.
func startConsumer(broker string, topics []string, samples int, avro *avroDecoder) (*consumer, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(broker),
		kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Notice the topics soon after mooncdc creates them.
		kgo.MetadataMinAge(250*time.Millisecond),
		kgo.MetadataMaxAge(time.Second),
	)
	if err != nil {
		return nil, fmt.Errorf("kafka consumer: %w", err)
	}
	c := &consumer{
		cl: cl, samples: samples, avro: avro, done: make(chan struct{}),
		counts: map[string]map[string]int{}, sampled: map[string][]record{}, changed: make(chan struct{}),
		replica: newReplica(),
	}
	go c.loop()
	return c, nil
}

func (c *consumer) loop() {
	defer close(c.done)
	for {
		fetches := c.cl.PollFetches(context.Background())
		if fetches.IsClientClosed() {
			return
		}
		// Errors here are transient (topics not created yet, the broker
		// going away at the end); the client retries by itself.
		var got []record
		fetches.EachRecord(func(r *kgo.Record) {
			got = append(got, c.decode(r))
		})
		if len(got) > 0 {
			c.add(got)
		}
	}
}

// decode turns a Kafka record into a record with JSON key and value.
func (c *consumer) decode(r *kgo.Record) record {
	key, value := r.Key, r.Value
	if c.avro != nil {
		var kerr, verr error
		key, kerr = c.avro.decode(r.Key)
		if r.Value != nil {
			value, verr = c.avro.decode(r.Value)
		}
		if err := errors.Join(kerr, verr); err != nil {
			c.mu.Lock()
			if c.decodeErr == nil {
				c.decodeErr = fmt.Errorf("decode a record of %s at offset %d: %w", r.Topic, r.Offset, err)
			}
			c.mu.Unlock()
		}
	}
	return record{Topic: r.Topic, Op: opOf(value), Key: key, Value: value}
}

// watch makes fn see every record read from now on, with when it was read;
// nil stops. fn is called on the consumer's goroutine and must be quick.
func (c *consumer) watch(fn func(record, time.Time)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watcher = fn
}

// err returns the first record that did not decode, if any.
func (c *consumer) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.decodeErr
}

// opOf returns the op of a Debezium envelope, or "?" if it is not one.
func opOf(value []byte) string {
	if value == nil {
		return opTombstone
	}
	var env struct {
		Op string `json:"op"`
	}
	if json.Unmarshal(value, &env) != nil || env.Op == "" {
		return "?"
	}
	return env.Op
}

func (c *consumer) add(rs []record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for _, r := range rs {
		if c.watcher != nil {
			c.watcher(r, now)
		}
		if c.counts[r.Topic] == nil {
			c.counts[r.Topic] = map[string]int{}
		}
		c.counts[r.Topic][r.Op]++
		c.total++
		c.replica.apply(r)
		if c.counts[r.Topic][r.Op] <= c.samples {
			c.sampled[r.Op] = append(c.sampled[r.Op], r)
		}
	}
	c.last = time.Now()
	close(c.changed)
	c.changed = make(chan struct{})
}

// waitFor blocks until at least n records have been read, and returns
// false if that did not happen within timeout, ctx ended or abort closed.
func (c *consumer) waitFor(ctx context.Context, n int, timeout time.Duration, abort <-chan struct{}) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		total, changed := c.total, c.changed
		c.mu.Unlock()
		if total >= n {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		case <-abort:
			return false
		case <-deadline.C:
			return false
		}
	}
}

// snapshot returns copies of the counts, the total, the samples and when the
// newest record was read.
func (c *consumer) snapshot() (counts map[string]map[string]int, total int, samples map[string][]record, last time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	counts = make(map[string]map[string]int, len(c.counts))
	for t, ops := range c.counts {
		counts[t] = make(map[string]int, len(ops))
		for op, n := range ops {
			counts[t][op] = n
		}
	}
	samples = make(map[string][]record, len(c.sampled))
	for op, rs := range c.sampled {
		samples[op] = append([]record(nil), rs...)
	}
	return counts, c.total, samples, c.last
}

// compare checks the records read so far against the tables in Postgres
// (see replica.compare).
func (c *consumer) compare(ctx context.Context, conn *pgx.Conn) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replica.compare(ctx, conn)
}

// close stops reading. Safe to call more than once.
func (c *consumer) close() {
	c.closeOnce.Do(c.cl.Close)
	<-c.done
}

// endOffset returns the number of records in topic: the sum of its
// partitions' end offsets (mooncdc's records at least once are not
// transactional, so each record takes one offset). The demo counts the big
// snapshot this way rather than reading it.
func (c *consumer) endOffset(ctx context.Context, topic string) (int64, error) {
	offsets, err := kadm.NewClient(c.cl).ListEndOffsets(ctx, topic)
	if err == nil {
		err = offsets.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	var n int64
	offsets.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n, nil
}
