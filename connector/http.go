package connector

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
)

// serveHTTP serves /metrics, /healthz (the process is up), /readyz (200
// when ready says so: while the main worker streams, or for a standby
// while it waits in its group; the body is ready's word) and /status (the
// live status, JSON) on addr until the server is closed.
func serveHTTP(addr string, g prometheus.Gatherer, ready func() (bool, string), status http.HandlerFunc, log *zap.Logger) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &config.ConfigError{Err: fmt.Errorf("metrics.listen: cannot listen on %q: %w (choose a free address, or set it empty to disable)", addr, err)}
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("/status", status)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		ok, word := ready()
		if ok {
			_, _ = w.Write([]byte(word + "\n"))
			return
		}
		http.Error(w, word, http.StatusServiceUnavailable)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics server stopped", zap.Error(err))
		}
	}()
	log.Info("serving metrics", zap.String("listen", ln.Addr().String()))
	return srv, nil
}

func (p *Pipeline) serveMetrics(addr string) (*http.Server, error) {
	return serveHTTP(addr, p.metrics.Registry, p.readiness, p.serveStatus, p.log)
}

// readiness is /readyz: 200 "streaming" while the main worker streams and
// its links are alive; 503 with the reason (linkwatch.go) while Postgres
// has been silent or Kafka stalled for longer than the timeout.
func (p *Pipeline) readiness() (bool, string) {
	if !p.Ready() {
		return false, "not streaming"
	}
	if why := p.linkWatch.notReady(time.Now(), p.cfg.LinkTimeout()); why != "" {
		return false, why
	}
	return true, "streaming"
}
