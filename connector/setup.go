package connector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

func (p *Pipeline) producerOpts(hooks kgo.Hook) []kgo.Opt {
	maxBytes := p.cfg.Kafka.MaxInflightBytes
	return append(slices.Clip(p.kafka),
		// Run's hard context: a stop past shutdown_timeout (or an abort)
		// fails the requests Kafka never answers, instead of waiting on them.
		kgo.WithContext(p.hard),
		kgo.ClientID("mooncdc-"+p.cfg.Name),
		kgo.RequiredAcks(kgo.AllISRAcks()), // with the default idempotent writes
		// A black-holed broker connection is given up after these (links.go).
		kgo.RequestTimeoutOverhead(config.KafkaRequestOverhead),
		kgo.ProduceRequestTimeout(config.KafkaProduceTimeout),
		// The tracker bounds in-flight bytes (each record counted with
		// recordCost, above the key, value and headers kgo counts) and makes
		// the stream and the copies wait; the client's own bound sits just
		// above it, room for one record past the bound per worker plus the
		// offsets and heartbeat records, so that Produce never blocks the
		// stream goroutine (which must keep answering Postgres).
		kgo.MaxBufferedBytes(int(maxBytes)+(p.cfg.Snapshot.Workers+2)*(int(p.cfg.Kafka.MaxRecordBytes)+delivery.RecordOverhead)),
		kgo.MaxBufferedRecords(1<<24),
		kgo.ProducerLinger(5*time.Millisecond),
		// A batch holds at least one record; the emitters refuse records
		// above kafka.max_record_bytes, so this never splits or fails one.
		kgo.ProducerBatchMaxBytes(max(1_000_012, p.cfg.Kafka.MaxRecordBytes+delivery.RecordOverhead)),
		kgo.ProducerBatchCompression(CompressionCodec(p.cfg.Kafka.Compression)),
		kgo.WithHooks(hooks),
		p.partitioner(),
	)
}

// newTxnClient returns a transactional producer with id, and loads its
// producer id: that fences any earlier producer with the same id and
// aborts its open transaction, so that what is read afterwards
// (read_committed) is final. It blocks until the broker answers or ctx
// ends.
func (p *Pipeline) newTxnClient(ctx context.Context, id string, hooks kgo.Hook) (*kgo.Client, error) {
	opts := append(p.producerOpts(hooks),
		kgo.TransactionalID(id),
		kgo.TransactionTimeout(p.cfg.Kafka.TransactionTimeout),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka transactional client %s: %w", id, err)
	}
	if _, _, err := cl.ProducerID(ctx); err != nil {
		cl.Close()
		return nil, delivery.TxnError(id, fmt.Errorf("initialize transactional producer %s: %w", id, err))
	}
	p.addProducer(cl)
	return cl, nil
}

// partitioner is franz-go's default, or placingPartitioner when outbox
// events may name their partition (delivery.PlacingPartitioner).
func (p *Pipeline) partitioner() kgo.Opt {
	if ob, _ := p.cfg.Format.SchemaOutbox(); ob != nil && ob.PlacesPartition() {
		return kgo.RecordPartitioner(delivery.PlacingPartitioner())
	}
	return kgo.RecordPartitioner(kgo.UniformBytesPartitioner(64<<10, true, true, nil))
}

// CompressionCodec maps a kafka.compression value to franz-go's codec
// (none for anything Validate would reject).
func CompressionCodec(name string) kgo.CompressionCodec {
	switch name {
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	default:
		return kgo.NoCompression()
	}
}

