package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/pgsource"
)

// setupDDLCommand is "mooncdc setup-ddl [--config FILE] [flags]
// [--uninstall]": it installs (or removes) the event trigger that reports
// each DDL command on the captured tables into the stream (connector/ddl.go),
// in the database postgres.url names. It needs a superuser; without the
// trigger everything else works, and schema changes show only through the
// records' new shape.
func setupDDLCommand(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) int {
	uninstall, args, err := cutBoolFlag("setup-ddl", "uninstall", args)
	if err != nil {
		fmt.Fprint(stderr, formatConfigError(err))
		return connector.ExitConfig
	}
	cf, err := parseConfigFlags("setup-ddl", args, false)
	if code, stop := configFailed(err, setupDDLUsage(), stdout, stderr); stop {
		return code
	}
	cfg, err := cf.load(environ, config.Config.Validate)
	if code, stop := configFailed(err, "", stdout, stderr); stop {
		return code
	}
	pgcfg, err := cfg.PostgresConnConfig()
	if err != nil {
		fmt.Fprint(stderr, formatConfigError(err))
		return connector.ExitConfig
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	db, err := pgsource.ConnectSQL(ctx, pgcfg, "mooncdc setup-ddl")
	if err != nil {
		fmt.Fprintf(stderr, "mooncdc setup-ddl: %v\n", err)
		return connector.ExitRuntime
	}
	defer func() { _ = db.Close(context.Background()) }()
	if uninstall {
		err = pgsource.UninstallDDLCapture(ctx, db)
	} else {
		err = pgsource.InstallDDLCapture(ctx, db)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mooncdc setup-ddl: %v\n", config.RedactURL(err.Error()))
		return connector.ExitRuntime
	}
	if uninstall {
		fmt.Fprintf(stdout, "removed the DDL event triggers (mooncdc_ddl_end, mooncdc_ddl_drop) and mooncdc.emit_ddl() from database %q\n", db.Config().Database)
	} else {
		fmt.Fprintf(stdout, "installed the DDL event triggers mooncdc_ddl_end and mooncdc_ddl_drop (function mooncdc.emit_ddl()) in database %q: "+
			"each DDL on a captured table is a record on %s.schema-changes\n", db.Config().Database, cfg.Kafka.TopicPrefix)
	}
	return connector.ExitOK
}

func setupDDLUsage() string {
	return `Usage: mooncdc setup-ddl [--config FILE] [flags] [--uninstall]

Installs, in the database of postgres.url, an event trigger on ddl_command_end
and sql_drop whose function writes each DDL command that creates, alters or
drops tables as a transactional logical message (prefix mooncdc_ddl): the
command tag, the statement, and each table's columns and primary key after it.
mooncdc run writes one record per captured table of the command on
<prefix>.schema-changes, in the DDL's own transaction. Needs a superuser.
--uninstall removes the triggers and the function.

` + configFlagsUsage()
}
