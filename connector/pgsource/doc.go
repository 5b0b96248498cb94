// Package pgsource is what mooncdc asks of and does to the Postgres
// source outside the replication stream: connections (Dial, ConnectSQL,
// ConnectReplication, each query under a deadline against a half-open
// link), the slot (IDENTIFY_SYSTEM, create, look up, failover) and the
// source's identity, the catalog (the types and NOT NULL of a relation's
// columns), the publication (what goes in, here and nowhere else, and
// the SQL that check and status share), DDL capture, the heartbeat
// messages that keep an idle slot moving (Heartbeater), the copy slots'
// names and the SQL that frees and drops one, the server version check,
// and UnsafeResumeError (the offsets do not describe this source or slot).
//
// Place in the pipeline: at the source, beside connector/stream (which owns
// the replication session itself). Its users: connector (setup, the copies,
// discovery, the key query, every Postgres connection through Dial),
// connector/group (the slot's walsender at a takeover) and cmd/mooncdc
// (check and status share its SQL). It imports connector/config,
// connector/internal/fault (retries) and connector/stream, and must import
// no stage: no record, delivery, phase or snapshot code, and never connector
// itself. It decides nothing about records: it answers what Postgres says (a
// relation's columns, its replica identity, a slot's holder), and the stages
// decide a record's key, topic and shape from that.
package pgsource
