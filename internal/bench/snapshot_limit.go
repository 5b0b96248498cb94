package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// This file times the snapshot's limit: the table read by COPY … TO STDOUT
// alone, through pgx as mooncdc reads it (runCopyLimit) and through psql.

// copyLimitResult is one COPY TO STDOUT run.
type copyLimitResult struct {
	elapsed    time.Duration
	rows       int64
	bytes      int64         // COPY text output
	backendCPU cpuTime       // the backend running the COPY
	clientCPU  cpuTime       // this process (pgx) during the COPY
	hostBusy   time.Duration // all processes on the machine
}

// countWriter counts and discards what it is given.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// runCopyLimit reads the whole table with COPY … TO STDOUT on one
// connection through pgx's CopyTo (the client mooncdc uses), counting the
// bytes and discarding them.
func (s *source) runCopyLimit(ctx context.Context) (copyLimitResult, error) {
	var res copyLimitResult
	conn, err := s.c.Connect(ctx, "")
	if err != nil {
		return res, err
	}
	defer conn.Close(context.Background())
	var pid int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		return res, err
	}
	bu0, bs0, _ := procCPU(pid)
	cu0, cs0 := selfRusage()
	var w countWriter
	start, busy0 := time.Now(), hostBusy()
	tag, err := conn.PgConn().CopyTo(ctx, &w, "COPY "+snapQualified+" TO STDOUT")
	res.elapsed = time.Since(start)
	res.hostBusy = hostBusy() - busy0
	if err != nil {
		return res, fmt.Errorf("COPY %s TO STDOUT: %w", snapQualified, err)
	}
	cu1, cs1 := selfRusage()
	res.clientCPU = cpuTime{cu1 - cu0, cs1 - cs0}
	if bu1, bs1, err := procCPU(pid); err == nil {
		res.backendCPU = cpuTime{bu1 - bu0, bs1 - bs0}
	}
	res.rows, res.bytes = tag.RowsAffected(), w.n
	return res, nil
}

// runCopyPsql times `psql -c 'COPY … TO STDOUT'` writing into /dev/null,
// process start and connection included: a reference for the limit.
func (s *source) runCopyPsql(ctx context.Context) (time.Duration, error) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	defer devNull.Close()
	var stderr bytes.Buffer
	cmd := s.c.CommandContext(ctx, "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", "COPY "+snapQualified+" TO STDOUT")
	cmd.Stdout, cmd.Stderr = devNull, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("psql: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return time.Since(start), nil
}
