package ittest

import (
	"fmt"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
)

// CheckNoChangeRepeats: change records (c, u, d) carry each write at most
// once; only snapshot rows may repeat.
func CheckNoChangeRepeats(t *testing.T, table string, v TableView) {
	t.Helper()
	for key, recs := range v.Records {
		seen := map[string]bool{}
		for _, r := range recs {
			if r.Op == "r" || r.Op == "d" {
				continue
			}
			id := fmt.Sprint(r.N)
			if seen[id] {
				t.Fatalf("%s key %d: change n=%d emitted twice (records %v)", table, key, r.N, recs)
			}
			seen[id] = true
		}
	}
}

// NewPipeline is connector.New with the test's logger and tuning (Tune);
// an error fails the test.
func NewPipeline(t *testing.T, cfg config.Config) *connector.Pipeline {
	t.Helper()
	p, err := connector.New(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)), Options(t)...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
