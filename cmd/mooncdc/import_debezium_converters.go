package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mooncdc/mooncdc/connector/config"
)

// This file maps key.converter and value.converter with their options to
// format.key, format.value, format.json_schemas and format.schema_registry.
// Each converter option is either mapped, passed silently at the value
// that changes nothing (the converter's default, or what mooncdc does),
// or refused by name.

// The converter classes import-debezium maps.
const (
	jsonConverter        = "org.apache.kafka.connect.json.JsonConverter"
	avroConverter        = "io.confluent.connect.avro.AvroConverter"
	protobufConverter    = "io.confluent.connect.protobuf.ProtobufConverter"
	jsonSchemaConverter  = "io.confluent.connect.json.JsonSchemaConverter"
	cloudEventsConverter = "io.debezium.converters.CloudEventsConverter"
)

// wiredFormats are the format.key and format.value values this mooncdc
// version's config accepts (TestImportDebeziumWiredFormatsAreTheLoaders
// keeps the list true). Another value is written marked notSupported,
// with a finding, so that 'mooncdc run' refuses the file rather than
// write another format than the connector's.
var wiredFormats = []string{config.FormatJSON, config.FormatAvro, config.FormatProtobuf, config.FormatJSONSchema, config.FormatCloudEvents}

// harmless is a converter option with no mooncdc key, and the value at
// which it changes nothing.
type harmless struct{ name, value, reason string }

// Cited: AbstractKafkaSchemaSerDeConfig.java, ProtobufDataConfig.java,
// KafkaProtobufSerializerConfig.java, JsonSchemaDataConfig.java and
// KafkaJsonSchemaSerializerConfig.java at schema-registry 794611bd86d;
// CloudEventsConverterConfig.java at Debezium v3.6.1.Final.
var (
	// AbstractKafkaSchemaSerDeConfig.java:85-124, 316-340.
	registryDefaults = []harmless{
		{"key.subject.name.strategy", "io.confluent.kafka.serializers.subject.TopicNameStrategy", "mooncdc registers under TopicNameStrategy subjects (<topic>-key, <topic>-value)"},
		{"value.subject.name.strategy", "io.confluent.kafka.serializers.subject.TopicNameStrategy", "mooncdc registers under TopicNameStrategy subjects (<topic>-key, <topic>-value)"},
		{"use.latest.version", "false", "mooncdc writes each record with the schema it was built with"},
		{"latest.compatibility.strict", "true", "mooncdc writes each record with the schema it was built with"},
		{"normalize.schemas", "false", "mooncdc registers schemas as it writes them"},
	}
	// ProtobufDataConfig.java:26-72; KafkaProtobufSerializerConfig.java:29-64.
	protobufDefaults = []harmless{
		{"enhanced.protobuf.schema.support", "false", "mooncdc's Protobuf schemas are ProtobufData's defaults"},
		{"scrub.invalid.names", "false", "a name that is not a Protobuf identifier is an error, as with the default"},
		{"int.for.enums", "false", "mooncdc's Protobuf schemas are ProtobufData's defaults"},
		{"optional.for.nullables", "false", "mooncdc's Protobuf schemas are ProtobufData's defaults"},
		{"wrapper.for.nullables", "false", "mooncdc's Protobuf schemas are ProtobufData's defaults"},
		{"wrapper.for.raw.primitives", "true", "mooncdc's Protobuf schemas are ProtobufData's defaults"},
		{"generate.struct.for.nulls", "false", "mooncdc's Protobuf schemas are ProtobufData's defaults"},
		{"generate.index.for.unions", "true", "mooncdc's Protobuf schemas are ProtobufData's defaults"},
		{"flatten.unions", "false", "mooncdc's Protobuf schemas are ProtobufData's defaults"},
		{"reference.lookup.only", "false", "mooncdc's Protobuf schemas are ProtobufData's defaults"},
	}
	// JsonSchemaDataConfig.java:34-61; KafkaJsonSchemaSerializerConfig.java:30-75.
	jsonSchemaDefaults = []harmless{
		{"use.optional.for.nonrequired", "false", "mooncdc's JSON Schema documents are JsonSchemaData's defaults"},
		{"ignore.modern.dialects", "false", "mooncdc's JSON Schema documents are JsonSchemaData's defaults"},
		{"decimal.format", "BASE64", "mooncdc writes decimals as base64 bytes, the default"},
		{"flatten.singleton.unions", "true", "mooncdc's JSON Schema documents are JsonSchemaData's defaults"},
		{"preserve.additional.properties", "false", "mooncdc's JSON Schema documents are JsonSchemaData's defaults"},
		{"json.oneof.for.nullables", "true", "mooncdc writes optional fields as oneOf [null, …], the default"},
		{"json.fail.invalid.schema", "false", "mooncdc writes values of the schema it built"},
		{"json.write.dates.iso8601", "false", "mooncdc writes Connect values, not Java dates"},
		{"json.indent.output", "false", "mooncdc writes compact JSON"},
	}
	// CloudEventsConverterConfig.java:27-83 (defaults), CloudEventsConverter.java:181-222.
	cloudEventsDefaults = []harmless{
		{"serializer.type", "json", "mooncdc writes CloudEvents in the structured JSON mode only"},
		{"data.serializer.type", "json", "mooncdc writes the CloudEvents data as JSON only"},
		{"extension.attributes.enable", "true", "mooncdc always writes the iodebezium* extension attributes"},
		{"opentelemetry.tracing.attributes.enable", "false", "mooncdc writes no OpenTelemetry attributes"},
		{"schema.name.adjustment.mode", "avro", "mooncdc has no such setting for CloudEvents"},
		{"schema.data.name.source.header.enable", "false", "mooncdc has no such setting for CloudEvents"},
		{"metadata.source", "value,id:generate,type:generate,traceparent:header,dataSchemaName:generate", "mooncdc takes the metadata from the value and generates id and type, the default"},
	}
)

