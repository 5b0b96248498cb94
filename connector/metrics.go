package connector

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/mooncdc/mooncdc/connector/internal/emit"
	"github.com/mooncdc/mooncdc/connector/internal/snapshot"
)

// Metrics are the pipeline's Prometheus metrics. Names are a public
// contract (dashboards, alerts): extend, don't rename. Each family is
// defined once, in metricDefs; docs/metrics.md is generated from it (see
// MetricDefinitions) and a test fails when that page is stale.
type Metrics struct {
	Registry *prometheus.Registry // a lone pipeline's own; nil for one of a worker's pipelines

	TransactionsReceived prometheus.Counter
	ChangesReceived      prometheus.Counter
	ChangesWritten       prometheus.Counter
	TransactionsDurable  prometheus.Counter
	PayloadBytes         prometheus.Counter
	DurableLSN           prometheus.Gauge
	LagBytes             prometheus.Gauge
	InflightBytes        prometheus.GaugeFunc
	WorkerErrors         *prometheus.CounterVec
	Streaming            prometheus.Gauge
	Active               prometheus.Gauge
	TableCopyRows        *prometheus.CounterVec
	TableCopyRowsResumed *prometheus.CounterVec
	TableCopyDuration    *prometheus.GaugeVec
	KafkaTransactions    *prometheus.CounterVec
	SlotLossResnapshots  prometheus.Counter
	LastServerMessage    prometheus.Gauge
	KafkaStalled         prometheus.Gauge
	FormatErrors         *prometheus.CounterVec
}

// MetricDefinition is one metric family mooncdc exports.
type MetricDefinition struct {
	Name   string
	Kind   string // counter or gauge
	Help   string
	Labels []string // a worker group's pipeline label is not listed: it is added to every family
}

func (d MetricDefinition) counterOpts() prometheus.CounterOpts {
	return prometheus.CounterOpts{Name: d.Name, Help: d.Help}
}

func (d MetricDefinition) gaugeOpts() prometheus.GaugeOpts {
	return prometheus.GaugeOpts{Name: d.Name, Help: d.Help}
}

// The metric families, in the order of the reference.
var (
	mTransactionsReceived = MetricDefinition{"mooncdc_transactions_received_total", "counter",
		"Postgres transactions decoded from the replication stream.", nil}
	mChangesReceived = MetricDefinition{"mooncdc_changes_received_total", "counter",
		"Changes (rows, truncates, messages) decoded from the replication stream.", nil}
	mChangesWritten = MetricDefinition{"mooncdc_changes_written_total", "counter",
		"Change records acknowledged by Kafka (tombstones not counted).", nil}
	mTransactionsDurable = MetricDefinition{"mooncdc_transactions_durable_total", "counter",
		"Transactions whose records are all acknowledged by Kafka.", nil}
	mPayloadBytes = MetricDefinition{"mooncdc_replication_payload_bytes_total", "counter",
		"pgoutput payload bytes received.", nil}
	mDurableLSN = MetricDefinition{"mooncdc_durable_lsn", "gauge",
		"The durable LSN: end of the newest transaction fully acknowledged by Kafka (confirmed to Postgres).", nil}
	mLagBytes = MetricDefinition{"mooncdc_replication_lag_bytes", "gauge",
		"Server WAL end minus the durable LSN.", nil}
	mInflightBytes = MetricDefinition{"mooncdc_inflight_bytes", "gauge",
		"Bytes of records handed to the producer and not yet acknowledged.", nil}
	mWorkerErrors = MetricDefinition{"mooncdc_worker_errors_total", "counter",
		"Errors by worker type (main: the main WAL worker, table_sync: copies) and error type (transient, permanent, critical).",
		[]string{"worker_type", "error_type"}}
	mTableCopyRows = MetricDefinition{"mooncdc_table_copy_rows_total", "counter",
		"Rows copied by table snapshots.", []string{"table"}}
	mTableCopyRowsResumed = MetricDefinition{"mooncdc_table_copy_rows_resumed_total", "counter",
		"Rows a resumed table copy did not copy again: its chunks were in Kafka from an earlier attempt.", []string{"table"}}
	mTableCopyDuration = MetricDefinition{"mooncdc_table_copy_duration_seconds", "gauge",
		"Duration of the table's last completed copy (COPY and stale-key tombstones, acknowledged).", []string{"table"}}
	mStreaming = MetricDefinition{"mooncdc_streaming", "gauge",
		"1 while the main worker is streaming from Postgres.", nil}
	mActive = MetricDefinition{"mooncdc_active", "gauge",
		"1 while this instance runs the pipeline; 0 while it is a standby (ha.enabled) or stopped.", nil}
	mKafkaTransactions = MetricDefinition{"mooncdc_kafka_transactions_total", "counter",
		"Kafka transactions ended in exactly-once mode, or in at-least-once mode with ha.enabled (the fence), by outcome (commit, abort).", []string{"outcome"}}
	mSlotLossResnapshots = MetricDefinition{"mooncdc_slot_loss_resnapshots_total", "counter",
		"Times a lost or missing slot was replaced and every table copied again (on_slot_loss: resnapshot).", nil}
	mLastServerMessage = MetricDefinition{"mooncdc_last_server_message_seconds", "gauge",
		"Seconds the main replication connection has been silent: since its last message from Postgres (data or keepalive), not counting time it waited for Kafka; above postgres.replication_timeout the connection is ended and /readyz answers 503.", nil}
	mFormatErrors = MetricDefinition{"mooncdc_format_errors_total", "counter",
		"Records a transform chain (`transforms`) failed on (stage transform) or whose transformed key, value or headers the converter could not write (stage key, value, headers); each parks its table.",
		[]string{"stage"}}
	mKafkaStalled = MetricDefinition{"mooncdc_kafka_stalled_seconds", "gauge",
		"Seconds since Kafka last acknowledged a record while records were in flight (0 while none are); above postgres.replication_timeout /readyz answers 503.", nil}
)

