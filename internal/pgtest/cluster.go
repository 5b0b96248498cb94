package pgtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Options configures Start. The zero value is a cluster in a new temporary
// directory on a free port with the default settings.
type Options struct {
	// Dir is the cluster's base directory: the data directory is Dir/data
	// and, without Log, the server log is Dir/postgres.log. "" means a new
	// temporary directory that Close removes. A given Dir is created if
	// missing and never removed; if Dir/data already holds a cluster, it is
	// started instead of running initdb. When running as root, the OS user
	// postgres must be able to traverse Dir and its parents (t.TempDir does
	// not qualify).
	Dir string
	// Port is the TCP port on 127.0.0.1; 0 picks a free one.
	Port int
	// Settings are postgresql.conf settings applied over the defaults, with
	// raw values: {"wal_level": "replica"}, not "'replica'". "port" is
	// rejected; use Port.
	Settings map[string]string
	// Log receives the server log and the output of initdb and pg_ctl,
	// serialised, until Close. nil means the file postgres.log in Dir.
	Log io.Writer
	// BinDir holds the server binaries to use; "" means BinDir().
	BinDir string
}

// Cluster is a running (or stopped) throwaway PostgreSQL server. Its methods
// are safe for concurrent use; Stop, StartAgain, Restart and Close are
// serialised with each other.
type Cluster struct {
	bin       string
	user      serverUser
	dir       string // base directory
	dataDir   string
	removeDir bool // Start made dir, so Close removes it
	port      int
	log       *logSink
	logFile   *os.File // postgres.log when Options.Log was nil

	mu         sync.Mutex
	serverDone <-chan struct{} // closed when the running server's output pipe closes
	closed     bool
}

// Start creates a cluster with initdb (trust authentication, superuser
// postgres, UTF8, C locale), writes its configuration and starts it with
// pg_ctl. It blocks until the server accepts connections or fails; the
// error then quotes the end of the server log. ctx bounds initdb and pg_ctl
// only; the server outlives it until Stop or Close. On error nothing is left
// running and a temporary directory is removed.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	bin := opts.BinDir
	if bin == "" {
		var err error
		if bin, err = BinDir(); err != nil {
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	su, err := lookupServerUser()
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c := &Cluster{bin: bin, user: su}
	if err := c.create(ctx, opts); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("pgtest: start cluster: %w", err)
	}
	return c, nil
}

// create does Start's work; on error, Start closes the half-made cluster.
func (c *Cluster) create(ctx context.Context, opts Options) error {
	if err := c.makeDirs(opts.Dir); err != nil {
		return err
	}
	if opts.Log == nil {
		f, err := os.OpenFile(filepath.Join(c.dir, "postgres.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		c.logFile, opts.Log = f, f
	}
	c.log = newLogSink(opts.Log)

	if err := c.initdb(ctx); err != nil {
		return err
	}

	c.port = opts.Port
	pickPort := c.port == 0
	for attempt := 1; ; attempt++ {
		if pickPort {
			port, err := freePort()
			if err != nil {
				return err
			}
			c.port = port
		}
		s, err := settings(c.port, opts.Settings)
		if err != nil {
			return err
		}
		if err := writeConfig(c.dataDir, s, c.user); err != nil {
			return err
		}
		err = c.start(ctx)
		if err == nil {
			return nil
		}
		// Someone took the picked port between freePort and the bind.
		lost := strings.Contains(err.Error(), "Address already in use")
		if !pickPort || !lost || attempt == 3 || ctx.Err() != nil {
			return err
		}
	}
}

// makeDirs creates the base directory and an empty data directory owned by
// the server user.
func (c *Cluster) makeDirs(dir string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "pgtest-")
		if err != nil {
			return err
		}
		c.dir, c.removeDir = d, true
		// MkdirTemp makes 0700 directories; the server user must get in.
		if err := os.Chmod(d, 0o755); err != nil {
			return err
		}
	} else {
		d, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		c.dir = d
	}
	if err := c.user.checkSearchable(c.dir); err != nil {
		return err
	}
	c.dataDir = filepath.Join(c.dir, "data")
	if err := os.Mkdir(c.dataDir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return c.user.chown(c.dataDir)
}

// initdb creates the cluster unless the data directory already holds one,
// as a copy of the initdb template of its binaries (template.go).
func (c *Cluster) initdb(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(c.dataDir, "PG_VERSION")); err == nil {
		return nil
	}
	tmpl, err := c.templateDir(ctx)
	if errors.Is(err, errNoTemplate) {
		out, err := c.run(ctx, true, "initdb", append([]string{"-D", c.dataDir}, initdbArgs...)...)
		if err != nil {
			return fmt.Errorf("initdb: %w\n%s", err, out)
		}
		return includeConf(c.dataDir)
	}
	if err != nil {
		return err
	}
	return c.copyTemplate(ctx, tmpl)
}

// Port returns the server's TCP port on 127.0.0.1. It never changes, not
// even across Restart.
func (c *Cluster) Port() int { return c.port }

// Dir returns the cluster's base directory.
func (c *Cluster) Dir() string { return c.dir }

// DataDir returns the data directory (PGDATA).
func (c *Cluster) DataDir() string { return c.dataDir }

// BinPath returns the path of a PostgreSQL binary, e.g. "pg_recvlogical",
// from the directory the cluster's server came from.
func (c *Cluster) BinPath(name string) string { return filepath.Join(c.bin, name) }

// URL returns a connection URL for the superuser postgres, without password
// or TLS. An empty database means "postgres".
func (c *Cluster) URL(database string) string {
	if database == "" {
		database = "postgres"
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, url.PathEscape(database))
}

// ReplicationURL returns URL(database) for a logical replication connection
// (replication=database), as pglogrepl needs.
func (c *Cluster) ReplicationURL(database string) string {
	return c.URL(database) + "&replication=database"
}

// logTail returns the last few kilobytes of server and command output.
func (c *Cluster) logTail() string {
	if c.log == nil {
		return ""
	}
	return c.log.Tail()
}

// Close stops the server with an immediate shutdown, if it is running, and
// removes the directory if Start created it. It blocks until the server has
// exited. Close is idempotent, and it is safe to call after Stop or after
// any failure; it makes every later lifecycle call fail. Output stops going
// to Options.Log once Close returns.
func (c *Cluster) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true

	var errs []error
	if c.dataDir != "" {
		// Ask first: pg_ctl stop on a stopped server writes an error to the log.
		if up, err := c.running(); err != nil || up {
			if err := c.stop("immediate"); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if c.log != nil {
		c.log.detach()
	}
	if c.logFile != nil {
		errs = append(errs, c.logFile.Close())
	}
	// Removing the data directory also stops a server that ignored pg_ctl:
	// the postmaster shuts down once it finds its lock file gone.
	if c.removeDir {
		errs = append(errs, os.RemoveAll(c.dir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("pgtest: close cluster on port %d: %w", c.port, err)
	}
	return nil
}

// LogTail returns the last few kilobytes of the server's output and of
// initdb's and pg_ctl's, for a failed test's log; New logs it itself.
func (c *Cluster) LogTail() string { return c.logTail() }