// converters maps key.converter and value.converter with their options.
// JsonConverter's schemas.enable defaults to true (Kafka's
// JsonConverterConfig.SCHEMAS_ENABLE_DEFAULT), for the CloudEvents data
// too (CloudEventsConverter.java:219).
func (im *importer) converters() {
	var jsonSchemas []bool
	// JsonConverter's replace.null.with.default (default true), also the
	// CloudEvents data's (json.*): format.replace_null_with_default.
	var replaceNull []string
	replaceNullWithDefault := func(key string) {
		if v, ok := im.get(key); ok {
			replaceNull = append(replaceNull, key)
			im.out.set("format.replace_null_with_default", javaBool(v), "")
		}
	}
	schemasEnable := func(key string) {
		enabled := true
		if v, ok := im.get(key); ok {
			enabled = strings.EqualFold(v, "true")
		}
		jsonSchemas = append(jsonSchemas, enabled)
	}
	for _, side := range []string{"key", "value"} {
		prop := side + ".converter"
		class, ok := im.get(prop)
		if !ok {
			im.findings = append(im.findings, finding{Property: prop,
				Reason: "not in the connector config, so the Connect worker's applies (the worker configs Kafka ships: JsonConverter, schemas.enable=true): set format." + side + " and format.json_schemas to match it; mooncdc's default is JSON without schemas"})
			continue
		}
		switch class {
		case jsonConverter:
			im.setFormat(prop, side, config.FormatJSON)
			schemasEnable(prop + ".schemas.enable")
			replaceNullWithDefault(prop + ".replace.null.with.default")
		case avroConverter:
			im.setFormat(prop, side, config.FormatAvro)
			im.registry(prop)
			im.harmless(prop, registryDefaults)
		case protobufConverter:
			im.setFormat(prop, side, config.FormatProtobuf)
			im.registry(prop)
			im.harmless(prop, registryDefaults)
			im.harmless(prop, protobufDefaults)
			if v, ok := im.get(prop + ".skip.known.types"); !ok || strings.EqualFold(v, "true") {
				// KafkaProtobufSerializerConfig.java:60-62 (default true):
				// no references for the imports. mooncdc registers them
				// (connector/internal/record: registered_formats.go).
				im.note(prop+".skip.known.types", "mooncdc registers the imported well-known types (decimal, date, time of day, timestamp) as references under subjects named by their path, "+
					"as skip.known.types=false does, so that readers resolving every import through the registry (kafkajs) load the schema; a schema with an import gets other references than the Java converter's")
			}
		case jsonSchemaConverter:
			im.setFormat(prop, side, config.FormatJSONSchema)
			im.registry(prop)
			im.harmless(prop, registryDefaults)
			im.harmless(prop, jsonSchemaDefaults)
			if v, ok := im.get(prop + ".object.additional.properties"); ok {
				// JsonSchemaDataConfig.java:35 (default true).
				im.out.set("format.json_schema_additional_properties", javaBool(v), "")
			}
		case cloudEventsConverter:
			if side == "key" {
				// A key is no change envelope: CloudEventsConverter.java:268-272
				// writes it null (and :186 configures itself as a value converter).
				im.unmapped(prop, "CloudEventsConverter converts change envelopes, so as the key converter it writes every key null; mooncdc writes keys as json, avro, protobuf or json_schema")
				continue
			}
			im.setFormat(prop, side, config.FormatCloudEvents)
			im.harmless(prop, cloudEventsDefaults)
			schemasEnable(prop + ".json.schemas.enable")
			replaceNullWithDefault(prop + ".json.replace.null.with.default")
		default:
			im.unmapped(prop, fmt.Sprintf("%q: mooncdc writes the formats of JsonConverter, Confluent's AvroConverter, ProtobufConverter and JsonSchemaConverter, and Debezium's CloudEventsConverter only", class))
		}
		for _, k := range sortedKeys(im.props) {
			if strings.HasPrefix(k, prop+".") && !im.used[k] {
				im.unmapped(k, "a converter option mooncdc has no key for")
			}
		}
	}
	if len(replaceNull) == 2 && javaBool(im.props[replaceNull[0]]) != javaBool(im.props[replaceNull[1]]) {
		im.note(replaceNull[0], "differs from the value converter's: mooncdc has one format.replace_null_with_default for both; the value's is used")
	}
	switch {
	case len(jsonSchemas) == 2 && jsonSchemas[0] != jsonSchemas[1]:
		im.out.set("format.json_schemas", jsonSchemas[1], "")
		im.note("key.converter.schemas.enable", "differs from value.converter.schemas.enable: mooncdc has one format.json_schemas for both; the value's is used")
	case len(jsonSchemas) > 0:
		im.out.set("format.json_schemas", jsonSchemas[0], "")
	}
}

