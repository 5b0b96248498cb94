package pgsource

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Each query gets a deadline; a sooner one of the caller's stays.
func TestQueryDeadlineBoundsEveryQuery(t *testing.T) {
	q := queryDeadline{d: time.Minute}
	ctx := q.TraceQueryStart(context.Background(), nil, pgxStart)
	dl, ok := ctx.Deadline()
	if !ok || time.Until(dl) > time.Minute || time.Until(dl) < 50*time.Second {
		t.Fatalf("deadline %v, %v; want about a minute from now", dl, ok)
	}
	q.TraceQueryEnd(ctx, nil, pgxEnd)
	if ctx.Err() == nil {
		t.Error("TraceQueryEnd did not release the query's context")
	}
	short, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if got := q.TraceQueryStart(short, nil, pgxStart); got != short {
		t.Error("a caller's sooner deadline was replaced")
	}
}

var (
	pgxStart = pgx.TraceQueryStartData{SQL: "SELECT 1"}
	pgxEnd   = pgx.TraceQueryEndData{}
)
