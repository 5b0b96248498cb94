package connectformat

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// This file writes a Debezium change event as Debezium's CloudEvents
// converter does in structured JSON mode with JSON data, its defaults
// (serializer.type and data.serializer.type json, extension attributes
// on, OpenTelemetry attributes off, metadata from the value, id and type
// generated). Cited, at Debezium v3.6.1.Final:
// CEC = debezium-connect-plugins/src/main/java/io/debezium/converters/CloudEventsConverter.java,
// CEM = debezium-connect-plugins/src/main/java/io/debezium/converters/spi/CloudEventsMaker.java,
// PCM = debezium-connector-postgres/src/main/java/io/debezium/connector/postgresql/converters/PostgresCloudEventsMaker.java,
// RMB = debezium-connect-plugins/src/main/java/io/debezium/converters/recordandmetadata/RecordAndMetadataBaseImpl.java.

// CloudEventsOptions are the converter's settings that change the bytes.
type CloudEventsOptions struct {
	// DataSchemas is json.schemas.enable for the data: true (JsonConverter's
	// default, CEC:215) writes "data" as {"schema": …, "payload": …}.
	DataSchemas bool
	// KeepNulls is json.replace.null.with.default=false for the data: a
	// null column stays null where its schema has a default (JsonConverter
	// replaces it by default).
	KeepNulls bool
}

// extensionPrefix and txPrefix name the extension attributes (CEC:92-93).
const (
	extensionPrefix = "iodebezium"
	txPrefix        = "tx"
)

// txBlockFields are TransactionMonitor.TRANSACTION_BLOCK_SCHEMA's fields
// (SchemaFactory.transactionBlockSchema): the converter names the tx
// attributes from this schema, not the record's (CEC:509).
var txBlockFields = []string{"id", "total_order", "data_collection_order"}