func (p *Pipeline) loadOffsets(ctx context.Context) (offsets.State, error) {
	cl, err := kgo.NewClient(append(slices.Clip(p.kafka), kgo.ClientID("mooncdc-"+p.cfg.Name+"-offsets"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))...)
	if err != nil {
		return offsets.State{}, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	st, err := offsets.Load(ctx, cl, p.cfg.Kafka.OffsetsTopic, p.cfg.Name)
	if err != nil {
		return st, fmt.Errorf("load offsets from topic %q: %w", p.cfg.Kafka.OffsetsTopic, err)
	}
	return st, nil
}

// prepareSource checks that the stored offsets belong to this Postgres
// source, makes sure the publication and slot exist, and returns the
// pipeline's offsets record with the LSN to resume at.
//
// dbz, when not nil, is a Debezium connector's offset to take over from at
// this first start (takeover.go). states writes the re-copy requests of a
// slot-loss repair (slotloss.go).
func (p *Pipeline) prepareSource(ctx context.Context, pgcfg *pgconn.Config, state offsets.State, dbz *offsets.DebeziumOffset, states *delivery.StateWriter) (offsets.Pipeline, error) {
	var out offsets.Pipeline
	err := fault.Retry(ctx, p.log, "connect to Postgres", func() error {
		var err error
		out, err = p.prepareSourceOnce(ctx, pgcfg, state, dbz, states)
		return err
	})
	return out, err
}

func (p *Pipeline) prepareSourceOnce(ctx context.Context, pgcfg *pgconn.Config, state offsets.State, dbz *offsets.DebeziumOffset, states *delivery.StateWriter) (offsets.Pipeline, error) {
	cfg := p.cfg
	slotName, pubName := cfg.Postgres.Slot, cfg.Postgres.Publication
	repl, err := pgsource.ConnectReplication(ctx, pgcfg)
	if err != nil {
		return offsets.Pipeline{}, err
	}
	defer repl.Close(context.Background())
	id, err := pgsource.Identify(ctx, repl)
	if err != nil {
		return offsets.Pipeline{}, err
	}
	db, err := pgsource.Dial(ctx, pgcfg)
	if err != nil {
		return offsets.Pipeline{}, err
	}
	defer db.Close(context.Background())
	var version int
	if err := db.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		return offsets.Pipeline{}, fmt.Errorf("read the server version: %w", err)
	}
	if err := pgsource.CheckServerVersion(version); err != nil {
		return offsets.Pipeline{}, err
	}
	if cfg.DDL.Capture {
		if err := pgsource.InstallDDLCapture(ctx, db); err != nil {
			p.log.Warn("ddl.capture: the DDL event trigger is not installed; schema-change records come from Relation messages only, without their DDL", zap.Error(err))
		} else {
			p.log.Info("ddl.capture: the DDL event trigger is installed")
		}
	}
	if cfg.Postgres.SlotFailover && version < 170000 {
		return offsets.Pipeline{}, &fault.CriticalError{Err: fmt.Errorf("postgres.slot_failover: failover slots need PostgreSQL 17 or later; this server is %d.%d: set postgres.slot_failover: false, or upgrade",
			version/10000, version%10000)}
	}
	slot, err := pgsource.LookupSlot(ctx, db, slotName)
	if err != nil {
		return offsets.Pipeline{}, err
	}
	if slot.Exists && cfg.Postgres.SlotFailover && !slot.Failover && !slot.Synced && slot.Type == "logical" {
		// Before streaming, while no walsender holds it.
		if err := pgsource.MakeFailoverSlot(ctx, repl, slotName); err != nil {
			return offsets.Pipeline{}, err
		}
		p.log.Info("replication slot made a failover slot (postgres.slot_failover)", zap.String("slot", slotName))
	}
	if slot.Exists && (slot.Plugin != "pgoutput" || slot.Type != "logical" || slot.Database != id.Database) {
		return offsets.Pipeline{}, &UnsafeResumeError{Reason: fmt.Sprintf(
			"replication slot %q exists but is a %s slot of plugin %q on database %q, not a pgoutput slot on %q: choose another postgres.slot, or drop that slot (SELECT pg_drop_replication_slot('%s')) if nothing else uses it",
			slotName, slot.Type, slot.Plugin, slot.Database, id.Database, slotName)}
	}
	if slot.Exists && slot.WALStatus == "lost" && (state.Pipeline == nil || !p.repairsSlotLoss(pgsource.ErrSlotLost)) {
		return offsets.Pipeline{}, p.slotLost(state.Pipeline, "")
	}
	if sp := state.Pipeline; sp != nil {
		startOver := p.startOver(false)
		switch {
		case sp.SystemID != id.SystemID || sp.Database != id.Database:
			return offsets.Pipeline{}, &UnsafeResumeError{Reason: fmt.Sprintf(
				"the offsets of connector %q were written for Postgres system %s, database %q, but postgres.url reaches system %s, database %q; if postgres.url is wrong, fix it; if the database was rebuilt or restored, %s",
				cfg.Name, sp.SystemID, sp.Database, id.SystemID, id.Database, startOver)}
		case sp.Slot != slotName:
			return offsets.Pipeline{}, &UnsafeResumeError{Reason: fmt.Sprintf(
				"the offsets of connector %q were written for slot %q, but postgres.slot is %q; set postgres.slot back, or %s",
				cfg.Name, sp.Slot, slotName, startOver)}
		case !slot.Exists && !p.repairsSlotLoss(pgsource.ErrSlotLost):
			return offsets.Pipeline{}, slotLostError(fmt.Sprintf(
				"replication slot %q is missing, but the offsets of connector %q say streaming reached LSN %s: the changes after it are gone from Postgres; %s (or set on_slot_loss: resnapshot)",
				slotName, cfg.Name, schema.LSN(sp.DurableLSN), p.startOver(false)))
		case !slot.Exists:
			return p.replaceLostSlot(ctx, repl, db, *sp, state.Tables, states, false, "missing")
		case slot.WALStatus == "lost":
			return p.replaceLostSlot(ctx, repl, db, *sp, state.Tables, states, true, "invalidated (wal_status lost)")
		}
		if err := p.ensurePublication(ctx, db); err != nil {
			return offsets.Pipeline{}, err
		}
		out := *sp
		out.Publication = pubName
		// Postgres never moves a slot backwards; the offsets may trail the
		// slot's confirmed position by up to the last write interval.
		if uint64(slot.ConfirmedFlush) > out.DurableLSN {
			out.DurableLSN = uint64(slot.ConfirmedFlush)
		}
		return out, nil
	}

	if dbz != nil {
		var pubExists bool
		if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)`, pubName).Scan(&pubExists); err != nil {
			return offsets.Pipeline{}, fmt.Errorf("look up publication %q: %w", pubName, err)
		}
		out, err := p.adoptDebezium(*dbz, id, slot, pubExists)
		if err != nil {
			return offsets.Pipeline{}, err
		}
		// Existing now, it only gains the tables selected since.
		return out, p.ensurePublication(ctx, db)
	}
	// The publication comes before the slot: pgoutput looks it up in the
	// catalog as of each decoded change, so it must exist from the slot's
	// first LSN on.
	if err := p.ensurePublication(ctx, db); err != nil {
		return offsets.Pipeline{}, err
	}
	out := offsets.Pipeline{SystemID: id.SystemID, Database: id.Database, Slot: slotName, Publication: pubName}
	if slot.Exists {
		p.log.Warn("adopting an existing replication slot: changes before its confirmed position are not streamed",
			zap.String("slot", slotName), zap.Stringer("lsn", slot.ConfirmedFlush))
		out.InitialLSN = uint64(slot.ConfirmedFlush)
	} else {
		lsn, err := pgsource.CreateSlot(ctx, repl, slotName, cfg.Postgres.SlotFailover)
		if err != nil {
			return offsets.Pipeline{}, err
		}
		p.log.Info("created replication slot", zap.String("slot", slotName), zap.Stringer("lsn", lsn))
		out.InitialLSN = uint64(lsn)
	}
	out.DurableLSN = out.InitialLSN
	return out, nil
}

// checkSlotStillThere turns a slot that vanished, or that Postgres
// invalidated, while mooncdc was streaming or reconnecting into an
// unsafe-resume error instead of endless retries or a bare server error.
// cause is the error the stream stopped with (its DETAIL is quoted), or nil.
func (p *Pipeline) checkSlotStillThere(ctx context.Context, pgcfg *pgconn.Config, cause error) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	db, err := pgsource.Dial(ctx, pgcfg)
	if err != nil {
		return err
	}
	defer db.Close(context.Background())
	slot, err := pgsource.LookupSlot(ctx, db, p.cfg.Postgres.Slot)
	if err != nil {
		return err
	}
	switch {
	case !slot.Exists:
		return slotLostError(fmt.Sprintf("replication slot %q was dropped while mooncdc was running: changes after the durable LSN are gone from Postgres; %s (or set on_slot_loss: resnapshot)",
			p.cfg.Postgres.Slot, p.startOver(false)))
	case slot.WALStatus == "lost":
		var pgErr *pgconn.PgError
		detail := ""
		if errors.As(cause, &pgErr) {
			detail = pgErr.Message
			if pgErr.Detail != "" {
				detail += ": " + pgErr.Detail
			}
		}
		return p.slotLost(nil, detail)
	}
	return nil
}

// startOver is the advice of every unsafe-resume message: the command
// that deletes this connector's offsets (and with dropSlot its slot), so
// that the next run starts over with a new snapshot under the same name
// and topics.
func (p *Pipeline) startOver(dropSlot bool) string {
	cmd := "mooncdc reset --config <your config>"
	if dropSlot {
		cmd += " --drop-slot"
	}
	return fmt.Sprintf("to start over with a new snapshot, stop every mooncdc of connector %q and run `%s` (it deletes the connector's offsets from topic %q%s; the data topics stay), then mooncdc run",
		p.cfg.Name, cmd, p.cfg.Kafka.OffsetsTopic, map[bool]string{true: " and drops the slot", false: ""}[dropSlot])
}

// slotLost is the unsafe-resume error for the pipeline's slot invalidated
// by Postgres (wal_status lost, e.g. past max_slot_wal_keep_size): the WAL
// after its position is gone, and no reconnect brings it back. detail is
// Postgres's own DETAIL, when an error carried one.
func (p *Pipeline) slotLost(sp *offsets.Pipeline, detail string) error {
	since := ""
	if sp != nil {
		since = fmt.Sprintf(" after LSN %s, where the offsets of connector %q stand,", schema.LSN(sp.DurableLSN), p.cfg.Name)
	}
	if detail != "" {
		detail = " (Postgres: " + strings.TrimSuffix(detail, ".") + ")"
	}
	return slotLostError(fmt.Sprintf("replication slot %q was invalidated (wal_status lost): Postgres removed WAL it still needed%s, so the changes%s are gone; "+
		"raise max_slot_wal_keep_size so that it does not happen again, and %s (or set on_slot_loss: resnapshot to have mooncdc do it)",
		p.cfg.Postgres.Slot, detail, since, p.startOver(true)))
}

// kafkaState logs the Kafka connection going down and coming back, once per
// change of state rather than once per failed dial.
type kafkaState struct {
	log  *zap.Logger
	sasl string // kafka.sasl.mechanism, for the hint on a closed connection
	down bool
	mu   chan struct{}
}

func newKafkaState(log *zap.Logger, saslMechanism string) *kafkaState {
	return &kafkaState{log: log.Named("kafka"), sasl: saslMechanism, mu: make(chan struct{}, 1)}
}

// OnBrokerConnect implements kgo.HookBrokerConnect.
func (k *kafkaState) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	k.mu <- struct{}{}
	defer func() { <-k.mu }()
	addr := net.JoinHostPort(meta.Host, fmt.Sprint(meta.Port))
	switch {
	case err != nil && !k.down:
		k.down = true
		msg := "Kafka unreachable; records stay buffered and Postgres waits once the buffer is full"
		if k.sasl != "" && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
			// Some brokers close the connection on failed authentication
			// instead of answering with SASL_AUTHENTICATION_FAILED.
			msg += "; the broker closed the connection during the " + k.sasl +
				" login: if it persists, check kafka.sasl.username and the password"
		}
		k.log.Warn(msg, zap.String("broker", addr), zap.Error(err))
	case err == nil && k.down:
		k.down = false
		k.log.Info("Kafka reachable again", zap.String("broker", addr))
	}
}
