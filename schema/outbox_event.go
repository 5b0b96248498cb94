package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// This file takes an outbox event's parts from a row of the outbox table
// (JSONEncoder.OutboxEvent) and writes its key and value
// (AppendOutboxKey, AppendOutboxValue); outbox_message.go takes them from
// a logical message. Parts are JSON values with their Connect schemas, so
// that plain JSON and JSON with schemas are written from the same event.

// OutboxPart is one part of an event: its JSON and its Connect schema
// (nil for an additional field left out, table.field.additional.missing
// ignore).
type OutboxPart struct {
	JSON   []byte // "null" for a null
	Schema *Schema
}

// Null reports a null part.
func (p OutboxPart) Null() bool { return string(p.JSON) == "null" }

// Text is the part as Kafka Connect's default header converter
// (SimpleHeaderConverter) writes it: a string's text, other values as
// their JSON; null reports a null, a header without a value.
func (p OutboxPart) Text() (text []byte, null bool) {
	if p.Null() {
		return nil, true
	}
	if len(p.JSON) > 0 && p.JSON[0] == '"' {
		var s string
		if json.Unmarshal(p.JSON, &s) == nil {
			return []byte(s), false
		}
	}
	return p.JSON, false
}

// OutboxEvent is one outbox event, as EventRouterDelegate.apply builds the
// record (ERD.java:129-246).
type OutboxEvent struct {
	RoutedBy string // the route-by value; the record's topic is Topic
	Topic    string
	Key, ID  OutboxPart
	Payload  OutboxPart
	// Fields holds, per OutboxConfig.Fields entry, its value.
	Fields []OutboxPart
	// Millis is the record's timestamp in ms when HasTime; else the
	// processing time (the envelope's ts_ms, ERD.java:253-256).
	Millis  int64
	HasTime bool
	// Partition is the record's Kafka partition when Placed: the value
	// of a field placed at the partition (the last such field's, as
	// ERD.java:190-211 sets it in order); a null value places nothing,
	// and the record is partitioned by its key (ERD.java:233-241).
	Partition int32
	Placed    bool
	// Empty: the payload is null or a string of blanks, which
	// route.tombstone.on.empty.payload turns into a tombstone
	// (ERD.java:214-222).
	Empty bool
	// ExpandErr says why table.expand.json.payload left the payload a
	// string (Debezium warns, ERD.java:172-177); nil otherwise.
	ExpandErr error
	// valueName names the value struct with envelope fields, version
	// gives it a schema version (0: none).
	valueName string
	version   int
}

// OutboxFieldError is an outbox row or message without a field the
// EventRouter needs (Debezium throws a ConnectException or DataException,
// ERD.java:144-160, 258-284, 425-427), or with one of the wrong type.
type OutboxFieldError struct {
	Field  string
	Reason string
}

func (e *OutboxFieldError) Error() string {
	return fmt.Sprintf("outbox event field %q: %s", e.Field, e.Reason)
}

