package main

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/offsets"
)

func TestStatusShowsAnIncrementalSnapshotsProgress(t *testing.T) {
	start := time.UnixMilli(1_764_670_000_000)
	now := start.Add(10 * time.Second)
	for _, tc := range []struct {
		name string
		raw  offsets.RawJSON
		want string
	}{
		{"requested, not planned", offsets.IncrementalRequested, "incremental snapshot requested"},
		{"a quarter done in 10 s", `{"pages":400,"done":[[0,50],[100,150]],"rows":5000,"chunk_pages":50,"started_ms":1764670000000}`,
			"incremental snapshot: 100/400 pages (25%), 5000 rows, 500 rows/s, ETA 30s"},
		{"planned, nothing done", `{"pages":400,"rows":0,"chunk_pages":50,"started_ms":1764670000000}`,
			"incremental snapshot: 0/400 pages (0%), 0 rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := incrementalProgress(tc.raw, now)
			if r == nil {
				t.Fatal("no progress")
			}
			if got := incrementalText(r); got != tc.want {
				t.Fatalf("%q, want %q", got, tc.want)
			}
		})
	}
	if r := incrementalProgress("", now); r != nil {
		t.Fatalf("progress %+v for a table without an incremental snapshot", r)
	}
	if r := incrementalProgress(`{"pages":`, now); r != nil {
		t.Fatalf("progress %+v from a record that does not parse", r)
	}
}

// A running incremental snapshot's open windows (the running process's
// /status) are shown beside its progress: the chunk's pages, the age, and
// what the window holds or waits for; the JSON report has them by table.
func TestStatusShowsAnIncrementalSnapshotsOpenWindows(t *testing.T) {
	progress := "incremental snapshot: 100/400 pages (25%), 5000 rows, 500 rows/s, ETA 30s"
	for _, tc := range []struct {
		name string
		ws   []connector.IncrementalWindow
		want string
	}{
		{"none", nil, progress},
		{"read, waiting for the stream", []connector.IncrementalWindow{{ID: 12, FirstPage: 4096, EndPage: 5120, AgeSeconds: 1.23,
			Rows: 3400, Bytes: 2202009, Read: true, WaitingForStream: true, High: "0/1A2B3C4"}},
			progress + "; window #12 pages 4096-5119, 1.2 s, 3,400 rows / 2.1 MiB, waiting for the stream to pass 0/1A2B3C4"},
		{"being read, and read closing", []connector.IncrementalWindow{{ID: 7, FirstPage: 0, EndPage: 8, AgeSeconds: 0.04},
			{ID: 8, FirstPage: 8, EndPage: 16, AgeSeconds: 0.01, Rows: 1234567, Bytes: 512, Read: true}},
			progress + "; window #7 pages 0-7, 0.0 s, reading its chunk; window #8 pages 8-15, 0.0 s, 1,234,567 rows / 512 B"},
		{"void past its life", []connector.IncrementalWindow{{ID: 3, FirstPage: 16, EndPage: 24, AgeSeconds: 301, Void: "open 5m1s, past a window's longest life (5m0s): its chunk's read has not ended"}},
			progress + "; window #3 pages 16-23, 5m1s, void (its chunk is read again): open 5m1s, past a window's longest life (5m0s): its chunk's read has not ended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.DefaultConfig()
			cfg.Name = "shop"
			cfg.ApplyDefaults()
			now := time.UnixMilli(1_764_670_010_000)
			raw := offsets.RawJSON(`{"pages":400,"done":[[0,50],[100,150]],"rows":5000,"chunk_pages":50,"started_ms":1764670000000}`)
			live := &connector.LiveStatus{Name: "shop", Streaming: true, Time: now,
				Tables:  map[string]offsets.Table{"public.orders": {Phase: offsets.PhaseReady, Incremental: raw}},
				Windows: map[string][]connector.IncrementalWindow{"public.orders": tc.ws}}
			r := buildStatusReport(cfg, statusInputs{live: live, now: now})
			if len(r.Tables) != 1 {
				t.Fatalf("tables %+v", r.Tables)
			}
			if got := tableProgress(r.Tables[0], r.Running); got != tc.want {
				t.Fatalf("progress\n%q, want\n%q", got, tc.want)
			}
			js, err := json.Marshal(r.Tables[0])
			if err != nil {
				t.Fatal(err)
			}
			var back struct {
				Windows []connector.IncrementalWindow `json:"incremental_windows"`
			}
			if err := json.Unmarshal(js, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Windows, tc.ws) {
				t.Fatalf("JSON windows %+v, want %+v", back.Windows, tc.ws)
			}
		})
	}
}

// TestStatusShowsATableThatLeftThePipeline: a table whose record has
// left_ms (no longer published or selected) says so, with when, in the
// text and in the JSON (left_at), whatever its phase; one that never left
// says its phase's progress.
func TestStatusShowsATableThatLeftThePipeline(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Name = "shop"
	cfg.ApplyDefaults()
	now := time.UnixMilli(1_764_670_010_000)
	live := &connector.LiveStatus{Name: "shop", Streaming: true, Time: now, Tables: map[string]offsets.Table{
		"public.gone":   {Phase: offsets.PhaseReady, LSN: 99, LeftMs: 1_764_670_000_000},
		"public.orders": {Phase: offsets.PhaseReady, LSN: 99}}}
	r := buildStatusReport(cfg, statusInputs{live: live, now: now})
	if len(r.Tables) != 2 {
		t.Fatalf("tables %+v", r.Tables)
	}
	want := "left the pipeline at 2025-12-02T10:06:40Z: no longer published or selected; its rows are read again when it comes back"
	if got := tableProgress(r.Tables[0], r.Running); got != want {
		t.Fatalf("%s: %q, want %q", r.Tables[0].Table, got, want)
	}
	if r.Tables[0].LeftAt == nil || r.Tables[1].LeftAt != nil {
		t.Fatalf("left_at: %v and %v, want the first only", r.Tables[0].LeftAt, r.Tables[1].LeftAt)
	}
	if got := tableProgress(r.Tables[1], r.Running); got != "copied" {
		t.Fatalf("%s: %q, want copied", r.Tables[1].Table, got)
	}
}
