package connector

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// This file is what package connector/group (standby instances and worker
// groups) needs of a Pipeline, and nothing more: group runs a fresh
// Pipeline per activation of a seat, shares one set of metrics across
// them, serves one HTTP endpoint for them, and asks each for its name,
// readiness and bytes in flight. Each is a thin view of what the pipeline
// has anyway; group reaches into nothing else, and nothing in connector
// imports group.

// Option changes how New builds a Pipeline.
type Option func(*Pipeline)

// WithMetrics makes the pipeline count in m rather than in metrics of its
// own: a seat's activations share one set, so counters go on across
// takeovers and one endpoint serves them. m is set before New returns, so
// the pipeline never counts anywhere else, even briefly.
func WithMetrics(m *Metrics) Option { return func(p *Pipeline) { p.metrics = m } }

// Seated marks the pipeline as a seat's (standby instances, a worker
// group): another instance may take over from it while it is paused, so
// its writes are fenced by the broker in both delivery modes (sink.go).
func Seated() Option { return func(p *Pipeline) { p.seated = true } }

// NewMetrics is one pipeline's metrics. With reg nil they are a lone
// pipeline's, in a registry of their own with the Go and process
// collectors (Metrics.Registry); otherwise they are registered in reg (a
// worker running several pipelines wraps it to add the pipeline label) and
// Registry is nil. inflight is read at each scrape (Pipeline.Inflight of
// whichever pipeline is active). Call it once per registry: registering
// the same metrics twice panics.
func NewMetrics(reg prometheus.Registerer, inflight func() float64) *Metrics {
	if reg == nil {
		return newMetrics(inflight)
	}
	return newMetricsIn(reg, inflight)
}

// Name is the pipeline's name (the config's name).
func (p *Pipeline) Name() string { return p.cfg.Name }

// Inflight is the bytes of records handed to Kafka and not yet
// acknowledged (0 before Run has built the tracker). Safe from any
// goroutine.
func (p *Pipeline) Inflight() int64 {
	if t := p.tracker.Load(); t != nil {
		return t.Inflight()
	}
	return 0
}

// Reserved is the part of Inflight reserved for the rows incremental
// snapshots' windows hold (delivery.Tracker.Reserve). Safe from any
// goroutine.
func (p *Pipeline) Reserved() int64 {
	if t := p.tracker.Load(); t != nil {
		return t.Reserved()
	}
	return 0
}

// Readiness is /readyz's answer for the pipeline: true with "streaming"
// while the main worker streams and its links are alive, else false with
// the reason. Safe from any goroutine.
func (p *Pipeline) Readiness() (ok bool, word string) { return p.readiness() }

// ServeHTTP serves /metrics (from g), /healthz, /readyz (ready's answer)
// and /status (status) on addr in a goroutine of its own until the
// returned server is closed; it returns once it listens. An address it
// cannot listen on is a *config.ConfigError naming metrics.listen.
func ServeHTTP(addr string, g prometheus.Gatherer, ready func() (bool, string), status http.HandlerFunc, log *zap.Logger) (*http.Server, error) {
	return serveHTTP(addr, g, ready, status, log)
}
