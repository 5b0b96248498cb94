package pipeline

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/internal/eventually"
)

func TestMetricsEndpointsExportThePublicNames(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE m (id int PRIMARY KEY, v text)`)
	cfg := e.Config("metrics", "public.m")
	addr := ittest.FreeAddr(t)
	cfg.Metrics.Listen = addr
	r := ittest.Start(t, cfg)
	if code, _ := ittest.Get(t, "http://"+addr+"/readyz"); code != 200 {
		t.Fatalf("/readyz while streaming: %d", code)
	}
	if code, _ := ittest.Get(t, "http://"+addr+"/healthz"); code != 200 {
		t.Fatalf("/healthz: %d", code)
	}
	e.Exec(`INSERT INTO m VALUES (1, 'a'), (2, 'b')`)
	ittest.Consume(t, e.Kafka, 2, "metrics.public.m")
	var body string
	eventually.Succeeds(t, 10*time.Second, 100*time.Millisecond, func() error {
		_, body = ittest.Get(t, "http://"+addr+"/metrics")
		if strings.Contains(body, "mooncdc_changes_written_total 2") && strings.Contains(body, "mooncdc_transactions_durable_total 1") {
			return nil
		}
		return fmt.Errorf("counters did not reach the writes:\n%s", ittest.GrepMooncdc(body))
	})
	for _, name := range []string{
		"mooncdc_transactions_received_total", "mooncdc_changes_received_total", "mooncdc_changes_written_total",
		"mooncdc_transactions_durable_total", "mooncdc_replication_payload_bytes_total", "mooncdc_durable_lsn",
		"mooncdc_replication_lag_bytes", "mooncdc_inflight_bytes", `mooncdc_worker_errors_total{error_type="transient",worker_type="main"}`, "mooncdc_table_copy_rows_total", "mooncdc_table_copy_duration_seconds",
	} {
		if !strings.Contains(body, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if strings.Contains(body, "mooncdc_durable_lsn 0\n") {
		t.Error("durable LSN gauge is 0 while streaming")
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + addr + "/readyz"); err == nil {
		t.Error("metrics server still up after Run returned")
	}
}
