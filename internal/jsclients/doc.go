// Package jsclients reads Kafka records the way applications written
// outside mooncdc read them, so that tests prove those readers accept
// what mooncdc writes, not only that mooncdc reads its own output:
// kafkajs consumes, @kafkajs/confluent-schema-registry decodes Protobuf
// and JSON Schema records (schema fetched from the registry by the id in
// the Confluent framing), and the CloudEvents JS SDK parses and validates
// CloudEvents (issue 30, "Done means").
//
// js/ holds the package.json and package-lock.json that pin the three
// modules, and read.js, the node script. [Install] runs npm ci once per
// lock file into a cache directory ($JSCLIENTS_CACHE, else the user's
// cache directory under mooncdc-jsclients), as internal/pgtest caches
// what it fetches; [Read] runs one node process per call for every topic
// of the request (not one per record) and returns each record as the
// client decoded it, errors included: a client's refusal is data for the
// test, not a failure of the harness. [ReadT] skips under go test -short
// like the other integration harnesses. Without node and npm in PATH (or
// with a node older than 18) the harness fetches the pinned Node.js and
// npm from the npm registry over HTTPS (node.go, internal/npmfetch) into
// the same cache; only on other than linux/amd64 does it fail, naming
// the fix.
//
// To change a pinned version: edit js/package.json, run npm install
// --package-lock-only --ignore-scripts in js/, commit both files (the
// lock file's hash keys the cache). Never commit js/node_modules.
package jsclients
