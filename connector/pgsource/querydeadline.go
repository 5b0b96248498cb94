package pgsource

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mooncdc/mooncdc/connector/config"
)

// QueryTimeout bounds every query on mooncdc's SQL connections (catalog
// and status queries, the heartbeat, slot checks, a copy's snapshot
// import; not the COPY itself, which copyWatch guards): a live server
// answers them well within it, and one that does not is taken for gone
// (pgconn cancels the query and closes the connection). ctx's own
// deadline wins when it is sooner.
const QueryTimeout = config.DefaultReplicationTimeout

// queryDeadline is the pgx tracer that gives each Query, QueryRow and
// Exec a deadline (pgx runs the query on the context TraceQueryStart
// returns, and calls TraceQueryEnd when it is over, rows closed).
type queryDeadline struct{ d time.Duration }

type queryCancelKey struct{}

func (q queryDeadline) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= q.d {
		return ctx
	}
	ctx, cancel := context.WithTimeout(ctx, q.d)
	return context.WithValue(ctx, queryCancelKey{}, cancel)
}

func (q queryDeadline) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if cancel, ok := ctx.Value(queryCancelKey{}).(context.CancelFunc); ok {
		cancel()
	}
}
