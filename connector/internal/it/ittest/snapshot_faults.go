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
// once; only snapshot rows may repeat. An upsert is known by its n (each
// write has its own), a delete by its source.lsn (a key may be deleted
// more than once, each at its own LSN). A failure says where both copies
// are and who wrote them (RecEvent.Where).
func CheckNoChangeRepeats(t *testing.T, table string, v TableView) {
	t.Helper()
	for key, recs := range v.Records {
		seen := map[string]RecEvent{}
		for _, r := range recs {
			var id string
			switch r.Op {
			case "r", "x":
				continue
			case "d":
				id = fmt.Sprintf("d@%d", r.LSN)
			default:
				id = fmt.Sprint(r.N)
			}
			if first, ok := seen[id]; ok {
				t.Fatalf("%s key %d: change %s emitted twice: first %s, again %s (records %v)", table, key, id, first.Where(), r.Where(), recs)
			}
			seen[id] = r
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