var metricDefs = []*MetricDefinition{
	&mTransactionsReceived, &mChangesReceived, &mChangesWritten, &mTransactionsDurable, &mPayloadBytes,
	&mDurableLSN, &mLagBytes, &mInflightBytes, &mWorkerErrors, &mTableCopyRows, &mTableCopyRowsResumed,
	&mTableCopyDuration, &mStreaming, &mActive, &mKafkaTransactions, &mSlotLossResnapshots,
	&mLastServerMessage, &mKafkaStalled, &mFormatErrors,
}

// MetricDefinitions returns every metric family of a pipeline, in the order
// of the reference (docs/metrics.md is generated from it).
func MetricDefinitions() []MetricDefinition {
	out := make([]MetricDefinition, len(metricDefs))
	for i, d := range metricDefs {
		out[i] = *d
	}
	return out
}

// newMetrics is a lone pipeline's metrics, in a registry of its own with
// the Go and process collectors.
func newMetrics(inflight func() float64) *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := newMetricsIn(reg, inflight)
	m.Registry = reg
	return m
}

// newMetricsIn registers one pipeline's metrics in reg (for a worker
// running several, reg adds the pipeline label) and leaves Registry nil.
func newMetricsIn(reg prometheus.Registerer, inflight func() float64) *Metrics {
	counter := func(d MetricDefinition) prometheus.Counter { return prometheus.NewCounter(d.counterOpts()) }
	counterVec := func(d MetricDefinition) *prometheus.CounterVec {
		return prometheus.NewCounterVec(d.counterOpts(), d.Labels)
	}
	gauge := func(d MetricDefinition) prometheus.Gauge { return prometheus.NewGauge(d.gaugeOpts()) }
	m := &Metrics{
		TransactionsReceived: counter(mTransactionsReceived),
		ChangesReceived:      counter(mChangesReceived),
		ChangesWritten:       counter(mChangesWritten),
		TransactionsDurable:  counter(mTransactionsDurable),
		PayloadBytes:         counter(mPayloadBytes),
		DurableLSN:           gauge(mDurableLSN),
		LagBytes:             gauge(mLagBytes),
		InflightBytes:        prometheus.NewGaugeFunc(mInflightBytes.gaugeOpts(), inflight),
		WorkerErrors:         counterVec(mWorkerErrors),
		TableCopyRows:        counterVec(mTableCopyRows),
		TableCopyRowsResumed: counterVec(mTableCopyRowsResumed),
		TableCopyDuration:    prometheus.NewGaugeVec(mTableCopyDuration.gaugeOpts(), mTableCopyDuration.Labels),
		Streaming:            gauge(mStreaming),
		Active:               gauge(mActive),
		KafkaTransactions:    counterVec(mKafkaTransactions),
		SlotLossResnapshots:  counter(mSlotLossResnapshots),
		LastServerMessage:    gauge(mLastServerMessage),
		KafkaStalled:         gauge(mKafkaStalled),
		FormatErrors:         counterVec(mFormatErrors),
	}
	reg.MustRegister(m.TransactionsReceived, m.ChangesReceived, m.ChangesWritten, m.TransactionsDurable,
		m.PayloadBytes, m.DurableLSN, m.LagBytes, m.InflightBytes, m.WorkerErrors, m.Streaming, m.Active, m.TableCopyRows, m.TableCopyDuration, m.KafkaTransactions,
		m.SlotLossResnapshots, m.TableCopyRowsResumed, m.LastServerMessage, m.KafkaStalled, m.FormatErrors)
	m.WorkerErrors.WithLabelValues("main", "transient")
	return m
}

// emitterCounts are the counters of p.metrics an emitter adds to. Read when
// the pipeline runs: a standby sets p.metrics after New (standby.go).
func (p *Pipeline) emitterCounts() emit.Counts {
	m := p.metrics
	return emit.Counts{TransactionsReceived: m.TransactionsReceived, ChangesReceived: m.ChangesReceived, ChangesWritten: m.ChangesWritten}
}

// copyCounts are the counters of p.metrics the copies add to.
func (p *Pipeline) copyCounts() snapshot.Counts {
	m := p.metrics
	return snapshot.Counts{Emitter: p.emitterCounts(), Duration: m.TableCopyDuration, Rows: m.TableCopyRows, RowsResumed: m.TableCopyRowsResumed}
}
