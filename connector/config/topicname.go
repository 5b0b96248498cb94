package config

import "strings"

// TopicName is the data topic of a table: <prefix>.<schema>.<table>,
// sanitized as Debezium does it (sanitizeTopic).
func TopicName(prefix, schemaName, table string) string {
	return sanitizeTopic(prefix + "." + schemaName + "." + table)
}

// maxTopicLength is Kafka's limit on a topic name, which Debezium cuts
// sanitized names to (TopicNamingStrategy.MAX_NAME_LENGTH, debezium-api
// src/main/java/io/debezium/spi/topic/TopicNamingStrategy.java:22, v3.6.1).
const maxTopicLength = 249

// sanitizeTopic makes t a legal Kafka topic name the way Debezium's
// AbstractTopicNamingStrategy.sanitizedTopicName does
// (debezium-connector-common/src/main/java/io/debezium/schema/AbstractTopicNamingStrategy.java:155-200, v3.6.1):
// each Java char (a UTF-16 code unit) outside [a-zA-Z0-9._-] becomes '_',
// so "Ordér" is "Ord_r" and a character outside the Basic Multilingual
// Plane (two UTF-16 units) is "__"; the result is cut to 249 characters,
// and "." and ".." (which Kafka refuses) become "_" and "__".
func sanitizeTopic(t string) string {
	clean := len(t) <= maxTopicLength && t != "." && t != ".."
	for i := 0; clean && i < len(t); i++ {
		clean = topicChar(t[i])
	}
	if clean {
		return t
	}
	var b strings.Builder
	b.Grow(len(t))
	for _, r := range t {
		switch {
		case r < 0x80 && topicChar(byte(r)):
			b.WriteByte(byte(r))
		case r > 0xFFFF:
			b.WriteString("__")
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	switch {
	case len(out) > maxTopicLength:
		out = out[:maxTopicLength] // ASCII by now: bytes are characters
	case out == ".":
		out = "_"
	case out == "..":
		out = "__"
	}
	return out
}

func topicChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}
