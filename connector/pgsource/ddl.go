package pgsource

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// This file holds DDL capture (`mooncdc setup-ddl`): an event trigger on
// ddl_command_end and sql_drop whose function writes, for each DDL command
// that creates, alters or drops tables, a transactional logical message
// (prefix DDLMessagePrefix) with the command tag, current_query() and the
// tables' columns and primary key as the catalog has them after the
// command (schema.ParseDDLMessage reads it), with the oids and type
// modifiers that let the emitter build the new shape's record schemas at
// the DDL (connector/internal/record: evolution.go). Transactional, it is decoded
// inside the DDL's own transaction, at its place in the WAL: before any
// row of the new shape. The emitter turns it into schema-change records
// (emit: schemachange.go).

// ddlSchema holds the event trigger's function.
const ddlSchema = "mooncdc"

// ddlInstallSQL creates the function and the two event triggers, replacing
// earlier ones. The function is SECURITY DEFINER: it runs as the role that
// installed it (which may call pg_logical_emit_message and read the
// catalog), whoever runs the DDL.
const ddlInstallSQL = `
CREATE SCHEMA IF NOT EXISTS mooncdc;
CREATE OR REPLACE FUNCTION mooncdc.emit_ddl() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $fn$
DECLARE
	r record;
	tables jsonb := '[]';
BEGIN
	IF TG_EVENT = 'sql_drop' THEN
		FOR r IN SELECT * FROM pg_event_trigger_dropped_objects() WHERE object_type = 'table' AND NOT is_temporary LOOP
			tables := tables || jsonb_build_object('oid', r.objid::bigint, 'schema', r.schema_name, 'table', r.object_name, 'dropped', true);
		END LOOP;
	ELSE
		FOR r IN SELECT DISTINCT c.oid, n.nspname, c.relname
			FROM pg_event_trigger_ddl_commands() d
			JOIN pg_class c ON c.oid = d.objid AND d.classid = 'pg_class'::regclass
			JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE c.relkind IN ('r', 'p') AND c.relpersistence <> 't' LOOP
			tables := tables || jsonb_build_object(
				'oid', r.oid::bigint, 'schema', r.nspname, 'table', r.relname,
				'primary_key', (SELECT coalesce(jsonb_agg(a.attname ORDER BY k.ord), '[]')
					FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
					JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
					WHERE i.indrelid = r.oid AND i.indisprimary),
				'columns', (SELECT coalesce(jsonb_agg(jsonb_build_object(
						'name', a.attname,
						'type', t.typname,
						'type_oid', a.atttypid::bigint,
						'typmod', a.atttypmod,
						'generated', a.attgenerated <> '',
						'length', CASE
							WHEN a.atttypmod < 0 THEN NULL
							WHEN t.typname IN ('varchar', 'bpchar') THEN a.atttypmod - 4
							WHEN t.typname = 'numeric' THEN ((a.atttypmod - 4) >> 16) & 65535
							WHEN t.typname IN ('bit', 'varbit', 'time', 'timetz', 'timestamp', 'timestamptz', 'interval') THEN a.atttypmod
							END,
						'scale', CASE WHEN t.typname = 'numeric' AND a.atttypmod >= 0 THEN (a.atttypmod - 4) & 65535 END,
						'position', a.attnum,
						'optional', NOT a.attnotnull,
						'default', pg_get_expr(ad.adbin, ad.adrelid)) ORDER BY a.attnum), '[]')
					FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
					LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
					WHERE a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped));
		END LOOP;
	END IF;
	IF jsonb_array_length(tables) > 0 THEN
		PERFORM pg_logical_emit_message(true, 'mooncdc_ddl',
			jsonb_build_object('tag', TG_TAG, 'ddl', current_query(), 'tables', tables)::text);
	END IF;
END
$fn$;
DROP EVENT TRIGGER IF EXISTS mooncdc_ddl_end;
DROP EVENT TRIGGER IF EXISTS mooncdc_ddl_drop;
CREATE EVENT TRIGGER mooncdc_ddl_end ON ddl_command_end EXECUTE FUNCTION mooncdc.emit_ddl();
CREATE EVENT TRIGGER mooncdc_ddl_drop ON sql_drop EXECUTE FUNCTION mooncdc.emit_ddl();
`

// ddlUninstallSQL removes what ddlInstallSQL created.
const ddlUninstallSQL = `
DROP EVENT TRIGGER IF EXISTS mooncdc_ddl_end;
DROP EVENT TRIGGER IF EXISTS mooncdc_ddl_drop;
DROP FUNCTION IF EXISTS mooncdc.emit_ddl();
`

// InstallDDLCapture installs the DDL event trigger in the database db is
// connected to, in one transaction. Event triggers need a superuser
// (PostgreSQL 15 and 16; 17 too, unless granted); the error then names the
// cause and says what still works without them.
func InstallDDLCapture(ctx context.Context, db *pgx.Conn) error {
	return ddlExec(ctx, db, ddlInstallSQL, "install")
}

// UninstallDDLCapture removes the DDL event trigger and its function (the
// schema mooncdc stays, in case it holds anything else).
func UninstallDDLCapture(ctx context.Context, db *pgx.Conn) error {
	return ddlExec(ctx, db, ddlUninstallSQL, "uninstall")
}

func ddlExec(ctx context.Context, db *pgx.Conn, sql, what string) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s the DDL event trigger (schema %s): %w; creating event triggers needs a superuser "+
			"(on managed Postgres without one, schema changes still reach the records through pgoutput's Relation messages, without their DDL)",
			what, ddlSchema, err)
	}
	return tx.Commit(ctx)
}