// setFormat sets format.<side> to value; a value the config does not accept
// yet is written marked, with the reason.
func (im *importer) setFormat(prop, side, value string) {
	if slices.Contains(wiredFormats, value) {
		im.out.set("format."+side, value, "")
		return
	}
	im.out.set("format."+side, value, notSupported)
	im.findings = append(im.findings, finding{Property: prop,
		Reason: fmt.Sprintf("written as format.%s: %s, which this mooncdc version does not write yet (the writer exists in connector/internal/connectformat but is not wired into the pipeline: issue 30), so 'mooncdc run' refuses the file; until it does, choose json or avro", side, value)})
}

// harmless passes the options of opts that are at their harmless value,
// and refuses the others by name.
func (im *importer) harmless(prop string, opts []harmless) {
	for _, o := range opts {
		key := prop + "." + o.name
		v, ok := im.get(key)
		if !ok {
			continue
		}
		same := strings.EqualFold(v, o.value)
		if strings.Contains(o.value, ",") {
			same = strings.Join(splitList(v), ",") == o.value
		}
		if !same {
			im.unmapped(key, fmt.Sprintf("%q: %s (only %s=%s)", v, o.reason, o.name, o.value))
		}
	}
}

// registry maps a registry converter's Schema Registry options.
func (im *importer) registry(prop string) {
	if v, ok := im.get(prop + ".schema.registry.url"); ok {
		urls := splitList(v)
		if len(urls) > 0 {
			im.out.set("format.schema_registry.url", urls[0], "")
		}
		if len(urls) > 1 {
			im.note(prop+".schema.registry.url", "several URLs: mooncdc takes one, the first")
		}
	}
	if v, ok := im.get(prop + ".auto.register.schemas"); ok {
		im.out.set("format.schema_registry.auto_register", strings.EqualFold(v, "true"), "")
	}
	im.get(prop + ".basic.auth.credentials.source")
	if v, ok := im.get(prop + ".basic.auth.user.info"); ok {
		if user, _, found := strings.Cut(v, ":"); found && !strings.HasPrefix(v, "${") {
			im.out.set("format.schema_registry.username", user, "")
		}
		im.unmapped(prop+".basic.auth.user.info", "holds the password: not copied; set format.schema_registry.password_file or MOONCDC_FORMAT_SCHEMA_REGISTRY_PASSWORD")
	}
}