// OutboxEvent takes the event of ch, an insert or snapshot row of the
// outbox table, from its row image. A missing column, a route-by value that
// is null or not a string, or a timestamp column that is not a
// Timestamp, MicroTimestamp or NanoTimestamp, is an *OutboxFieldError
// wrapped in a *ValueError naming the table and column; a value that does
// not encode is a *ValueError. p is the plan of ch.Relation (AppendKey).
// It does not block.
func (e *JSONEncoder) OutboxEvent(p *Plan, ch *Change, c *OutboxConfig) (*OutboxEvent, error) {
	rel := ch.Relation
	if rel == nil || ch.After == nil {
		return nil, errors.New("encode outbox event: the change has no row image")
	}
	if err := checkTuple(rel, ch.After); err != nil {
		return nil, err
	}
	p, err := planOf(p, rel, 0)
	if err != nil {
		return nil, err
	}
	part := func(col string) (OutboxPart, Value, error) {
		i := -1
		for j, cl := range rel.Columns {
			if cl.Name == col && !p.vcols[j].omit {
				i = j
			}
		}
		if i < 0 {
			return OutboxPart{}, Value{}, &ValueError{Table: rel.QualifiedName(), Column: col,
				Err: &OutboxFieldError{Field: col, Reason: "not a column of the outbox table (or left out of its records)"}}
		}
		v, ct := imageValue(rel, p, ch.After, nil, i, false)
		js, err := e.appendColumn(nil, ct, v)
		if err != nil {
			return OutboxPart{}, v, newValueError(rel, i, v.Data, err)
		}
		return OutboxPart{JSON: js, Schema: ct.schema}, v, nil
	}
	ev := &OutboxEvent{valueName: strings.TrimSuffix(p.value.Name, ".Envelope")}
	route, _, err := part(c.RouteBy)
	if err != nil {
		return nil, err
	}
	if ev.RoutedBy, err = routedBy(c, route); err != nil {
		return nil, &ValueError{Table: rel.QualifiedName(), Column: c.RouteBy, Err: err}
	}
	ev.valueName += "." + ev.RoutedBy + ".Value" // ERD.java:439-449
	if ev.ID, _, err = part(c.IDField); err != nil {
		return nil, err
	}
	if ev.Key, _, err = part(c.KeyField); err != nil {
		return nil, err
	}
	var pv Value
	if ev.Payload, pv, err = part(c.PayloadField); err != nil {
		return nil, err
	}
	// Payload.toString().trim().isEmpty(), ERD.java:214: the text of a
	// string payload (Java's trim strips every char <= ' ').
	ev.Empty = pv.Kind == ValueNull || ev.Payload.Null() ||
		ev.Payload.Schema.Type == TypeString && strings.TrimFunc(string(pv.Data), func(r rune) bool { return r <= ' ' }) == ""
	for _, f := range c.Fields {
		fp, _, err := part(f.Column)
		var fe *OutboxFieldError
		if err != nil && c.IgnoreMissing && errors.As(err, &fe) && fe.Field == f.Column {
			fp, err = OutboxPart{}, nil // left out (ERD.java:192-196)
		}
		if err != nil {
			return nil, err
		}
		ev.Fields = append(ev.Fields, fp)
	}
	if err := ev.place(c); err != nil {
		var fe *OutboxFieldError
		errors.As(err, &fe)
		return nil, &ValueError{Table: rel.QualifiedName(), Column: fe.Field, Err: err}
	}
	if c.SchemaVersionField != "" {
		vp, _, err := part(c.SchemaVersionField)
		if err != nil {
			return nil, err
		}
		if ev.version, err = schemaVersion(c.SchemaVersionField, vp); err != nil {
			return nil, &ValueError{Table: rel.QualifiedName(), Column: c.SchemaVersionField, Err: err}
		}
	}
	if c.TimestampField != "" {
		tp, _, err := part(c.TimestampField)
		if err != nil {
			return nil, err
		}
		if ev.Millis, ev.HasTime, err = eventMillis(c.TimestampField, tp); err != nil {
			return nil, &ValueError{Table: rel.QualifiedName(), Column: c.TimestampField, Err: err}
		}
	}
	ev.finish(c)
	return ev, nil
}

// routedBy is eventStruct.getString(route.by.field) (ERD.java:185, 235): a
// string; a null one fails RegexRouter (a NullPointerException).
func routedBy(c *OutboxConfig, p OutboxPart) (string, error) {
	var s string
	if p.Null() || p.Schema.Type != TypeString || json.Unmarshal(p.JSON, &s) != nil {
		return "", &OutboxFieldError{Field: c.RouteBy, Reason: "the route-by value must be a string, not " + string(p.JSON)}
	}
	return s, nil
}

// schemaVersion is eventStruct.getInt32(table.field.event.schema.version)
// (ERD.java:183-186, 403-412): an int32; null gives no version.
func schemaVersion(field string, p OutboxPart) (int, error) {
	n, _, err := int32Field(field, "the schema version", p)
	return int(n), err
}

