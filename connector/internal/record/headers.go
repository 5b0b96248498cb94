package record

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/schema"
)

// The record headers every change record (and its tombstone) carries, so
// that a consumer in at-least-once mode can drop the repeats a restart
// produces: a change is identified by (mooncdc.commit_lsn, mooncdc.tx_seq)
// and its key (an update that changes the key gives a delete and a create
// with the same tx_seq and different keys). Values are decimal ASCII.
const (
	HeaderLSN       = "mooncdc.lsn"        // the change's own LSN
	HeaderCommitLSN = "mooncdc.commit_lsn" // its transaction's commit LSN (the snapshot's LSN for a snapshot row)
	HeaderTxSeq     = "mooncdc.tx_seq"     // its index in the transaction from 0 (a snapshot row's number in its copy)
)

// SetHeaders writes the three headers into rec, reusing the header values'
// buffers of a pooled record so that a record costs no allocation.
func SetHeaders(rec *kgo.Record, lsn, commit schema.LSN, seq int64) {
	h := rec.Headers
	if cap(h) < 3 {
		h = newHeaderBlock()
	}
	h = h[:3]
	h[0].Key, h[0].Value = HeaderLSN, strconv.AppendUint(h[0].Value[:0], uint64(lsn), 10)
	h[1].Key, h[1].Value = HeaderCommitLSN, strconv.AppendUint(h[1].Value[:0], uint64(commit), 10)
	h[2].Key, h[2].Value = HeaderTxSeq, strconv.AppendInt(h[2].Value[:0], seq, 10)
	rec.Headers = h
}

// SetPosition rewrites the three mooncdc.* headers of a record Writer.Change
// made (they come first), keeping the headers after them (the flat
// envelope's): an incremental snapshot's row, encoded when its chunk was
// read, gets its window's close position when it is written.
func SetPosition(rec *kgo.Record, lsn, commit schema.LSN, seq int64) {
	h := rec.Headers
	if len(h) < 3 || h[0].Key != HeaderLSN || h[1].Key != HeaderCommitLSN || h[2].Key != HeaderTxSeq {
		rest := append([]kgo.RecordHeader(nil), h...)
		rec.Headers = nil
		SetHeaders(rec, lsn, commit, seq)
		rec.Headers = append(rec.Headers[:3:3], rest...)
		return
	}
	h[0].Value = strconv.AppendUint(h[0].Value[:0], uint64(lsn), 10)
	h[1].Value = strconv.AppendUint(h[1].Value[:0], uint64(commit), 10)
	h[2].Value = strconv.AppendInt(h[2].Value[:0], seq, 10)
}

// headerValueLen is the longest header value: an int64 in decimal.
const headerValueLen = 20

// headerBlock is a pooled record's three headers with their values' bytes
// beside them, one allocation that stays together: a record from the pool
// is cold in the cache, and three scattered value buffers cost three
// misses where one block costs its own lines.
type headerBlock struct {
	h [3]kgo.RecordHeader
	v [3 * headerValueLen]byte
}

func newHeaderBlock() []kgo.RecordHeader {
	b := new(headerBlock)
	for i := range b.h {
		b.h[i].Value = b.v[i*headerValueLen : i*headerValueLen : (i+1)*headerValueLen]
	}
	return b.h[:]
}

// changeHeaders sets the headers of a streamed change.
func changeHeaders(rec *kgo.Record, ch *schema.Change) {
	SetHeaders(rec, ch.LSN, ChangeCommit(ch), int64(ch.Seq))
}

// ChangeCommit is the commit LSN of a streamed change's transaction; a
// non-transactional message is its own transaction.
func ChangeCommit(ch *schema.Change) schema.LSN {
	if ch.Tx != nil {
		return ch.Tx.CommitLSN
	}
	return ch.LSN
}

// copyHeaders copies src's headers into dst's buffers.
func copyHeaders(dst, src *kgo.Record) {
	h := dst.Headers[:0]
	for i, s := range src.Headers {
		if i < cap(h) {
			h = h[:i+1]
			h[i].Key, h[i].Value = s.Key, append(h[i].Value[:0], s.Value...)
		} else {
			h = append(h, kgo.RecordHeader{Key: s.Key, Value: append([]byte(nil), s.Value...)})
		}
	}
	dst.Headers = h
}