// AppendCloudEvent appends the CloudEvent of one record value: s is the
// value's schema, v its *transform.Struct. ok is false when the converter
// writes no bytes (a null value, or a schema that is not a Debezium
// envelope: heartbeats, schema changes, transaction metadata; CEC:264-271).
func AppendCloudEvent(dst []byte, s *schema.Schema, v any, opts CloudEventsOptions) (out []byte, ok bool, err error) {
	if s == nil || v == nil || !strings.HasSuffix(s.Name, ".Envelope") {
		return dst, false, nil
	}
	rec, isStruct := v.(*transform.Struct)
	if !isStruct || s.Type != schema.TypeStruct {
		return dst, false, fmt.Errorf("cloudevents: mismatching schema: the value is %T", v)
	}
	get := func(st *transform.Struct, name string) (any, *schema.Schema) {
		for i, f := range st.Schema.Fields {
			if f.Name == name {
				return st.Values[i], f.Schema
			}
		}
		return nil, nil
	}
	src, _ := get(rec, "source")
	source, isSource := src.(*transform.Struct)
	if !isSource {
		return dst, false, fmt.Errorf("cloudevents: the envelope has no source struct")
	}
	sourceField := func(name string) (any, error) { // RMB: source().get(name), with its default
		val, fs := get(source, name)
		if fs == nil {
			return nil, fmt.Errorf("cloudevents: no field %q in the source of the event", name)
		}
		if val == nil && fs.HasDefault {
			return transform.FromJSON(fs, fs.Default)
		}
		return val, nil
	}
	str := func(name string) (string, error) { // Java's string concatenation of the value
		val, err := sourceField(name)
		if err != nil {
			return "", err
		}
		switch x := val.(type) {
		case nil:
			return "null", nil
		case string:
			return x, nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		}
		return fmt.Sprint(val), nil
	}
	var fields [4]string
	for i, k := range []string{"name", "lsn", "txId", "sequence"} {
		if fields[i], err = str(k); err != nil {
			return dst, false, err
		}
	}
	connector, err := str("connector")
	if err != nil {
		return dst, false, err
	}
	tsv, err := sourceField("ts_ms")
	if err != nil {
		return dst, false, err
	}
	ts, isInt := tsv.(int64)
	if !isInt {
		return dst, false, fmt.Errorf("cloudevents: source.ts_ms is %T, want int64", tsv)
	}
	op, _ := get(rec, "op")
	opStr, _ := op.(string)

	b := append(dst, '{')
	attr := func(name, val string) {
		b = schema.AppendJSONString(b, name)
		b = append(b, ':')
		b = schema.AppendJSONString(b, val)
		b = append(b, ',')
	}
	// PCM:41-46: the id; CEM:100-104 source; CEM:111-113 specversion;
	// CEM:120-122 type; CEM:148-153 time; CEM:129-131 datacontenttype.
	attr("id", "name:"+fields[0]+";lsn:"+fields[1]+";txId:"+fields[2]+";sequence:"+fields[3])
	attr("source", "/debezium/"+connector+"/"+fields[0])
	attr("specversion", "1.0")
	attr("type", "io.debezium.connector."+connector+".DataChangeEvent")
	attr("time", time.UnixMilli(ts).UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	attr("datacontenttype", "application/json")
	// CEC:521-526: op, every source field, the transaction block's.
	b = schema.AppendJSONString(b, extensionName("op"))
	b = append(b, ':')
	if op == nil {
		return dst, false, fmt.Errorf("cloudevents: the envelope has no op")
	}
	b = schema.AppendJSONString(b, opStr)
	b = append(b, ',')
	for i, f := range source.Schema.Fields {
		val := source.Values[i]
		if val == nil && f.Schema.HasDefault {
			if val, err = transform.FromJSON(f.Schema, f.Schema.Default); err != nil {
				return dst, false, fmt.Errorf("cloudevents: source.%s: the default: %w", f.Name, err)
			}
		}
		if b, err = appendExtension(b, extensionName(f.Name), f.Schema, val, false); err != nil {
			return dst, false, fmt.Errorf("cloudevents: source.%s: %w", f.Name, err)
		}
	}
	txv, txs := get(rec, "transaction")
	tx, _ := txv.(*transform.Struct)
	for _, name := range txBlockFields {
		var val any
		fs := &schema.Schema{Type: schema.TypeString, Optional: true}
		if name != "id" {
			fs = &schema.Schema{Type: schema.TypeInt64, Optional: true}
		}
		if tx != nil && txs != nil {
			val, _ = get(tx, name)
		}
		if b, err = appendExtension(b, extensionName(txPrefix+name), fs, val, true); err != nil {
			return dst, false, fmt.Errorf("cloudevents: transaction.%s: %w", name, err)
		}
	}
	// RMB dataSchema/data with PCM's fields before and after, named
	// io.debezium.connector.<connector>.Data.
	data := &schema.Schema{Type: schema.TypeStruct, Name: "io.debezium.connector." + connector + ".Data"}
	dv := &transform.Struct{Schema: data}
	for _, name := range []string{"before", "after"} {
		val, fs := get(rec, name)
		if fs == nil {
			return dst, false, fmt.Errorf("cloudevents: the envelope has no %s field", name)
		}
		data.Fields = append(data.Fields, schema.Field{Name: name, Schema: fs})
		dv.Values = append(dv.Values, val)
	}
	b = append(b, `"data":`...)
	if opts.DataSchemas { // CEC:299-315: {"schema": …, "payload": …}
		b = append(b, `{"schema":`...)
		b = schema.AppendConnectSchemaJSON(b, data)
		b = append(b, `,"payload":`...)
	}
	rules := converterRules
	if opts.KeepNulls {
		rules = converterKeepNulls
	}
	if b, _, err = appendJSONValue(b, data, dv, rules); err != nil {
		return dst, false, fmt.Errorf("cloudevents: data: %w", err)
	}
	if opts.DataSchemas {
		b = append(b, '}')
	}
	return append(b, '}'), true, nil
}

// appendExtension writes one extension attribute and a comma: booleans
// and integers up to int32 as they are, strings and int64 (which
// CloudEvents has not) as strings (CEC:552-597).
func appendExtension(b []byte, name string, s *schema.Schema, v any, alwaysOptional bool) ([]byte, error) {
	b = schema.AppendJSONString(b, name)
	b = append(b, ':')
	if v == nil {
		if !s.Optional && !alwaysOptional {
			return b, fmt.Errorf("null in a required attribute")
		}
		return append(b, "null,"...), nil
	}
	switch x := v.(type) {
	case bool:
		b = strconv.AppendBool(b, x)
	case int8:
		b = strconv.AppendInt(b, int64(x), 10)
	case int16:
		b = strconv.AppendInt(b, int64(x), 10)
	case int32:
		b = strconv.AppendInt(b, int64(x), 10)
	case int64:
		b = schema.AppendJSONString(b, strconv.FormatInt(x, 10))
	case string:
		b = schema.AppendJSONString(b, x)
	default:
		return b, fmt.Errorf("a source field of type %T cannot be a CloudEvents extension attribute", v)
	}
	return append(b, ','), nil
}

// extensionName is adjustExtensionName (CEC:685-705): the prefix and the
// name's ASCII letters and digits (upper case kept: txId is iodebeziumtxId).
func extensionName(name string) string {
	b := []byte(extensionPrefix)
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b = append(b, c)
		}
	}
	return string(b)
}
