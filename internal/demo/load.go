package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
)

// loadStats counts what the load wrote.
type loadStats struct {
	Transactions int
	// Ops counts changes by table ("public.orders") and op (c, u, d).
	Ops        map[string]map[string]int
	Start, End time.Time // first BEGIN, last COMMIT
}

// Changes is the number of rows inserted, updated and deleted.
func (s loadStats) Changes() int {
	n := 0
	for _, ops := range s.Ops {
		for _, k := range ops {
			n += k
		}
	}
	return n
}

// ExpectedRecords is the number of Kafka records those changes make: one
// per change, plus a tombstone after each delete.
func (s loadStats) ExpectedRecords() int {
	n := s.Changes()
	for _, ops := range s.Ops {
		n += ops["d"]
	}
	return n
}

// loader writes random shop activity and remembers which rows exist, so
// that every update and delete hits a row.
type loader struct {
	rng                       *rand.Rand
	customers, orders         []int64 // ids of live rows
	nextCustomer, nextOrder   int64
	stats                     loadStats
	pendingOps                []change // of the open transaction
	minLive, maxOpsPerTxn     int
	customerShare, insertRate float64
}

type change struct{ table, op string }

var (
	firstNames = []string{"Ada", "Grace", "Linus", "Edsger", "Barbara", "Ken", "Margaret", "Dennis", "Frances", "Niklaus"}
	lastNames  = []string{"Lovelace", "Hopper", "Torvalds", "Dijkstra", "Liskov", "Thompson", "Hamilton", "Ritchie", "Allen", "Wirth"}
	statuses   = []string{"new", "paid", "packed", "shipped", "delivered"}
	products   = []string{"moon lamp", "star map", "telescope", "rocket kit", "crater mug"}
)

// runLoad writes for d (or until ctx ends) in transactions of 1 to 4 row
// changes, over both demo tables, on one connection.
func runLoad(ctx context.Context, conn *pgx.Conn, d time.Duration) (loadStats, error) {
	l := &loader{
		rng:           rand.New(rand.NewPCG(1, 2)),
		stats:         loadStats{Ops: map[string]map[string]int{}},
		minLive:       10,
		maxOpsPerTxn:  4,
		customerShare: 0.4,
		insertRate:    0.5,
	}
	l.stats.Start = time.Now()
	deadline := l.stats.Start.Add(d)
	for time.Now().Before(deadline) {
		if err := l.transaction(ctx, conn); err != nil {
			return l.stats, err
		}
	}
	return l.stats, nil
}

// transaction writes one transaction and counts it once committed.
func (l *loader) transaction(ctx context.Context, conn *pgx.Conn) error {
	l.pendingOps = l.pendingOps[:0]
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for range 1 + l.rng.IntN(l.maxOpsPerTxn) {
			l.queueChange(b)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("write load: %w", err)
	}
	l.stats.End = time.Now()
	l.stats.Transactions++
	for _, c := range l.pendingOps {
		if l.stats.Ops[c.table] == nil {
			l.stats.Ops[c.table] = map[string]int{}
		}
		l.stats.Ops[c.table][c.op]++
	}
	return nil
}

// queueChange adds one insert, update or delete to b: mostly inserts while a
// table is small, then a mix.
func (l *loader) queueChange(b *pgx.Batch) {
	customers := l.rng.Float64() < l.customerShare || len(l.customers) == 0
	live := &l.orders
	table := "public.orders"
	if customers {
		live, table = &l.customers, "public.customers"
	}
	op := "c"
	if len(*live) >= l.minLive {
		switch r := l.rng.Float64(); {
		case r < l.insertRate:
		case r < l.insertRate+(1-l.insertRate)*0.6:
			op = "u"
		default:
			op = "d"
		}
	}
	l.pendingOps = append(l.pendingOps, change{table, op})

	switch op {
	case "c":
		if customers {
			l.nextCustomer++
			id := l.nextCustomer
			*live = append(*live, id)
			first, last := pick(l.rng, firstNames), pick(l.rng, lastNames)
			b.Queue(`INSERT INTO public.customers (id, name, email, vip, attrs) VALUES ($1, $2, $3, $4, $5)`,
				id, first+" "+last, fmt.Sprintf("%s.%s%d@example.com", first, last, id), l.rng.IntN(5) == 0,
				map[string]any{"newsletter": l.rng.IntN(2) == 0, "visits": l.rng.IntN(50)})
		} else {
			l.nextOrder++
			id := l.nextOrder
			*live = append(*live, id)
			b.Queue(`INSERT INTO public.orders (id, customer_id, amount, status, items) VALUES ($1, $2, $3, 'new', $4)`,
				id, pick(l.rng, l.customers), money(l.rng),
				[]map[string]any{{"product": pick(l.rng, products), "qty": 1 + l.rng.IntN(3)}})
		}
	case "u":
		id := pick(l.rng, *live)
		if customers {
			b.Queue(`UPDATE public.customers SET vip = NOT vip, attrs = jsonb_set(attrs, '{visits}', to_jsonb($2::int)) WHERE id = $1`,
				id, l.rng.IntN(100))
		} else {
			b.Queue(`UPDATE public.orders SET status = $2, paid = $3 WHERE id = $1`,
				id, pick(l.rng, statuses), l.rng.IntN(3) > 0)
		}
	case "d":
		i := l.rng.IntN(len(*live))
		id := (*live)[i]
		(*live)[i] = (*live)[len(*live)-1]
		*live = (*live)[:len(*live)-1]
		b.Queue(`DELETE FROM `+table+` WHERE id = $1`, id)
	}
}

func pick[T any](rng *rand.Rand, s []T) T { return s[rng.IntN(len(s))] }

// money returns an amount between 1.00 and 999.99 as numeric text.
func money(rng *rand.Rand) string {
	return fmt.Sprintf("%d.%02d", 1+rng.IntN(999), rng.IntN(100))
}
