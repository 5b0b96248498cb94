package pgtest

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Connect opens a new pgx connection to database ("" means postgres) as the
// superuser. The caller closes it. Safe for concurrent use.
func (c *Cluster) Connect(ctx context.Context, database string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, c.URL(database))
	if err != nil {
		return nil, fmt.Errorf("pgtest: connect to %s: %w", c.URL(database), err)
	}
	return conn, nil
}

// Exec runs sql in database ("" means postgres) on a connection of its own,
// and blocks until it is done. Without args, sql may hold several
// statements (simple protocol); with args it must be one statement with
// placeholders $1, $2, .... Safe for concurrent use.
func (c *Cluster) Exec(ctx context.Context, database, sql string, args ...any) error {
	conn, err := c.Connect(ctx, database)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("pgtest: exec %q in database %q: %w", abbrev(sql), database, err)
	}
	return nil
}

// CreateDatabase creates database name, quoting it as an identifier.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) error {
	return c.Exec(ctx, "", "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
}

// abbrev shortens sql for an error message.
func abbrev(sql string) string {
	const maxRunes = 80
	if r := []rune(sql); len(r) > maxRunes {
		return string(r[:maxRunes]) + "…"
	}
	return sql
}
