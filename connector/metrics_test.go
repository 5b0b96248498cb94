package connector_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/internal/eventually"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestMetricsEndpointsExportThePublicNames(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE m (id int PRIMARY KEY, v text)`)
	cfg := e.config("metrics", "public.m")
	addr := freeAddr(t)
	cfg.Metrics.Listen = addr
	r := start(t, cfg)
	if code, _ := get(t, "http://"+addr+"/readyz"); code != 200 {
		t.Fatalf("/readyz while streaming: %d", code)
	}
	if code, _ := get(t, "http://"+addr+"/healthz"); code != 200 {
		t.Fatalf("/healthz: %d", code)
	}
	e.exec(`INSERT INTO m VALUES (1, 'a'), (2, 'b')`)
	consume(t, e.kafka, 2, "metrics.public.m")
	var body string
	eventually.Succeeds(t, 10*time.Second, 100*time.Millisecond, func() error {
		_, body = get(t, "http://"+addr+"/metrics")
		if strings.Contains(body, "mooncdc_changes_written_total 2") && strings.Contains(body, "mooncdc_transactions_durable_total 1") {
			return nil
		}
		return fmt.Errorf("counters did not reach the writes:\n%s", grepMooncdc(body))
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
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + addr + "/readyz"); err == nil {
		t.Error("metrics server still up after Run returned")
	}
}

func grepMooncdc(body string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "mooncdc_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
