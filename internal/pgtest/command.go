package pgtest

import (
	"context"
	"os/exec"
	"strconv"
)

// Command returns an unstarted command for a PostgreSQL binary such as
// pg_recvlogical, psql or pgbench, set up to reach this cluster: PGHOST,
// PGPORT, PGUSER, PGDATABASE (postgres), PGSSLMODE and PGDATA are set, other
// PG* variables are removed, and the working directory is the cluster's base
// directory. When the process is root, the command runs as the OS user
// postgres, which may not read files that only root can read. The caller may
// change any field, including Env, before starting it.
func (c *Cluster) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(c.BinPath(name), args...)
	c.setup(cmd)
	return cmd
}

// CommandContext is Command with a context that kills the program when done.
func (c *Cluster) CommandContext(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.BinPath(name), args...)
	c.setup(cmd)
	return cmd
}

func (c *Cluster) setup(cmd *exec.Cmd) {
	cmd.Dir = c.dir
	cmd.Env = c.user.env(
		"PGHOST=127.0.0.1",
		"PGPORT="+strconv.Itoa(c.port),
		"PGUSER=postgres",
		"PGDATABASE=postgres",
		"PGSSLMODE=disable",
		"PGDATA="+c.dataDir,
	)
	c.user.apply(cmd)
}

// serverCommand is a command for initdb or pg_ctl: run as the server user in
// the base directory. The caller sets Env and output.
func (c *Cluster) serverCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.BinPath(name), args...)
	cmd.Dir = c.dir
	c.user.apply(cmd)
	return cmd
}
