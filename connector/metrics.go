package connector

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the pipeline's Prometheus metrics. Names are a public
// contract (dashboards, alerts): extend, don't rename.
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
	m := &Metrics{
		TransactionsReceived: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mooncdc_transactions_received_total", Help: "Postgres transactions decoded from the replication stream."}),
		ChangesReceived: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mooncdc_changes_received_total", Help: "Changes (rows, truncates, messages) decoded from the replication stream."}),
		ChangesWritten: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mooncdc_changes_written_total", Help: "Change records acknowledged by Kafka (tombstones not counted)."}),
		TransactionsDurable: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mooncdc_transactions_durable_total", Help: "Transactions whose records are all acknowledged by Kafka."}),
		PayloadBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mooncdc_replication_payload_bytes_total", Help: "pgoutput payload bytes received."}),
		DurableLSN: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mooncdc_durable_lsn", Help: "The durable LSN: end of the newest transaction fully acknowledged by Kafka (confirmed to Postgres)."}),
		LagBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mooncdc_replication_lag_bytes", Help: "Server WAL end minus the durable LSN."}),
		InflightBytes: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mooncdc_inflight_bytes", Help: "Bytes of records handed to the producer and not yet acknowledged."}, inflight),
		WorkerErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mooncdc_worker_errors_total", Help: "Errors by worker type (main, table_sync) and error type (transient, permanent, critical)."},
			[]string{"worker_type", "error_type"}),
		TableCopyRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mooncdc_table_copy_rows_total", Help: "Rows copied by table snapshots."}, []string{"table"}),
		TableCopyRowsResumed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mooncdc_table_copy_rows_resumed_total", Help: "Rows a resumed table copy did not copy again: its chunks were in Kafka from an earlier attempt."},
			[]string{"table"}),
		TableCopyDuration: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mooncdc_table_copy_duration_seconds", Help: "Duration of the table's last completed copy (COPY and stale-key tombstones, acknowledged)."}, []string{"table"}),
		KafkaTransactions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mooncdc_kafka_transactions_total", Help: "Kafka transactions ended in exactly-once mode, or in at-least-once mode with ha.enabled (the fence), by outcome (commit, abort)."}, []string{"outcome"}),
		Streaming: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mooncdc_streaming", Help: "1 while the main worker is streaming from Postgres."}),
		Active: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mooncdc_active", Help: "1 while this instance runs the pipeline; 0 while it is a standby (ha.enabled) or stopped."}),
		SlotLossResnapshots: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mooncdc_slot_loss_resnapshots_total", Help: "Times a lost or missing slot was replaced and every table copied again (on_slot_loss: resnapshot)."}),
	}
	reg.MustRegister(m.TransactionsReceived, m.ChangesReceived, m.ChangesWritten, m.TransactionsDurable,
		m.PayloadBytes, m.DurableLSN, m.LagBytes, m.InflightBytes, m.WorkerErrors, m.Streaming, m.Active, m.TableCopyRows, m.TableCopyDuration, m.KafkaTransactions,
		m.SlotLossResnapshots, m.TableCopyRowsResumed)
	m.WorkerErrors.WithLabelValues("main", "transient")
	return m
}
