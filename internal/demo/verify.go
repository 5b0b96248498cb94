package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// replica replays change records into the set of row ids each topic
// describes, the way a consumer keeping a copy of a table would. Records
// that do not fit the copy (an insert of an id it has, an update or delete
// of one it lacks) mean a record was lost, repeated or reordered.
type replica struct {
	ids   map[string]map[int64]bool // topic → ids of live rows
	odd   int
	first string // the first odd record, described
}

func newReplica() *replica { return &replica{ids: map[string]map[int64]bool{}} }

// apply replays one record; records must come in topic order.
func (r *replica) apply(rec record) {
	if rec.Op == opTombstone {
		return
	}
	var key struct {
		ID *int64 `json:"id"`
	}
	if json.Unmarshal(rec.Key, &key) != nil || key.ID == nil {
		r.oddOne(rec, "a key without an id")
		return
	}
	ids := r.ids[rec.Topic]
	if ids == nil {
		ids = map[int64]bool{}
		r.ids[rec.Topic] = ids
	}
	id, had := *key.ID, ids[*key.ID]
	switch rec.Op {
	case "c", "r": // an insert, or a row of the snapshot
		if had {
			r.oddOne(rec, "an insert of a row the topic already has")
		}
		ids[id] = true
	case "u":
		if !had {
			r.oddOne(rec, "an update of a row the topic does not have")
		}
		ids[id] = true
	case "d":
		if !had {
			r.oddOne(rec, "a delete of a row the topic does not have")
		}
		delete(ids, id)
	default:
		r.oddOne(rec, "an unexpected op")
	}
}

func (r *replica) oddOne(rec record, what string) {
	if r.odd == 0 {
		r.first = fmt.Sprintf("%s on %s, key %s, op %q", what, rec.Topic, rec.Key, rec.Op)
	}
	r.odd++
}

// compare checks the replayed ids of each demo table against the table in
// Postgres. It returns a one-line description of the match, or an error
// describing the difference.
func (r *replica) compare(ctx context.Context, conn *pgx.Conn) (string, error) {
	var parts, problems []string
	for i, table := range demoTables {
		topic := demoTopics()[i]
		rows, err := conn.Query(ctx, "SELECT id FROM "+table)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", table, err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return "", fmt.Errorf("read %s: %w", table, err)
		}
		replayed := r.ids[topic]
		missing := 0
		for _, id := range ids {
			if !replayed[id] {
				missing++
			}
		}
		extra := len(replayed) - (len(ids) - missing)
		if missing > 0 || extra > 0 {
			problems = append(problems, fmt.Sprintf("%s: %d rows in Postgres are missing from %s and %d rows there are gone from Postgres",
				table, missing, topic, extra))
		}
		parts = append(parts, fmt.Sprintf("%d %s", len(ids), strings.TrimPrefix(table, "public.")))
	}
	if r.odd > 0 {
		problems = append(problems, fmt.Sprintf("%d records do not fit the replay, the first: %s", r.odd, r.first))
	}
	if len(problems) > 0 {
		return "", fmt.Errorf("replaying the topics does not give the tables: %s", strings.Join(problems, "; "))
	}
	return fmt.Sprintf("replaying the topics gives exactly the rows in Postgres (%s), every change applied once, in order",
		strings.Join(parts, ", ")), nil
}
