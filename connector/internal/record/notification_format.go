package record

import (
	"context"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/hamba/avro/v2"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/notify"
)

// Notification records are written in the configured formats, as
// Debezium's SinkNotificationChannel hands its records to the configured
// converters (SinkNotificationChannel.java:90-105 at v3.6.1.Final). The
// key is io.debezium.connector.common.NotificationKey {id}, the value
// io.debezium.connector.common.Notification {id, type, aggregate_type,
// additional_data (optional map of strings), timestamp}, both version 1
// (SchemaFactory.java:108-111, 317-335). Plain JSON: {"id":…} and the five
// fields; JSON with schemas: the same in {"schema","payload"}; Avro:
// Confluent-framed, registered under <notification topic>-key and -value.
// Other value formats write them as the heartbeat records are written:
// plain JSON (protobuf, json_schema) or a null value (cloudevents, whose
// converter writes null for any value that is not a change envelope,
// CloudEventsConverter.java:268-272).

const (
	notificationKeyName   = "io.debezium.connector.common.NotificationKey"
	notificationValueName = "io.debezium.connector.common.Notification"

	NotificationKeyAvro = `{"type":"record","name":"NotificationKey","namespace":"io.debezium.connector.common",` +
		`"fields":[{"name":"id","type":"string"}],"connect.version":1,"connect.name":"` + notificationKeyName + `"}`
	NotificationValueAvro = `{"type":"record","name":"Notification","namespace":"io.debezium.connector.common","fields":[` +
		`{"name":"id","type":"string"},{"name":"type","type":"string"},{"name":"aggregate_type","type":"string"},` +
		`{"name":"additional_data","type":["null",{"type":"map","values":"string"}],"default":null},` +
		`{"name":"timestamp","type":"long"}],"connect.version":1,"connect.name":"` + notificationValueName + `"}`

	NotificationKeyConnect = `{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"}],` +
		`"optional":false,"name":"` + notificationKeyName + `","version":1}`
	NotificationValueConnect = `{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"},` +
		`{"type":"string","optional":false,"field":"type"},{"type":"string","optional":false,"field":"aggregate_type"},` +
		`{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"string","optional":false},"optional":true,"field":"additional_data"},` +
		`{"type":"int64","optional":false,"field":"timestamp"}],"optional":false,"name":"` + notificationValueName + `","version":1}`
)

// NotificationFormat encodes notification records. Build it with
// NewNotificationFormat, which registers the Avro schemas; its methods
// are then pure and safe for concurrent use.
type NotificationFormat struct {
	keyFormat, valueFmt  string
	schemas              bool
	keySchema, valSchema avro.Schema
	keyID, valueID       int
}

type notificationKey struct {
	ID string `avro:"id"`
}

type notificationValue struct {
	ID             string             `avro:"id"`
	Type           string             `avro:"type"`
	AggregateType  string             `avro:"aggregate_type"`
	AdditionalData *map[string]string `avro:"additional_data"` // a pointer: hamba/avro's nullable union wants one
	Timestamp      int64              `avro:"timestamp"`
}

// NewNotificationFormat prepares the notification encoding of cfg for
// topic; with Avro it registers the two schemas (blocking, retried while
// the registry is down, until ctx ends).
func NewNotificationFormat(ctx context.Context, cfg config.Config, topic string, reg *Registry) (*NotificationFormat, error) {
	f := &NotificationFormat{keyFormat: cfg.Format.Key, valueFmt: cfg.Format.Value, schemas: cfg.Format.JSONSchemas}
	var err error
	if f.keyFormat == config.FormatAvro {
		if f.keySchema, f.keyID, err = registerHeartbeatSchema(ctx, reg, topic+"-key", NotificationKeyAvro); err != nil {
			return nil, err
		}
	}
	if f.valueFmt == config.FormatAvro {
		if f.valSchema, f.valueID, err = registerHeartbeatSchema(ctx, reg, topic+"-value", NotificationValueAvro); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// AppendKey writes n's record key.
func (f *NotificationFormat) AppendKey(dst []byte, n notify.Notification) ([]byte, error) {
	switch {
	case f.keyFormat == config.FormatAvro:
		return appendConfluent(dst, f.keyID, f.keySchema, notificationKey{ID: n.ID})
	case f.schemas:
		dst = append(dst, `{"schema":`+NotificationKeyConnect+`,"payload":`...)
		return append(appendNotificationKey(dst, n), '}'), nil
	default:
		return appendNotificationKey(dst, n), nil
	}
}

// AppendValue writes n's record value (nil for cloudevents).
func (f *NotificationFormat) AppendValue(dst []byte, n notify.Notification) ([]byte, error) {
	switch {
	case f.valueFmt == config.FormatCloudEvents:
		return nil, nil
	case f.valueFmt == config.FormatAvro:
		v := notificationValue{ID: n.ID, Type: n.Type, AggregateType: n.AggregateType, Timestamp: n.Timestamp}
		if n.AdditionalData != nil {
			v.AdditionalData = &n.AdditionalData
		}
		return appendConfluent(dst, f.valueID, f.valSchema, v)
	case f.schemas:
		dst = append(dst, `{"schema":`+NotificationValueConnect+`,"payload":`...)
		return append(appendNotificationJSON(dst, n), '}'), nil
	default:
		return appendNotificationJSON(dst, n), nil
	}
}

func appendNotificationKey(dst []byte, n notify.Notification) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, n.ID)
	return append(dst, '}')
}

// appendNotificationJSON writes the value as JsonConverter does: the
// fields in the schema's order, the map as an object (its keys sorted:
// Debezium's is a HashMap, whose order is arbitrary), null when absent.
func appendNotificationJSON(dst []byte, n notify.Notification) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, n.ID)
	dst = append(dst, `,"type":`...)
	dst = appendJSONString(dst, n.Type)
	dst = append(dst, `,"aggregate_type":`...)
	dst = appendJSONString(dst, n.AggregateType)
	dst = append(dst, `,"additional_data":`...)
	if n.AdditionalData == nil {
		dst = append(dst, "null"...)
	} else {
		keys := make([]string, 0, len(n.AdditionalData))
		for k := range n.AdditionalData {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			dst = appendJSONString(dst, n.AdditionalData[k])
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, n.Timestamp, 10)
	return append(dst, '}')
}

// appendJSONString writes s as a JSON string, escaping what JSON requires
// (quote, backslash, control characters) and nothing else, as Jackson
// does; invalid UTF-8 becomes U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			dst = utf8.AppendRune(dst, r) // an invalid byte comes as U+FFFD
		}
	}
	return append(dst, '"')
}
