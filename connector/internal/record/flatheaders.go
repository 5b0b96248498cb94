package record

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/schema"
)

// This file adds format.flat.add_headers to the records of the flat
// envelope, after the mooncdc.* headers (headers.go), as Debezium's
// ExtractNewRecordState adds them to the record's own
// (ExtractNewRecordState.java:109-113).

// flatHeaders appends the add_headers of ch to rec, reusing the header
// buffers of a pooled record; without the flat envelope, and for logical
// messages (not a table's change event, so the SMT leaves them alone:
// ExtractNewRecordState.java:106-122), it does nothing.
// With tombstone, rec is the tombstone that follows a delete, which gets
// only the op header, "d" (AbstractExtractNewRecordState.java:139-146).
func (c *Codec) flatHeaders(rec *kgo.Record, ch *schema.Change, now time.Time, tombstone bool) {
	if c.flat == nil || len(c.flat.Headers) == 0 || ch.Op == schema.OpMessage {
		return
	}
	h := rec.Headers
	for i, f := range c.flat.Headers {
		n := len(h)
		if n < cap(h) {
			h = h[:n+1]
		} else {
			h = append(h, kgo.RecordHeader{})
		}
		hv := &h[n]
		hv.Key = f.Name
		if tombstone {
			v, ok := c.flat.TombstoneHeader(i)
			if !ok {
				h = h[:n]
				continue
			}
			hv.Value = append(hv.Value[:0], v...)
			continue
		}
		v, null := c.meta.AppendHeader(hv.Value[:0], f, ch, now)
		if null {
			v = nil // a null header value, as SimpleHeaderConverter writes null
		}
		hv.Value = v
	}
	rec.Headers = h
}

// MarkSnapshotHeaders rewrites the source.snapshot headers of a copy's
// last row from marker from to to (MarkSnapshot does the value's).
func (c *Codec) MarkSnapshotHeaders(rec *kgo.Record, from, to string) {
	if c.flat == nil {
		return
	}
	for _, f := range c.flat.Headers {
		if !f.Snapshot() {
			continue
		}
		for i := range rec.Headers {
			if h := &rec.Headers[i]; h.Key == f.Name && string(h.Value) == from {
				h.Value = append(h.Value[:0], to...)
			}
		}
	}
}
