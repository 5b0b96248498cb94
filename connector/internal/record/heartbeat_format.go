package record

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/hamba/avro/v2"

	"github.com/mooncdc/mooncdc/connector/config"
)

// Heartbeat records are written in the configured formats, as Debezium
// writes its heartbeats through the configured converters: the key is
// io.debezium.connector.common.ServerNameKey {serverName}, the value
// io.debezium.connector.common.Heartbeat {ts_ms}, both version 1
// (SchemaFactory.java:165-179; HeartbeatImpl.java:153-166 fills serverName
// with the topic prefix and ts_ms with the time of the heartbeat). Plain
// JSON: {"serverName":"shop"} and {"ts_ms":…}; JSON with schemas: the same
// in {"schema","payload"}; Avro: Confluent-framed, the schemas registered
// under <heartbeat topic>-key and -value.

const (
	heartbeatKeyName   = "io.debezium.connector.common.ServerNameKey"
	heartbeatValueName = "io.debezium.connector.common.Heartbeat"

	HeartbeatKeyAvro = `{"type":"record","name":"ServerNameKey","namespace":"io.debezium.connector.common",` +
		`"fields":[{"name":"serverName","type":"string"}],"connect.version":1,"connect.name":"` + heartbeatKeyName + `"}`
	HeartbeatValueAvro = `{"type":"record","name":"Heartbeat","namespace":"io.debezium.connector.common",` +
		`"fields":[{"name":"ts_ms","type":"long"}],"connect.version":1,"connect.name":"` + heartbeatValueName + `"}`

	HeartbeatKeyConnect = `{"type":"struct","fields":[{"type":"string","optional":false,"field":"serverName"}],` +
		`"optional":false,"name":"` + heartbeatKeyName + `","version":1}`
	HeartbeatValueConnect = `{"type":"struct","fields":[{"type":"int64","optional":false,"field":"ts_ms"}],` +
		`"optional":false,"name":"` + heartbeatValueName + `","version":1}`
)

// HeartbeatFormat encodes heartbeat records. Build it with
// newHeartbeatFormat, which registers the Avro schemas; append is then
// pure and safe to call from the stream goroutine.
type HeartbeatFormat struct {
	prefix               string
	keyFormat, valueFmt  string
	schemas              bool // JSON with {"schema","payload"}
	keySchema, valSchema avro.Schema
	keyID, valueID       int
}

type heartbeatKey struct {
	ServerName string `avro:"serverName"`
}

type heartbeatValue struct {
	TsMs int64 `avro:"ts_ms"`
}

// NewHeartbeatFormat prepares the heartbeat encoding of cfg; with Avro it
// registers the two schemas (blocking, retried while the registry is
// down, until ctx ends).
func NewHeartbeatFormat(ctx context.Context, cfg config.Config, reg *Registry) (*HeartbeatFormat, error) {
	f := &HeartbeatFormat{prefix: cfg.Kafka.TopicPrefix, keyFormat: cfg.Format.Key, valueFmt: cfg.Format.Value, schemas: cfg.Format.JSONSchemas}
	var err error
	if f.keyFormat == config.FormatAvro {
		if f.keySchema, f.keyID, err = registerHeartbeatSchema(ctx, reg, cfg.Heartbeat.Topic+"-key", HeartbeatKeyAvro); err != nil {
			return nil, err
		}
	}
	if f.valueFmt == config.FormatAvro {
		if f.valSchema, f.valueID, err = registerHeartbeatSchema(ctx, reg, cfg.Heartbeat.Topic+"-value", HeartbeatValueAvro); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func registerHeartbeatSchema(ctx context.Context, reg *Registry, subject, text string) (avro.Schema, int, error) {
	s, err := avro.Parse(text)
	if err != nil {
		return nil, 0, fmt.Errorf("heartbeat schema: %w", err) // a bug: the text is a constant
	}
	id, err := reg.id(ctx, subject, text)
	if err != nil {
		return nil, 0, fmt.Errorf("register the heartbeat schema under %q: %w", subject, err)
	}
	return s, id, nil
}

// appendKey and appendValue write the record's key and value.
func (f *HeartbeatFormat) appendKey(dst []byte) ([]byte, error) {
	switch {
	case f.keyFormat == config.FormatAvro:
		return appendConfluent(dst, f.keyID, f.keySchema, heartbeatKey{ServerName: f.prefix})
	case f.schemas:
		dst = append(dst, `{"schema":`+HeartbeatKeyConnect+`,"payload":`...)
		return append(appendServerName(dst, f.prefix), '}'), nil
	default:
		return appendServerName(dst, f.prefix), nil
	}
}

func (f *HeartbeatFormat) appendValue(dst []byte, tsMs int64) ([]byte, error) {
	switch {
	case f.valueFmt == config.FormatCloudEvents:
		// Not a change envelope: CloudEventsConverter writes null
		// (CloudEventsConverter.java:268-272 at Debezium v3.6.1.Final).
		return nil, nil
	case f.valueFmt == config.FormatAvro:
		return appendConfluent(dst, f.valueID, f.valSchema, heartbeatValue{TsMs: tsMs})
	case f.schemas:
		dst = append(dst, `{"schema":`+HeartbeatValueConnect+`,"payload":`...)
		return append(appendHeartbeatJSON(dst, tsMs), '}'), nil
	default:
		return appendHeartbeatJSON(dst, tsMs), nil
	}
}

func appendServerName(dst []byte, prefix string) []byte {
	dst = append(dst, `{"serverName":`...)
	dst = strconv.AppendQuote(dst, prefix)
	return append(dst, '}')
}

func appendHeartbeatJSON(dst []byte, tsMs int64) []byte {
	dst = append(dst, `{"ts_ms":`...)
	dst = strconv.AppendInt(dst, tsMs, 10)
	return append(dst, '}')
}

// appendConfluent writes v in the Confluent wire format: magic byte 0, the
// schema id (big-endian int32), the Avro binary encoding.
func appendConfluent(dst []byte, id int, s avro.Schema, v any) ([]byte, error) {
	body, err := avro.Marshal(s, v)
	if err != nil {
		return dst, err
	}
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(id))
	return append(dst, body...), nil
}
