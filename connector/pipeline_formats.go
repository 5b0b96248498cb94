package connector

import (
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/schema"
)

// encoderConfig is the schema.Config of the pipeline.
func (p *Pipeline) encoderConfig() schema.Config {
	return record.EncoderConfig(&p.cfg, p.database, p.naming, p.columns, p.unknownType)
}

// formats returns the pipeline's formats, for the database it streams.
func (p *Pipeline) formats() *record.Formats {
	return record.NewFormats(p.cfg.Format, p.encoderConfig(), p.registry, p.naming, int(p.cfg.Kafka.MaxRecordBytes), p.log)
}

// unknownType warns once per column of a type without a mapping.
func (p *Pipeline) unknownType(table, column, typ string) {
	if _, seen := p.unknownTypes.LoadOrStore(table+"\x00"+column, true); seen {
		return
	}
	p.log.Warn("column type has no mapping; its values are sent as their text form (a string)",
		zap.String("table", table), zap.String("column", column), zap.String("type", typ))
}
