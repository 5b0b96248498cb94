package connector

import (
	"crypto/rand"
	"fmt"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/connector/internal/transform"
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

// setTransforms gives formats the `transforms` chain (none when the key is
// empty): every record runs through it after mooncdc's envelope and
// routing (record: chain.go), topics it routes to are created as the
// pipeline's others are, and its failures count in
// mooncdc_format_errors_total. The records carry Debezium's context
// headers, with a run id new at each start as Debezium's is.
func (p *Pipeline) setTransforms(formats *record.Formats, topics *delivery.TopicMaker) error {
	if len(p.cfg.Transforms) == 0 {
		// No chain: the codecs run the Connect view only for a format
		// that needs it (record: registered_formats.go), whose converter
		// failures count in mooncdc_format_errors_total too; no context
		// headers, as the plain path writes none.
		formats.SetTransforms(&record.Transforms{Chain: &transform.Chain{}, Errors: p.metrics.FormatErrors})
		return nil
	}
	chain, err := transform.Parse(p.cfg.Transforms)
	if err != nil { // Validate refused it already
		return &config.ConfigError{Err: fmt.Errorf("transforms: %w", err)}
	}
	formats.SetTransforms(&record.Transforms{Chain: chain, Context: record.ContextHeaders(p.cfg.Kafka.TopicPrefix, runID()),
		Ensure: topics.Ensure, Errors: p.metrics.FormatErrors, Reserved: []string{p.cfg.Kafka.OffsetsTopic}})
	return nil
}

// runID is a random (version 4) UUID, as Debezium's UUIDUtils.generateNewUUID
// gives each task run (CdcSourceTaskContext.java:48 at v3.6.1.Final).
func runID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
