package schema

// This file exports the Kafka Connect JSON renderings other packages
// writing Connect data need (connector/internal/connectformat's
// CloudEvents data with its schema), so there is one writer of each.

// AppendConnectSchemaJSON appends s as Kafka Connect's JsonConverter
// writes a schema (the {"schema": …} block).
func AppendConnectSchemaJSON(dst []byte, s *Schema) []byte { return appendConnectJSON(dst, s, "") }

// AppendJSONString appends s as a quoted JSON string, escaped as Jackson
// escapes it.
func AppendJSONString(dst []byte, s string) []byte { return appendJSONString(dst, s) }
