// Package connecttest checks records written in Kafka Connect's
// JsonConverter form (schemas.enable=true: {"schema":…,"payload":…}) the
// way JsonConverter reads them, so that the tests prove a Connect sink can
// read mooncdc's records, not only that mooncdc reads its own.
//
// The rules are JsonConverter's (apache/kafka,
// connect/json/src/main/java/org/apache/kafka/connect/json/JsonConverter.java
// at 1eb7644349c; line numbers in the comments), made strict where
// JsonConverter is lenient in a way that would lose data: JsonConverter
// reads a string as 0 for an int32 field and a number as null for a string
// field; [Validate] calls both errors.
package connecttest
