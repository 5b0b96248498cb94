package schema

import (
	"errors"
	"strings"
)

// This file reads outbox events sent without a table, as
// pg_logical_emit_message(true, '<format.outbox.message_prefix>', '<json>'):
// mooncdc's own channel (Debezium has none; its EventRouter passes logical
// messages through, ERD.java:102-106, as they are not change envelopes).
// The content is a JSON object whose fields are named as the outbox
// table's columns (route_by, table_field_event_id, table_field_event_key,
// table_field_event_payload, table_field_event_timestamp and the
// additional placement columns), for example with the defaults
//
//	{"id":"7c1…","aggregatetype":"order","aggregateid":"42","payload":{"total":10}}
//
// Each field's schema is inferred from its JSON value as the expanded
// payload's is (outbox_json.go). The payload may be a string, which is
// then handled as a text column's (expanded with
// table_expand_json_payload), or any other JSON value, written as it is;
// absent, it is null. The route-by field must be a string; id and the
// key may be absent (null). The timestamp field, when configured and
// present, is an integer of ms since the epoch. The content is untrusted:
// ParseOutboxMessage never panics on it.

// OutboxMessage is ParseOutboxMessage with the value struct named as an
// outbox row's (<row's name>.<routed-by>.Value), so that rows and
// messages routed to one topic share its value schema.
func (e *JSONEncoder) OutboxMessage(c *OutboxConfig, content []byte) (*OutboxEvent, error) {
	ev, err := ParseOutboxMessage(c, content)
	if err != nil {
		return nil, err
	}
	base := e.cfg.Name + "." + c.Schema + "." + c.Table
	if e.cfg.Route != nil {
		base, _, _ = e.cfg.Route(c.Schema, c.Table)
	}
	ev.valueName = base + "." + ev.RoutedBy + ".Value"
	return ev, nil
}

// ParseOutboxMessage reads the event in content, a message's content.
// A content that is not a JSON object, a route-by field that is missing
// or not a string, or a timestamp that is not an integer, is an error
// (an *OutboxFieldError for a field). It does not block.
func ParseOutboxMessage(c *OutboxConfig, content []byte) (*OutboxEvent, error) {
	n, err := parseJSONNode(content)
	if err != nil {
		return nil, err
	}
	if n.kind != jsonObject {
		return nil, errors.New("the outbox message is not a JSON object")
	}
	field := func(name string) (*jsonNode, OutboxPart, error) {
		v := &jsonNode{kind: jsonNull}
		if i := indexOf(n.keys, name); i >= 0 {
			v = n.elems[i]
		}
		s, err := jsonInfer{c.NullBytes}.schema(name, v)
		if err != nil {
			return v, OutboxPart{}, &OutboxFieldError{Field: name, Reason: err.Error()}
		}
		if s == nil {
			// A null, or an empty array: Connect has no schema to infer;
			// an optional string holds the null (a Struct's field must
			// have one).
			if v.kind != jsonNull {
				return v, OutboxPart{}, &OutboxFieldError{Field: name, Reason: "an empty array has no schema"}
			}
			s = schemaOptionalString
		}
		js, err := appendConnectValue(nil, s, v)
		if err != nil {
			return v, OutboxPart{}, &OutboxFieldError{Field: name, Reason: err.Error()}
		}
		return v, OutboxPart{JSON: js, Schema: s}, nil
	}
	rv, _, err := field(c.RouteBy)
	if err != nil {
		return nil, err
	}
	if rv.kind != jsonString {
		return nil, &OutboxFieldError{Field: c.RouteBy, Reason: "the route-by field must be a string"}
	}
	ev := &OutboxEvent{RoutedBy: rv.str}
	ev.valueName = ev.RoutedBy // no row schema name: ERD.java:451-452 (JSONEncoder.OutboxMessage names it as a row's)
	if _, ev.ID, err = field(c.IDField); err != nil {
		return nil, err
	}
	if _, ev.Key, err = field(c.KeyField); err != nil {
		return nil, err
	}
	pv, pp, err := field(c.PayloadField)
	if err != nil {
		return nil, err
	}
	ev.Payload = pp
	ev.Empty = pv.kind == jsonNull || pv.kind == jsonString && strings.TrimFunc(pv.str, func(r rune) bool { return r <= ' ' }) == ""
	for _, f := range c.Fields {
		if c.IgnoreMissing && indexOf(n.keys, f.Column) < 0 {
			ev.Fields = append(ev.Fields, OutboxPart{}) // left out (ERD.java:192-196)
			continue
		}
		_, fp, err := field(f.Column)
		if err != nil {
			return nil, err
		}
		ev.Fields = append(ev.Fields, fp)
	}
	if err := ev.place(c); err != nil {
		return nil, err
	}
	if c.SchemaVersionField != "" {
		vv, vp, err := field(c.SchemaVersionField)
		if err == nil && vv.kind != jsonNull && vv.kind != jsonInt32 {
			err = &OutboxFieldError{Field: c.SchemaVersionField, Reason: "the schema version must be an integer"}
		}
		if err != nil {
			return nil, err
		}
		if ev.version, err = schemaVersion(c.SchemaVersionField, vp); err != nil {
			return nil, err
		}
	}
	if c.TimestampField != "" {
		tv, _, err := field(c.TimestampField)
		if err != nil {
			return nil, err
		}
		switch tv.kind {
		case jsonNull:
		case jsonInt32, jsonInt64:
			ev.Millis, ev.HasTime = tv.i, true
		default:
			return nil, &OutboxFieldError{Field: c.TimestampField, Reason: "the timestamp must be an integer of ms since 1970-01-01T00:00:00Z"}
		}
	}
	if pv.kind == jsonString || pv.kind == jsonNull {
		ev.finish(c)
	} else {
		ev.Topic = c.Topic(ev.RoutedBy) // already JSON: nothing to expand
	}
	return ev, nil
}
