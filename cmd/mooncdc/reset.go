package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
)

// resetTimeout bounds the whole command once confirmed.
var resetTimeout = time.Minute

// stdin is where reset reads its confirmation; a variable for the tests.
var stdin io.Reader = os.Stdin

// resetCommand is "mooncdc reset [--config FILE] [flags] [--drop-slot]
// [--yes]": it deletes the connector's offsets (a tombstone for its
// pipeline key and for each of its table keys in the offsets topic) and,
// with --drop-slot, its replication slot, so that the next run starts over
// with a new snapshot under the same name, slot and topics. It refuses
// while the slot is in use (a mooncdc still runs), and asks first unless
// --yes.
func resetCommand(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) int {
	dropSlot, args, err := cutBoolFlag("reset", "drop-slot", args)
	var yes bool
	if err == nil {
		yes, args, err = cutBoolFlag("reset", "yes", args)
	}
	if err != nil {
		fmt.Fprint(stderr, formatConfigError(err))
		return connector.ExitConfig
	}
	cf, err := parseConfigFlags("reset", args, false)
	if code, stop := configFailed(err, resetUsage(), stdout, stderr); stop {
		return code
	}
	cfg, err := cf.load(environ, config.Config.Validate)
	if code, stop := configFailed(err, "", stdout, stderr); stop {
		return code
	}
	if cfg.EmbeddedKafka() {
		fmt.Fprintf(stderr, "mooncdc reset: kafka.brokers is empty, but the embedded development Kafka lives inside 'mooncdc run', which must not run during a reset: "+
			"delete its data instead (make distclean, or rm -r %s) and drop the slot yourself if you want a new one\n", cfg.DataDir)
		return connector.ExitConfig
	}

	ctx, cancel := context.WithTimeout(ctx, resetTimeout)
	defer cancel()
	plan, err := planReset(ctx, cfg, dropSlot)
	if err != nil {
		fmt.Fprintf(stderr, "mooncdc reset: %v\n", err)
		return connector.ExitRuntime
	}
	fmt.Fprint(stdout, plan.describe(cfg))
	if plan.empty() {
		fmt.Fprintln(stdout, "nothing to delete")
		return connector.ExitOK
	}
	if !yes {
		fmt.Fprint(stdout, "Type yes to delete them: ")
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if strings.TrimSpace(line) != "yes" {
			fmt.Fprintln(stdout)
			fmt.Fprintln(stderr, "mooncdc reset: not confirmed; nothing was deleted (type yes, or pass --yes)")
			return connector.ExitRuntime
		}
	}
	if err := plan.apply(ctx, cfg); err != nil {
		fmt.Fprintf(stderr, "mooncdc reset: %v\n", err)
		return connector.ExitRuntime
	}
	fmt.Fprintf(stdout, "done: the next 'mooncdc run' of %q starts over with a new snapshot\n", cfg.Name)
	return connector.ExitOK
}

// resetPlan is what reset deletes.
type resetPlan struct {
	kafka    []kgo.Opt
	pipeline bool     // a pipeline record exists
	tables   []string // table keys with a value
	dropSlot bool     // --drop-slot and the slot exists
	slotNote string   // why the slot is kept, if it is
	// copySlots are the persistent slots of table copies that can resume
	// (pgsource.IsCopySlot): the offsets that name them go, so they go too.
	copySlots []string
}

func (p resetPlan) empty() bool {
	return !p.pipeline && len(p.tables) == 0 && !p.dropSlot && len(p.copySlots) == 0
}

