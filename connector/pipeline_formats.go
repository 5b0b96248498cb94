package connector

import (
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/schema"
)

// encoderConfig is the schema.Config of the pipeline.
func (p *Pipeline) encoderConfig() schema.Config {
	f := p.cfg.Format
	moneyDigits := f.MoneyFractionDigits // 0 is a setting: whole units
	flat, _ := f.SchemaFlat()            // refused by Validate when it fails
	return schema.Config{Flat: flat,
		Name: p.cfg.Kafka.TopicPrefix, Database: p.database, Version: config.Version,
		UnavailableValue: f.UnavailableValuePlaceholder, DecimalMode: f.DecimalHandlingMode,
		BinaryMode: f.BinaryHandlingMode, TimePrecisionMode: f.TimePrecisionMode,
		IntervalMode: f.IntervalHandlingMode, HstoreMode: f.HstoreHandlingMode,
		MoneyFractionDigits: &moneyDigits, IncludeUnknownDatatypes: f.IncludeUnknownDatatypes,
		KeepNulls: !f.ReplaceNullWithDefault, OnUnknownType: p.unknownType,
		ShapeColumn: p.columns.ShapeFunc(),
		Route: func(schemaName, table string) (string, string, string) {
			tt := p.naming.Of(schemaName, table)
			return tt.SchemaName, tt.KeyField, tt.KeyValue
		},
	}
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
