package snapshot

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
)

// A pipeline's Tuning reaches its own copier and no other: two
// snapshotters made side by side in one process (as two tests' pipelines
// running in parallel are) each read their own chunk size, read delay,
// read server and checkpoint interval, and an untuned one has
// production's (chunks from the budget, postgres.url's server, a
// checkpoint every DefaultCheckpointEvery). With the settings package
// variables, as they were, the last set would win for all.
func TestTuningIsEachPipelinesOwn(t *testing.T) {
	primary := &pgconn.Config{Host: "primary"}
	standby := &pgconn.Config{Host: "standby"}
	newCopier := func(tu Tuning) *copier {
		return New(Config{Config: &config.Config{}, PgConfig: primary, Tuning: tu, Log: zap.NewNop()}).c
	}
	a := newCopier(Tuning{IncrementalChunkPages: 1, IncrementalReadDelay: 25 * time.Millisecond, CheckpointEvery: -1})
	b := newCopier(Tuning{IncrementalChunkPages: 4, IncrementalRead: standby, CheckpointEvery: time.Minute})
	prod := newCopier(Tuning{})

	const budget, rowsPerPage, readers = 32 << 20, 100, 4
	tests := []struct {
		name       string
		c          *copier
		pages      uint32
		delay      time.Duration
		read       *pgconn.Config
		checkpoint time.Duration // copierConfig's: 0 at every chunk's end
	}{
		{"a", a, 1, 25 * time.Millisecond, primary, 0},
		{"b", b, 4, 0, standby, time.Minute},
		{"production", prod, chunkPagesFor(budget, rowsPerPage, readers), 0, primary, DefaultCheckpointEvery},
	}
	for _, tt := range tests {
		if got := tt.c.chunkPages(budget, rowsPerPage, readers); got != tt.pages {
			t.Errorf("%s: chunk pages %d, want %d", tt.name, got, tt.pages)
		}
		if got := tt.c.cfg.tuning.IncrementalReadDelay; got != tt.delay {
			t.Errorf("%s: read delay %v, want %v", tt.name, got, tt.delay)
		}
		if got := tt.c.readConfig(); got != tt.read {
			t.Errorf("%s: reads on %s, want %s", tt.name, got.Host, tt.read.Host)
		}
		if got := tt.c.cfg.checkpointEvery; got != tt.checkpoint {
			t.Errorf("%s: checkpoint every %v, want %v", tt.name, got, tt.checkpoint)
		}
	}
	if prod.cfg.tuning != (Tuning{}) {
		t.Errorf("the untuned pipeline's copier holds %+v", prod.cfg.tuning)
	}
}
