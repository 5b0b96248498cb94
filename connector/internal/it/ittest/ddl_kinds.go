package ittest

import (
	"context"
	"encoding/json"
	"testing"
)

// ColumnsOf is table's columns in order, "name typname" each.
func (e *Env) ColumnsOf(table string) []string {
	e.T.Helper()
	conn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		e.T.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT a.attname || ' ' || t.typname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		WHERE a.attrelid = ('public.' || $1)::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, table)
	if err != nil {
		e.T.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			e.T.Fatal(err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		e.T.Fatal(err)
	}
	return out
}

// RowsJSON is table's rows in Postgres, by id, as row_to_json.
func (e *Env) RowsJSON(table string) map[string]map[string]any {
	e.T.Helper()
	conn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		e.T.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT id::text, row_to_json(t)::text FROM `+table+` t`)
	if err != nil {
		e.T.Fatal(err)
	}
	out := map[string]map[string]any{}
	for rows.Next() {
		var id, js string
		if err := rows.Scan(&id, &js); err != nil {
			e.T.Fatal(err)
		}
		out[id] = JSONObject(e.T, []byte(js))
	}
	if err := rows.Err(); err != nil {
		e.T.Fatal(err)
	}
	return out
}

// JSONObject decodes the JSON object b.
func JSONObject(t *testing.T, b []byte) map[string]any {
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}
