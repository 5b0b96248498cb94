package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// How long status waits for each source; variables for the tests. The
// three are read at once, so the command takes at most the longest.
var (
	statusKafkaTimeout    = 10 * time.Second
	statusPostgresTimeout = 10 * time.Second
	statusLiveTimeout     = time.Second
)

// statusCommand is "mooncdc status [flags] [--json]": it reads the offsets
// topic, Postgres (the slot, the current WAL position, the tables' row
// estimates) and, when the pipeline runs, its /status endpoint, and prints
// what they say together. It only reads. A source it cannot read is
// reported in the output and makes it exit 1; the others are still shown.
func statusCommand(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) int {
	asJSON, args, err := cutJSONFlag(args)
	if err != nil {
		fmt.Fprint(stderr, formatConfigError(err))
		return connector.ExitConfig
	}
	wf, args, err := cutWorkerFlags("status", args)
	var cf configFlags
	if err == nil {
		cf, err = parseConfigFlags("status", args, false)
	}
	if code, stop := configFailed(err, statusUsage(), stdout, stderr); stop {
		return code
	}
	if isConfigDir(cf.configPath) {
		return statusWorkersCommand(ctx, cf, wf, asJSON, environ, stdout, stderr)
	}
	// The same rule as resnapshot: postgres.url may be absent (the
	// Postgres part then says so), but a URL that is set must be valid.
	cfg, err := cf.load(environ, validateForResnapshot)
	if code, stop := configFailed(err, "", stdout, stderr); stop {
		return code
	}

	in := gatherStatus(ctx, cfg)
	rep := buildStatusReport(cfg, in)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "mooncdc status: %v\n", err)
			return connector.ExitRuntime
		}
	} else {
		writeStatus(stdout, rep)
	}
	code := connector.ExitOK
	if rep.Offsets.Error != "" {
		fmt.Fprintf(stderr, "mooncdc status: could not read the offsets: %s\n", singleLine(rep.Offsets.Error))
		code = connector.ExitRuntime
	}
	if rep.Postgres.Error != "" {
		fmt.Fprintf(stderr, "mooncdc status: could not read Postgres: %s\n", singleLine(rep.Postgres.Error))
		code = connector.ExitRuntime
	}
	return code
}

// cutJSONFlag removes status's --json (also -json, --json=BOOL) from args.
func cutJSONFlag(args []string) (bool, []string, error) { return cutBoolFlag("status", "json", args) }

// cutBoolFlag removes the boolean flag --name (also -name, --name=BOOL)
// of command cmd from args, for the flags parseConfigFlags does not know;
// everything after "--" is left alone. A bad value is a
// *connector.ConfigError.
func cutBoolFlag(cmd, name string, args []string) (bool, []string, error) {
	on := false
	rest := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		n, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !strings.HasPrefix(a, "-") || n != name {
			rest = append(rest, a)
			continue
		}
		on = true
		if hasValue {
			b, err := strconv.ParseBool(value)
			if err != nil {
				return false, nil, &config.ConfigError{Err: fmt.Errorf("mooncdc %s: --%s=%s: want true or false", cmd, name, value)}
			}
			on = b
		}
	}
	return on, rest, nil
}

// statusInputs is what the sources said, or why they could not be read.
type statusInputs struct {
	now        time.Time
	state      offsets.State
	offsetsErr error
	pg         pgStatus
	pgErr      error
	live       *connector.LiveStatus // nil: see liveNote
	liveNote   string                // why live is nil
	liveSilent bool                  // nothing answered on metrics.listen
}

// pgStatus is what Postgres says about the slot and the tables.
type pgStatus struct {
	standby bool
	current schema.LSN // 0: unknown (a standby receiving nothing)
	slot    *slotRow   // nil: no such slot
	// estimates is pg_class.reltuples by "schema.table"; absent or
	// negative: unknown (never analyzed, or no such table).
	estimates map[string]int64
	// keyless are the tables postgres.tables selects that run leaves out
	// of the publication: they have no replica identity.
	keyless []config.TableName
}

type slotRow struct {
	active         bool
	activePID      *int32
	confirmedFlush schema.LSN
	restart        schema.LSN
	walStatus      string
	safeWALSize    *int64 // nil: unlimited (max_slot_wal_keep_size -1) or lost
}

// gatherStatus reads the three sources at once and returns when all have
// answered or timed out.
func gatherStatus(ctx context.Context, cfg config.Config) statusInputs {
	in := statusInputs{}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		in.state, in.offsetsErr = readOffsets(ctx, cfg)
	}()
	go func() {
		defer wg.Done()
		in.live, in.liveNote, in.liveSilent = readLive(ctx, cfg)
	}()
	// The row estimates need the table names, which the offsets give; the
	// slot and WAL part does not wait for them.
	pgCtx, cancel := context.WithTimeout(ctx, statusPostgresTimeout)
	defer cancel()
	conn, err := connectStatusPostgres(pgCtx, cfg)
	if err == nil {
		defer conn.Close(context.Background())
		in.pg, err = readSlot(pgCtx, conn, cfg.Postgres.Slot)
	}
	wg.Wait()
	if err == nil {
		names := slices.Collect(maps.Keys(in.state.Tables))
		if in.live != nil {
			names = slices.AppendSeq(names, maps.Keys(in.live.Tables))
		}
		// A timeout of its own: the wait for Kafka may have used up pgCtx's.
		estCtx, cancel := context.WithTimeout(ctx, statusPostgresTimeout)
		defer cancel()
		in.pg.estimates, err = readEstimates(estCtx, conn, names)
		if err == nil {
			in.pg.keyless, err = readKeyless(estCtx, conn, cfg)
		}
	}
	in.pgErr = err
	in.now = time.Now()
	return in
}