// planReset reads the offsets and the slot, and refuses while the slot is
// held: a running mooncdc would write its offsets again.
func planReset(ctx context.Context, cfg config.Config, dropSlot bool) (resetPlan, error) {
	var plan resetPlan
	pgcfg, err := cfg.PostgresConnConfig()
	if err != nil {
		return plan, err
	}
	conn, err := pgsource.ConnectSQL(ctx, pgcfg, "mooncdc-reset")
	if err != nil {
		return plan, err
	}
	defer conn.Close(context.Background())
	var active *int32
	err = conn.QueryRow(ctx, `SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1`, cfg.Postgres.Slot).Scan(&active)
	slotExists := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return plan, fmt.Errorf("look up replication slot %q: %w", cfg.Postgres.Slot, err)
	}
	if active != nil {
		return plan, fmt.Errorf("replication slot %q is in use by PID %d: stop the mooncdc run of connector %q first (or, if that PID is not mooncdc, stop it), then reset again; nothing was deleted",
			cfg.Postgres.Slot, *active, cfg.Name)
	}
	switch {
	case dropSlot && slotExists:
		plan.dropSlot = true
	case dropSlot:
		plan.slotNote = fmt.Sprintf("replication slot %q does not exist: nothing to drop", cfg.Postgres.Slot)
	case slotExists:
		plan.slotNote = fmt.Sprintf("replication slot %q is kept (pass --drop-slot to drop it; the next run adopts it and streams from its position)", cfg.Postgres.Slot)
	}

	rows, err := conn.Query(ctx, `SELECT slot_name FROM pg_replication_slots WHERE NOT temporary AND active_pid IS NULL ORDER BY slot_name`)
	if err != nil {
		return plan, fmt.Errorf("list the replication slots: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return plan, fmt.Errorf("list the replication slots: %w", err)
	}
	for _, name := range names {
		if pgsource.IsCopySlot(cfg.Postgres.Slot, name) {
			plan.copySlots = append(plan.copySlots, name)
		}
	}

	if plan.kafka, err = cfg.KafkaOpts(cfg.Kafka.Brokers); err != nil {
		return plan, err
	}
	cl, err := kgo.NewClient(append(slices.Clip(plan.kafka), kgo.ClientID("mooncdc-"+cfg.Name+"-reset"))...)
	if err != nil {
		return plan, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	st, err := offsets.Load(ctx, cl, cfg.Kafka.OffsetsTopic, cfg.Name)
	if err != nil {
		return plan, fmt.Errorf("%w (is kafka.brokers %s the Kafka that 'mooncdc run' uses?)", err, strings.Join(cfg.Kafka.Brokers, ","))
	}
	plan.pipeline = st.Pipeline != nil
	for name := range st.Tables {
		plan.tables = append(plan.tables, name)
	}
	slices.Sort(plan.tables)
	return plan, nil
}

func (p resetPlan) describe(cfg config.Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "connector %q, offsets topic %q (brokers %s):\n", cfg.Name, cfg.Kafka.OffsetsTopic, strings.Join(cfg.Kafka.Brokers, ","))
	if p.pipeline {
		b.WriteString("  delete the pipeline's offsets (the durable LSN)\n")
	}
	if n := len(p.tables); n > 0 {
		fmt.Fprintf(&b, "  delete the phases of %d %s: %s\n", n, map[bool]string{true: "table", false: "tables"}[n == 1], strings.Join(p.tables, ", "))
	}
	if p.dropSlot {
		fmt.Fprintf(&b, "  drop replication slot %q (its WAL is released)\n", cfg.Postgres.Slot)
	}
	if p.slotNote != "" {
		fmt.Fprintf(&b, "  %s\n", p.slotNote)
	}
	if n := len(p.copySlots); n > 0 {
		fmt.Fprintf(&b, "  drop the replication %s of %d interrupted table %s (its progress goes with the phases; their WAL is released): %s\n",
			map[bool]string{true: "slot", false: "slots"}[n == 1], n, map[bool]string{true: "copy", false: "copies"}[n == 1], strings.Join(p.copySlots, ", "))
	}
	b.WriteString("  the data topics and the publication are kept\n")
	return b.String()
}

// apply writes the tombstones (waiting for Kafka's acknowledgement) and
// then drops the slot: a failure in between leaves a slot without offsets,
// which the next run adopts.
func (p resetPlan) apply(ctx context.Context, cfg config.Config) error {
	cl, err := kgo.NewClient(append(slices.Clip(p.kafka), kgo.ClientID("mooncdc-"+cfg.Name+"-reset"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	topic := cfg.Kafka.OffsetsTopic
	if err := connector.ResetOffsets(ctx, cl, &cfg, p.pipeline, p.tables); err != nil {
		return fmt.Errorf("write to offsets topic %q: %w (some offsets may be deleted; run the command again)", topic, err)
	}
	if p.dropSlot || len(p.copySlots) > 0 {
		pgcfg, err := cfg.PostgresConnConfig()
		if err != nil {
			return err
		}
		conn, err := pgsource.ConnectSQL(ctx, pgcfg, "mooncdc-reset")
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		for _, s := range p.copySlots {
			if _, err := conn.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, s); err != nil {
				return fmt.Errorf("the offsets are deleted, but dropping the copy's replication slot %q failed: %w (drop it yourself, or the next run drops it)", s, err)
			}
		}
		if p.dropSlot {
			if _, err := conn.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, cfg.Postgres.Slot); err != nil {
				return fmt.Errorf("the offsets are deleted, but dropping replication slot %q failed: %w (drop it yourself, or the next run adopts it)", cfg.Postgres.Slot, err)
			}
		}
	}
	return nil
}

func resetUsage() string {
	var b strings.Builder
	b.WriteString(`Usage: mooncdc reset [--config FILE] [flags] [--drop-slot] [--yes]

Starts a connector over: deletes its offsets from the offsets topic (a
tombstone for its pipeline record and for each table's phase), so that the
next 'mooncdc run' with the same name copies every table anew and then
streams, into the same topics. With --drop-slot it also drops the
replication slot (needed when Postgres invalidated it, wal_status lost, or
the offsets were written for another database); without it the slot is
kept and the next run adopts it. The data topics and the publication are
kept.

Stop every 'mooncdc run' of the connector first: reset refuses while the
slot is in use. It prints what it will delete and asks for "yes" on standard
input, unless --yes; anything else deletes nothing (exit 1).

It reads the config like run does, with the same flags, and needs both
postgres.url and kafka.brokers.

`)
	b.WriteString(configFlagsUsage())
	return b.String()
}
