package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// This file reads mooncdc's HTTP endpoints: /readyz and /metrics.

// get returns nil unless GET path answers 200.
func get(hc *http.Client, addr, path string) []byte {
	resp, err := hc.Get("http://" + addr + path)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	return body
}

// scrape reads the mooncdc_* samples from /metrics, keyed by the sample's
// name with its labels as exposed, e.g.
// mooncdc_table_copy_rows_total{table="public.x"}.
func scrape(hc *http.Client, addr string) (map[string]float64, error) {
	body := get(hc, addr, "/metrics")
	if body == nil {
		return nil, fmt.Errorf("GET http://%s/metrics failed", addr)
	}
	m := make(map[string]float64)
	for line := range strings.SplitSeq(string(body), "\n") {
		if !strings.HasPrefix(line, "mooncdc_") {
			continue
		}
		// Label values may hold spaces: the value follows the last one.
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		name, val := line[:i], line[i+1:]
		if v, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
			m[name] = v
		}
	}
	return m, nil
}