// readOffsets loads cfg.Name's state from the offsets topic, giving up
// after statusKafkaTimeout.
func readOffsets(ctx context.Context, cfg config.Config) (offsets.State, error) {
	brokers := cfg.Kafka.Brokers
	if cfg.EmbeddedKafka() {
		brokers = []string{EmbeddedKafkaAddr}
		// Not up unless run is: say so at once rather than after the timeout.
		c, err := net.DialTimeout("tcp", EmbeddedKafkaAddr, time.Second)
		if err != nil {
			return offsets.State{}, fmt.Errorf("kafka.brokers is empty and nothing listens on %s: the embedded development Kafka lives inside 'mooncdc run' and is up only while it runs", EmbeddedKafkaAddr)
		}
		_ = c.Close()
	}
	base, err := cfg.KafkaOpts(brokers)
	if err != nil {
		return offsets.State{}, err
	}
	cl, err := kgo.NewClient(append(base, kgo.ClientID("mooncdc-"+cfg.Name+"-status"))...)
	if err != nil {
		return offsets.State{}, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, statusKafkaTimeout)
	defer cancel()
	st, err := offsets.Load(ctx, cl, cfg.Kafka.OffsetsTopic, cfg.Name)
	if err != nil {
		return offsets.State{}, fmt.Errorf("%w (brokers %s)", err, strings.Join(brokers, ","))
	}
	return st, nil
}

// readLive asks a running pipeline for GET /status on metrics.listen. It
// returns the answer, or why there is none and whether that is because
// nothing answered at all.
func readLive(ctx context.Context, cfg config.Config) (live *connector.LiveStatus, note string, silent bool) {
	if cfg.Metrics.Listen == "" {
		return nil, "metrics.listen is empty, so there is no /status to ask", false
	}
	host, port, err := net.SplitHostPort(cfg.Metrics.Listen)
	if err != nil || port == "0" {
		return nil, fmt.Sprintf("metrics.listen %q names no port to ask", cfg.Metrics.Listen), false
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	url := "http://" + net.JoinHostPort(host, port) + "/status"
	ctx, cancel := context.WithTimeout(ctx, statusLiveTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err.Error(), false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "nothing answers on " + url, true
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Sprintf("%s answered %s: not a mooncdc of this version?", url, resp.Status), false
	}
	live = new(connector.LiveStatus)
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(live); err != nil {
		return nil, fmt.Sprintf("%s answered, but not with a mooncdc status: %v", url, err), false
	}
	if live.Name != cfg.Name {
		return nil, fmt.Sprintf("%s answers for connector %q, not %q", url, live.Name, cfg.Name), false
	}
	return live, "", false
}

// connectStatusPostgres opens a plain SQL connection with the config's
// connection settings; errors never quote a password.
func connectStatusPostgres(ctx context.Context, cfg config.Config) (*pgx.Conn, error) {
	if cfg.Postgres.URL == "" {
		return nil, errors.New("postgres.url not set")
	}
	base, err := cfg.PostgresConnConfig()
	if err != nil {
		return nil, err
	}
	return pgsource.ConnectSQL(ctx, base, "mooncdc status")
}

// readSlot reads the current WAL position and the slot's row of
// pg_replication_slots.
func readSlot(ctx context.Context, conn *pgx.Conn, slot string) (pgStatus, error) {
	var st pgStatus
	var cur *string
	// On a standby the WAL it has received is the end a slot can reach.
	err := conn.QueryRow(ctx, `SELECT pg_is_in_recovery(),
		(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn() ELSE pg_current_wal_lsn() END)::text`).Scan(&st.standby, &cur)
	if err != nil {
		return pgStatus{}, fmt.Errorf("read the current WAL position: %w", err)
	}
	if st.current, err = parseNullLSN(cur); err != nil {
		return pgStatus{}, err
	}
	var s slotRow
	var confirmed, restart, walStatus *string
	err = conn.QueryRow(ctx, `SELECT active, active_pid, confirmed_flush_lsn::text, restart_lsn::text, wal_status, safe_wal_size
		FROM pg_replication_slots WHERE slot_name = $1`, slot).
		Scan(&s.active, &s.activePID, &confirmed, &restart, &walStatus, &s.safeWALSize)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return st, nil
	case err != nil:
		return pgStatus{}, fmt.Errorf("read slot %q from pg_replication_slots: %w", slot, err)
	}
	if s.confirmedFlush, err = parseNullLSN(confirmed); err != nil {
		return pgStatus{}, err
	}
	if s.restart, err = parseNullLSN(restart); err != nil {
		return pgStatus{}, err
	}
	if walStatus != nil {
		s.walStatus = *walStatus
	}
	st.slot = &s
	return st, nil
}

