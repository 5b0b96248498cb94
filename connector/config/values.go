package config

// The enumerated values of configuration keys, and the names reserved in
// what mooncdc reads from Postgres and writes to Kafka.

// The schema evolution policies.
const (
	EvolutionPark       = "park"
	EvolutionNewSubject = "new_subject"
	EvolutionForce      = "force"
)

// The values of on_slot_loss.
const (
	SlotLossFail       = "fail"
	SlotLossResnapshot = "resnapshot"
)

// DDLMessagePrefix is the logical message prefix reserved for schema
// change messages; they must be transactional.
const DDLMessagePrefix = "mooncdc_ddl"

// HeartbeatMessagePrefix is the logical message prefix of heartbeats; such
// messages are never written to the <prefix>.message topic.
const HeartbeatMessagePrefix = "mooncdc_heartbeat"

// Version is reported in every record's source.version.
const Version = "mooncdc-0.1.0"
