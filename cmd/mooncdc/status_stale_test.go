package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/offsets"
)

// TestStatusShowsStaleKeysLeftUntombstoned: a table whose last re-copy
// left stale keys untombstoned (a transform chain it could not follow)
// says so, with why, in the JSON report and beside its last error in the
// text; the other tables do not.
func TestStatusShowsStaleKeysLeftUntombstoned(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Name = "shop"
	cfg.ApplyDefaults()
	why := `transform "toEU" (io.debezium.transforms.ContentBasedRouter) names the topic from the record's content`
	live := &connector.LiveStatus{Name: "shop", Streaming: true, Time: time.Now(),
		Tables:    map[string]offsets.Table{"public.orders": {Phase: "ready"}, "public.other": {Phase: "ready"}},
		StaleKeys: map[string]string{"public.orders": why}}
	r := buildStatusReport(cfg, statusInputs{live: live, now: time.Now()})
	got := map[string]string{}
	for _, tr := range r.Tables {
		got[tr.Table] = tr.StaleKeys
	}
	if got["public.orders"] != why || got["public.other"] != "" {
		t.Fatalf("stale_keys_not_tombstoned by table %v, want only public.orders with %q", got, why)
	}
	var b bytes.Buffer
	writeStatus(&b, r)
	if !strings.Contains(b.String(), "public.orders") {
		t.Fatalf("no line for public.orders in\n%s", b.String())
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "public.orders") && !strings.Contains(line, "stale keys not tombstoned: "+why) {
			t.Errorf("the text line of public.orders %q does not say why its stale keys are not tombstoned", line)
		}
		if strings.HasPrefix(line, "public.other") && strings.Contains(line, "stale keys") {
			t.Errorf("the text line of public.other %q speaks of stale keys", line)
		}
	}
}
