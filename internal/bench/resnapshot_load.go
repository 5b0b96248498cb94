package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
)

// This file holds the re-snapshot benchmark's write load on its table and
// the consumer that reads the table's topic: the latency of each streamed
// change (latency.go's method) and the keys of the `r` records.

// resnapWriter commits the write load on public.resnap: at rate changes/s,
// every 10 ms one transaction of what the rate owes by then (latency.go's
// writer), half of it updates of random rows among the first n, half
// inserts of new rows after them.
type resnapWriter struct {
	conn *pgx.Conn
	n    int // the table's loaded rows: ids 1..n
	rate int

	mu       sync.Mutex
	changes  int   // committed so far
	inserted int64 // the last id inserted (n before the first)
	err      error
}

func newResnapWriter(ctx context.Context, src *source, n, rate int) (*resnapWriter, error) {
	conn, err := src.c.Connect(ctx, "")
	if err != nil {
		return nil, err
	}
	return &resnapWriter{conn: conn, n: n, rate: rate, inserted: int64(n)}, nil
}

// run writes until ctx ends; the first error stops it (err reports it).
func (w *resnapWriter) run(ctx context.Context) {
	start := time.Now()
	tick := time.NewTicker(latTick)
	defer tick.Stop()
	rng := rand.New(rand.NewPCG(29, 1))
	done := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		owed := int(time.Since(start).Seconds()*float64(w.rate)) - done
		if owed <= 0 {
			continue
		}
		updates := owed / 2
		ids := make([]int64, updates)
		for i := range ids {
			ids[i] = 1 + rng.Int64N(int64(w.n))
		}
		first := w.inserted + 1
		last := w.inserted + int64(owed-updates)
		// One statement, one transaction: the updates and the inserts
		// commit together, as an application's transaction would.
		_, err := w.conn.Exec(ctx, `WITH u AS (UPDATE `+resnapQualified+` SET n = n + 1, at = now() WHERE id = ANY($1))
			INSERT INTO `+resnapQualified+` (id, payload, n, at)
			SELECT i, md5(i::text) || md5((i + 1)::text), 0, now() FROM generate_series($2::bigint, $3::bigint) AS i`, ids, first, last)
		w.mu.Lock()
		if err != nil {
			if ctx.Err() == nil {
				w.err = fmt.Errorf("write load: %w", err)
			}
			w.mu.Unlock()
			return
		}
		// Random ids may repeat within a transaction: an id updated twice
		// in one statement is one change.
		distinct := map[int64]bool{}
		for _, id := range ids {
			distinct[id] = true
		}
		w.changes += len(distinct) + int(last-first+1)
		w.inserted = last
		w.mu.Unlock()
		done += owed
	}
}

// committed returns the changes committed so far and the writer's error.
func (w *resnapWriter) committed() (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changes, w.err
}

func (w *resnapWriter) close() { _ = w.conn.Close(context.Background()) }

// resnapChange is one streamed change the consumer read.
type resnapChange struct {
	id      int64
	commit  time.Time // source.ts_us (else ts_ms)
	latency time.Duration
}

// resnapRead is one `r` record the consumer read.
type resnapRead struct {
	id        int64
	partition int32
	offset    int64
}

// resnapConsumer reads the table's topic from its start. Change records
// are decoded whole (a few thousand a second); of an `r` record (a million
// per re-snapshot, read while mooncdc runs on the same cores) only the key
// and the op are looked at.
type resnapConsumer struct {
	cl      *kgo.Client
	mu      sync.Mutex
	changes []resnapChange
	reads   []resnapRead
	bad     int // records it could not read: a failure of the run
}

// newResnapConsumer reads topic from the offsets given (by partition):
// the end of the initial copy, so that the load's first changes do not
// wait behind a million `r` records in this consumer.
func newResnapConsumer(addr, topic string, from map[int32]int64) (*resnapConsumer, error) {
	parts := map[int32]kgo.Offset{}
	for p, o := range from {
		parts[p] = kgo.NewOffset().At(o)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchMaxWait(50*time.Millisecond), kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(time.Second))
	if err != nil {
		return nil, err
	}
	return &resnapConsumer{cl: cl}, nil
}

var opField = []byte(`"op":"`)

func (c *resnapConsumer) run(ctx context.Context) {
	for ctx.Err() == nil {
		fs := c.cl.PollFetches(ctx)
		now := time.Now()
		if fs.IsClientClosed() {
			return
		}
		var changes []resnapChange
		var reads []resnapRead
		bad := 0
		fs.EachRecord(func(r *kgo.Record) {
			if r.Value == nil {
				return // a tombstone
			}
			i := bytes.LastIndex(r.Value, opField)
			if i < 0 || i+len(opField) >= len(r.Value) {
				bad++
				return
			}
			switch r.Value[i+len(opField)] {
			case 'r':
				id, ok := keyID(r.Key)
				if !ok {
					bad++
					return
				}
				reads = append(reads, resnapRead{id: id, partition: r.Partition, offset: r.Offset})
			case 'c', 'u':
				var v struct {
					After *struct {
						ID int64 `json:"id"`
					} `json:"after"`
					Source struct {
						TsMs int64 `json:"ts_ms"`
						TsUs int64 `json:"ts_us"`
					} `json:"source"`
				}
				if json.Unmarshal(r.Value, &v) != nil || v.After == nil {
					bad++
					return
				}
				commit := time.UnixMilli(v.Source.TsMs)
				if v.Source.TsUs != 0 {
					commit = time.UnixMicro(v.Source.TsUs)
				}
				changes = append(changes, resnapChange{id: v.After.ID, commit: commit, latency: now.Sub(commit)})
			}
		})
		c.mu.Lock()
		c.changes = append(c.changes, changes...)
		c.reads = append(c.reads, reads...)
		c.bad += bad
		c.mu.Unlock()
	}
}

// keyID reads the id of a JSON key, {"id":N} (or the payload of a key
// with its schema, whose last "id" it is).
func keyID(key []byte) (int64, bool) {
	i := bytes.LastIndex(key, []byte(`"id":`))
	if i < 0 {
		return 0, false
	}
	rest := key[i+len(`"id":`):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	id, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	return id, err == nil
}

// counts returns how many change and `r` records were read, and how many
// could not be.
func (c *resnapConsumer) counts() (changes, reads, bad int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.changes), len(c.reads), c.bad
}

// snapshotCopy returns the records read so far (the caller owns them).
func (c *resnapConsumer) snapshotCopy() ([]resnapChange, []resnapRead) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]resnapChange(nil), c.changes...), append([]resnapRead(nil), c.reads...)
}

// waitChanges waits until at least n change records were read, or none
// came for quiet: a blocking copy's snapshot takes in the changes
// committed between the request and its start, which the stream then
// leaves out (their rows are `r` records), so fewer than committed may
// come. It fails only when none came for limit.
func (c *resnapConsumer) waitChanges(ctx context.Context, n int, quiet, limit time.Duration) (int, error) {
	last, lastAt := -1, time.Now()
	for {
		got, _, _ := c.counts()
		if got >= n {
			return got, nil
		}
		if got != last {
			last, lastAt = got, time.Now()
		}
		if time.Since(lastAt) > quiet && got > 0 {
			return got, nil
		}
		if time.Since(lastAt) > limit {
			return got, fmt.Errorf("the consumer read %d of the %d changes committed, none for %s", got, n, limit)
		}
		select {
		case <-ctx.Done():
			return got, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *resnapConsumer) close() { c.cl.Close() }