// int32Field is Struct.getInt32 on an event field: an int32 value, or
// none for a null; any other type is an *OutboxFieldError (Connect's
// DataException).
func int32Field(field, what string, p OutboxPart) (int32, bool, error) {
	if p.Null() {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(string(p.JSON), 10, 32)
	if err != nil || p.Schema.Type != TypeInt32 {
		return 0, false, &OutboxFieldError{Field: field, Reason: what + " must be an integer (int32) column, not " + p.Schema.Type}
	}
	return int32(n), true, nil
}

// place sets ev's partition from the fields placed at the partition
// (ERD.java:190-211: getInt32 of each, the last one kept). A negative
// partition is an *OutboxFieldError: Kafka's producer refuses it.
func (ev *OutboxEvent) place(c *OutboxConfig) error {
	for i, f := range c.Fields {
		if f.Placement != PlacePartition || ev.Fields[i].Schema == nil {
			continue // left out: IgnoreMissing (ERD.java:192-196)
		}
		n, ok, err := int32Field(f.Column, "a partition", ev.Fields[i])
		if err == nil && n < 0 {
			err = &OutboxFieldError{Field: f.Column, Reason: fmt.Sprintf("the partition %d is negative", n)}
		}
		if err != nil {
			return err
		}
		ev.Partition, ev.Placed = n, ok
	}
	return nil
}

// eventMillis is getEventTimestampMs (ERD.java:253-285): a Timestamp is ms,
// a MicroTimestamp µs, a NanoTimestamp ns; null is the processing time;
// any other type fails.
func eventMillis(field string, p OutboxPart) (int64, bool, error) {
	if p.Null() {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(string(p.JSON), 10, 64)
	div := int64(0)
	switch p.Schema.Name {
	case "io.debezium.time.Timestamp":
		div = 1
	case "io.debezium.time.MicroTimestamp":
		div = 1_000
	case "io.debezium.time.NanoTimestamp":
		div = 1_000_000
	}
	if div == 0 || err != nil || p.Schema.Type != TypeInt64 {
		return 0, false, &OutboxFieldError{Field: field, Reason: fmt.Sprintf("the event timestamp must be a timestamp without time zone "+
			"(io.debezium.time.Timestamp, MicroTimestamp or NanoTimestamp), not %s %q", p.Schema.Type, p.Schema.Name)}
	}
	return n / div, true, nil
}

// finish routes ev and expands its payload.
func (ev *OutboxEvent) finish(c *OutboxConfig) {
	ev.Topic = c.Topic(ev.RoutedBy)
	if !c.Expand || ev.Payload.Null() {
		return // a null payload is left alone, without a warning (ERD.java:179-180)
	}
	var text string
	if ev.Payload.Schema.Type != TypeString || json.Unmarshal(ev.Payload.JSON, &text) != nil {
		ev.ExpandErr = fmt.Errorf("%w: it is not a string", errExpand) // ERD.java:176-177
		return
	}
	js, s, err := expandPayload(jsonInfer{c.NullBytes}, c.PayloadField, text)
	if err != nil {
		ev.ExpandErr = err
		return
	}
	ev.Payload = OutboxPart{JSON: js, Schema: s}
}

// AppendOutboxKey appends the record key of ev: its key part, with its
// schema when the encoder writes schemas (ERD.java:232-238, 287-302). A
// null key is written as JsonConverter writes a null with a schema.
func (e *JSONEncoder) AppendOutboxKey(dst []byte, ev *OutboxEvent) []byte {
	return e.appendPart(dst, ev.Key)
}

func (e *JSONEncoder) appendPart(dst []byte, p OutboxPart) []byte {
	if e.schemas {
		dst = append(dst, `{"schema":`...)
		dst = appendConnectJSON(dst, p.Schema, "")
		dst = append(dst, `,"payload":`...)
	}
	dst = append(dst, p.JSON...)
	if e.schemas {
		dst = append(dst, '}')
	}
	return dst
}

// Value returns the record value of ev (ERD.java:183-230), its JSON and
// Connect schema: with envelope fields, the struct
// <row's name>.<routed-by>.Value of the payload then those fields; without,
// the payload itself. ok is false for a tombstone
// (route.tombstone.on.empty.payload with an empty payload): the record has
// no value.
func (c *OutboxConfig) Value(ev *OutboxEvent) (v OutboxPart, ok bool) {
	if ev.Empty && c.TombstoneOnEmpty {
		return OutboxPart{}, false
	}
	if !c.envelope {
		return ev.Payload, true
	}
	s := &Schema{Type: TypeStruct, Name: ev.valueName, Version: ev.version, Fields: []Field{{"payload", ev.Payload.Schema}}}
	js := append([]byte(`{"payload":`), ev.Payload.JSON...)
	for i, f := range c.Fields {
		if f.Placement == PlaceEnvelope && ev.Fields[i].Schema != nil {
			s.Fields = append(s.Fields, Field{f.Alias, ev.Fields[i].Schema})
			js = append(js, ',')
			js = appendJSONString(js, f.Alias)
			js = append(js, ':')
			js = append(js, ev.Fields[i].JSON...)
		}
	}
	return OutboxPart{JSON: append(js, '}'), Schema: s}, true
}

// AppendOutboxValue appends the record value of ev (OutboxConfig.Value),
// with its schema when the encoder writes schemas; ok is false for a
// tombstone.
func (e *JSONEncoder) AppendOutboxValue(dst []byte, c *OutboxConfig, ev *OutboxEvent) (out []byte, ok bool) {
	v, ok := c.Value(ev)
	if !ok {
		return dst, false
	}
	return e.appendPart(dst, v), true
}
