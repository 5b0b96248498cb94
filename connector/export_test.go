package connector

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/connector/internal/snapshot"
	"github.com/mooncdc/mooncdc/schema"
)

// DescribeTableForTest returns the relation of table name ("schema.table")
// as the copy describes it (describeTable), as publication pub streams it:
// the *schema.Relation the encoders get for that table.
func DescribeTableForTest(ctx context.Context, conn *pgx.Conn, name, pub string) (*schema.Relation, error) {
	return snapshot.DescribeTable(ctx, conn, name, pub)
}

// EncoderConfigForTest is the schema.Config p's encoders get.
func EncoderConfigForTest(p *Pipeline) schema.Config { return p.encoderConfig() }

// HeartbeatSchemasForTest returns the Connect (JSON) and Avro schemas of
// heartbeat keys and values.
func HeartbeatSchemasForTest() (keyConnect, keyAvro, valueConnect, valueAvro string) {
	return record.HeartbeatKeyConnect, record.HeartbeatKeyAvro, record.HeartbeatValueConnect, record.HeartbeatValueAvro
}

// SeatForTest marks p as a seat's pipeline (standby instances, a worker
// group), as connector/group's Standby does with Seated: another instance
// may take over from it, so its writes are fenced by the broker
// (connector/internal/delivery).
func SeatForTest(p *Pipeline) { p.seated = true }
