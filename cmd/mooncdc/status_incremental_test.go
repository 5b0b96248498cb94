package main

import (
	"testing"
	"time"

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