// readEstimates reads pg_class.reltuples of the named tables ("schema.table",
// raw names joined by '.', as the offsets keys are).
func readEstimates(ctx context.Context, conn *pgx.Conn, names []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(names) == 0 {
		return out, nil
	}
	rows, err := conn.Query(ctx, `SELECT n.nspname || '.' || c.relname, `+pgsource.EstimatedRowsSQL+`
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND n.nspname || '.' || c.relname = ANY($1)`, names)
	if err != nil {
		return nil, fmt.Errorf("read the tables' row estimates: %w", err)
	}
	for rows.Next() {
		var name string
		var n float64
		if err := rows.Scan(&name, &n); err != nil {
			return nil, fmt.Errorf("read the tables' row estimates: %w", err)
		}
		out[name] = int64(n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the tables' row estimates: %w", err)
	}
	return out, nil
}

// readKeyless lists the tables that postgres.tables selects and run does
// not capture for want of a replica identity.
func readKeyless(ctx context.Context, conn *pgx.Conn, cfg config.Config) ([]config.TableName, error) {
	sel, err := cfg.TableSelection()
	if err != nil || len(sel.Include) == 0 {
		return nil, err
	}
	names, err := pgsource.UnpublishedKeyless(ctx, conn, cfg.Postgres.Publication, sel)
	if err != nil {
		return nil, fmt.Errorf("read the tables without a replica identity: %w", err)
	}
	return names, nil
}

func parseNullLSN(s *string) (schema.LSN, error) {
	if s == nil {
		return 0, nil
	}
	return schema.ParseLSN(*s)
}

func statusUsage() string {
	var b strings.Builder
	b.WriteString(`Usage: mooncdc status [--config FILE] [flags] [--json]
       mooncdc status --config DIR [--group NAME] [flags] [--json]

Shows where the connector is, from the offsets topic, Postgres and, while
'mooncdc run' runs, its /status endpoint (http://<metrics.listen>/status):
each table's phase, handover LSN, copy progress (or a running incremental
snapshot's: pages done of the plan, rows, rate, ETA), attempts and last error;
the durable LSN (what Kafka has acknowledged); the replication slot's
confirmed_flush_lsn and restart_lsn, the WAL it retains, and the lag. It only
reads, and works whether run is running or not. It reads the config like run
does, with the same flags; postgres.url may be absent (the Postgres part then
says so). With kafka.brokers empty it reads the embedded development Kafka,
which is up only while run is.

Lag is the WAL between the slot's confirmed_flush_lsn and the current WAL
position (on a standby: the WAL received). As a duration it is 0 when there
is no lag; otherwise it is the time since the durable LSN last moved (the
offsets record it, about once a second while it moves): how long the
connector has not moved forward, not the age of the oldest change still to
stream.

With --config DIR (a worker group, see 'mooncdc help run') it shows which
worker runs each pipeline of DIR, as the group coordinator says; give it
one file of DIR for that pipeline's tables.

Exit codes: 0 when the offsets and Postgres were read; 1 when either could
not be (the rest is still shown); 2 invalid config.

Flags:
  --json
        print one JSON document instead of text:
          name, time
          running            "yes" (the /status endpoint answered), "no"
                             (nothing answers and the slot is inactive) or
                             "unknown"; running_detail says why not "yes"
          version, streaming the running process's (streaming null if not)
          durable_lsn        the running pipeline's, else the offsets'
          durable_lsn_from   "live" or "offsets"
          offsets            {topic, error, found, durable_lsn, updated_at,
                             durable_since}
          postgres           {error, standby, current_lsn, slot: {name, exists,
                             active, active_pid, confirmed_flush_lsn,
                             restart_lsn, wal_status, safe_wal_size_bytes,
                             retained_wal_bytes}}; slot is null when
                             Postgres could not be read
          lag                {bytes, seconds, behind_since}
          tables             [{table, phase, lsn, attempts, last_error, retry,
                             updated_at, estimated_rows (pg_class.reltuples),
                             copy: {stage, rows, estimated_rows, started,
                             rows_per_second, eta_seconds},
                             incremental: {pages, pages_done, rows, started,
                             rows_per_second, eta_seconds, filter},
                             incremental_windows: [{id, first_page, end_page
                             (exclusive), opened, age_seconds, rows, bytes,
                             read, waiting_for_stream, high_watermark,
                             void}]}]
        LSNs are strings (0/16B3748), times RFC 3339; an unknown number is
        null, an unknown LSN, time or error is absent; copy is null unless the
        table is being copied by the running pipeline: rows produced so far
        (not all acknowledged yet), rows_per_second averaged since started,
        eta_seconds the rows left to the estimate at that rate. A
        safe_wal_size_bytes of null with a wal_status other than "lost"
        means unlimited.
`)
	b.WriteString(strings.TrimPrefix(configFlagsUsage(), "Flags:\n"))
	return b.String()
}
