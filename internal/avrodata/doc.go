// Package avrodata is a test-side, independent implementation of
// Confluent's AvroData.fromConnectSchema (confluentinc/schema-registry,
// avro-data/src/main/java/io/confluent/connect/avro/AvroData.java) with
// AvroConverter's default options, and of Avro 1.12.1's Schema.toString
// (the Avro schema-registry builds with): given a
// Kafka Connect schema as JsonConverter writes it, it returns the Avro
// schema Confluent's AvroConverter would register for it. Tests hold
// mooncdc's own Avro schemas against it; nothing outside tests imports it.
//
// It covers what Debezium's schemas use: primitives, int8/int16 (int with
// connect.type), Connect's Decimal, Date, Time and Timestamp logical
// types, structs, arrays, maps, optional schemas (unions with null),
// defaults and the connect.* properties. Connect unions, enums and fixed
// (enhanced.avro.schema.support, generalized sum types) are not, because
// AvroConverter's defaults leave them off.
package avrodata
