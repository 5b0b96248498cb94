package main

import (
	"context"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// TestSetupDDLInstallsAndUninstallsTheEventTrigger: setup-ddl creates the
// two event triggers and their function, --uninstall removes them, and a
// role that may not create event triggers gets the cause and what works
// without them.
func TestSetupDDLInstallsAndUninstallsTheEventTrigger(t *testing.T) {
	pg := pgtest.New(t)
	ctx := context.Background()
	if err := pg.Exec(ctx, "", `CREATE ROLE app LOGIN`); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		conn, err := pg.Connect(ctx, "postgres")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'mooncdc_ddl_%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	cfg := writeConfig(t, "name: shop\n")
	code, out, errOut := runCLI(t, []string{"setup-ddl", "--config", cfg, "--postgres-url", pg.URL("postgres")}, nil)
	if code != connector.ExitOK || !strings.Contains(out, "installed the DDL event triggers mooncdc_ddl_end and mooncdc_ddl_drop") || count() != 2 {
		t.Fatalf("install: exit %d, %d triggers\n%s%s", code, count(), out, errOut)
	}
	// Again: replaces them.
	if code, _, errOut := runCLI(t, []string{"setup-ddl", "--config", cfg, "--postgres-url", pg.URL("postgres")}, nil); code != connector.ExitOK || count() != 2 {
		t.Fatalf("second install: exit %d\n%s", code, errOut)
	}
	code, out, errOut = runCLI(t, []string{"setup-ddl", "--uninstall", "--config", cfg, "--postgres-url", pg.URL("postgres")}, nil)
	if code != connector.ExitOK || !strings.Contains(out, "removed the DDL event triggers") || count() != 0 {
		t.Fatalf("uninstall: exit %d, %d triggers\n%s%s", code, count(), out, errOut)
	}
	appURL := strings.Replace(pg.URL("postgres"), "postgres@", "app@", 1)
	code, _, errOut = runCLI(t, []string{"setup-ddl", "--config", cfg, "--postgres-url", appURL}, nil)
	if code != connector.ExitRuntime || !strings.Contains(errOut, "needs a superuser") || !strings.Contains(errOut, "Relation messages") {
		t.Fatalf("as a plain role: exit %d\n%s", code, errOut)
	}
}
