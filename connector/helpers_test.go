package connector_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// The helpers standby_test.go, standby_slot_test.go and workers_test.go
// call, under the names they had before the integration tests' helpers
// moved to connector/internal/it/ittest: thin wrappers, nothing more.

// env is ittest.Env under its old field names. A test may also make one
// of a cluster of its own: &env{t: t, pg: pg, kafka: addr}.
type env struct {
	t     *testing.T
	pg    cluster // *ittest.Cluster from newEnv, or *pgtest.Cluster
	kafka string
	ie    *ittest.Env
}

// cluster is what the tests call on env.pg.
type cluster interface {
	URL(database string) string
	Connect(ctx context.Context, database string) (*pgx.Conn, error)
}

// it is e as an ittest.Env.
func (e *env) it() *ittest.Env {
	if e.ie == nil {
		e.ie = ittest.EnvOn(e.t, e.pg.(*pgtest.Cluster), e.kafka)
	}
	return e.ie
}

type event = ittest.Event

func newEnv(t *testing.T) *env {
	t.Helper()
	e := ittest.NewEnv(t)
	return &env{t: t, pg: e.PG, kafka: e.Kafka, ie: e}
}

func (e *env) config(name string, tables ...string) config.Config {
	return e.it().Config(name, tables...)
}

func (e *env) exec(sql string, args ...any) {
	e.t.Helper()
	e.it().Exec(sql, args...)
}

func (e *env) scan(query string, dest ...any) {
	e.t.Helper()
	e.it().Scan(query, dest...)
}

func consume(t *testing.T, addr string, n int, topics ...string) []event {
	t.Helper()
	return ittest.Consume(t, addr, n, topics...)
}

func consumeDistinct(t *testing.T, addr, topic string, total int) []event {
	t.Helper()
	return ittest.ConsumeDistinct(t, addr, topic, total)
}

func writeLoad(t *testing.T, e *env, table string, txs, perTx, keys int, startAt int) {
	t.Helper()
	ittest.WriteLoad(t, e.it(), table, txs, perTx, keys, startAt)
}

func checkChanges(t *testing.T, evs []event, total int, allowDups bool) {
	t.Helper()
	ittest.CheckChanges(t, evs, total, allowDups)
}

func freeAddr(t *testing.T) string { return ittest.FreeAddr(t) }

func get(t *testing.T, url string) (int, string) { return ittest.Get(t, url) }

func grepMooncdc(body string) string { return ittest.GrepMooncdc(body) }
