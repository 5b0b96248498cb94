package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
)

// This file is the worker group ("mooncdc run --config DIR"): several
// processes run the same directory of pipeline configs, and Kafka's group
// coordinator shares the pipelines among them. Every worker is a member of
// the consumer group mooncdc-workers-<group>, subscribed to one assignment
// topic per pipeline (mooncdc-pipeline-<name>, one partition, never
// written): the member given a pipeline's partition runs it, exactly as an
// active standby instance does (Standby, groupMember: the same seam, the
// same fencing by the slot and the transactional id epoch). The
// cooperative-sticky balancer spreads the partitions evenly and moves
// only what must move when a worker joins or leaves; a partition moves
// after its pipeline has stopped cleanly on the old worker (a revoke) or
// once the old worker's session has expired (a crash: its pipeline is then
// fenced as a standby's would be). The topic per pipeline, rather than a
// partition per pipeline of one topic, keeps a pipeline's unit named
// after it: adding or removing a file during a rolling change of the
// directory can never make two workers read one partition as different
// pipelines.

// DefaultWorkerGroup is the worker group's name when neither --group nor
// worker_group gives one.
const DefaultWorkerGroup = "default"

// WorkerGroupOf is the worker group of a directory's pipelines: their
// worker_group (CheckWorkerConfigs has made sure they agree; --group and
// MOONCDC_WORKER_GROUP set it in every one), else DefaultWorkerGroup.
func WorkerGroupOf(cfgs []config.Config) string {
	if len(cfgs) > 0 && cfgs[0].WorkerGroup != "" {
		return cfgs[0].WorkerGroup
	}
	return DefaultWorkerGroup
}

// WorkerGroup is the consumer group of the workers of group.
func WorkerGroup(group string) string { return "mooncdc-workers-" + group }

// PipelineTopic is the assignment topic of the pipeline named name.
func PipelineTopic(name string) string { return "mooncdc-pipeline-" + name }

// WorkerOptions are a worker's own settings, shared by its pipelines.
type WorkerOptions struct {
	Group          string        // the worker group; if empty, WorkerGroupOf the pipelines
	ID             string        // this worker's name in the group (client id): default host-pid
	Listen         string        // host:port of /metrics, /healthz, /readyz, /status; empty disables
	SessionTimeout time.Duration // the group session; 0: the longest ha.session_timeout of the pipelines
}

// Workers runs the pipelines of a config directory that the worker group
// gives this process. Build it with NewWorkers; it starts nothing until Run.
type Workers struct {
	opt   WorkerOptions
	cfgs  []config.Config
	seats []*Standby
	log   *zap.Logger
	reg   *prometheus.Registry
	ended chan *activation
}

// ConfigDirFiles lists the pipeline configs of dir: its *.yaml and *.yml
// files, sorted. An empty directory is a *ConfigError.
func ConfigDirFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &config.ConfigError{Err: fmt.Errorf("config directory: %w", err)}
	}
	var files []string
	for _, e := range ents {
		if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, &config.ConfigError{Err: fmt.Errorf("config directory %s: no pipeline files (*.yaml, *.yml)", dir)}
	}
	slices.Sort(files)
	return files, nil
}

// CheckWorkerConfigs checks what must hold across the pipelines of one
// worker group (each cfg validated on its own already; files[i] names
// cfgs[i] in the messages): names unique, a slot used by one pipeline per
// database, all on the same Kafka brokers (the group's), none on the
// embedded Kafka, one metrics.listen (a worker serves one endpoint) and
// one worker_group. "mooncdc run", "check" and "status" with --config
// DIR all apply it. Errors are *ConfigError.
func CheckWorkerConfigs(files []string, cfgs []config.Config) error {
	var errs []error
	names := map[string]string{}
	slots := map[string]string{}
	for i, c := range cfgs {
		f := files[i]
		if prev, ok := names[c.Name]; ok {
			errs = append(errs, fmt.Errorf("%s: name %q is also the name of %s (each pipeline needs its own name)", f, c.Name, prev))
		}
		names[c.Name] = f
		if err := config.CheckTopicName(PipelineTopic(c.Name)); err != nil {
			errs = append(errs, fmt.Errorf("%s: name %q: its assignment topic %s %v", f, c.Name, PipelineTopic(c.Name), err))
		}
		if pc, err := c.PostgresConnConfig(); err == nil {
			key := fmt.Sprintf("%s:%d/%s slot %s", pc.Host, pc.Port, pc.Database, c.Postgres.Slot)
			if prev, ok := slots[key]; ok {
				errs = append(errs, fmt.Errorf("%s: postgres.slot %q on the same database as %s (each pipeline needs its own slot)", f, c.Postgres.Slot, prev))
			}
			slots[key] = f
		}
		switch {
		case c.EmbeddedKafka():
			errs = append(errs, fmt.Errorf("%s: kafka.brokers is empty: a worker group needs a Kafka cluster (the embedded Kafka has no other worker to share with)", f))
		case i > 0 && !slices.Equal(c.Kafka.Brokers, cfgs[0].Kafka.Brokers):
			errs = append(errs, fmt.Errorf("%s: kafka.brokers %v differ from %s's %v (the pipelines of a worker group share its Kafka cluster)", f, c.Kafka.Brokers, files[0], cfgs[0].Kafka.Brokers))
		}
		if i > 0 && c.Metrics.Listen != cfgs[0].Metrics.Listen {
			errs = append(errs, fmt.Errorf("%s: metrics.listen %q differs from %s's %q (a worker serves one endpoint for all its pipelines; set it the same, or with --metrics-listen)",
				f, c.Metrics.Listen, files[0], cfgs[0].Metrics.Listen))
		}
		if i > 0 && c.WorkerGroup != cfgs[0].WorkerGroup {
			errs = append(errs, fmt.Errorf("%s: worker_group %s differs from %s's %s (the pipelines of a directory form one worker group; set it the same in every file, or with --group)",
				f, groupOrDefault(c.WorkerGroup), files[0], groupOrDefault(cfgs[0].WorkerGroup)))
		}
	}
	if len(errs) > 0 {
		return &config.ConfigError{Err: errors.Join(errs...)}
	}
	return nil
}

// groupOrDefault quotes a worker_group for a message, saying what empty
// means.
func groupOrDefault(g string) string {
	if g == "" {
		return fmt.Sprintf("unset (%q)", DefaultWorkerGroup)
	}
	return fmt.Sprintf("%q", g)
}

// NewWorkers validates the pipelines (each, and across them with
// CheckWorkerConfigs; files names them, or nil) and returns a worker ready
// to Run. It does no I/O. The pipelines' metrics.listen (one for all) and
// ha keys are not used: the worker serves one endpoint (opt.Listen) and
// its group replaces standby instances.
func NewWorkers(cfgs []config.Config, files []string, opt WorkerOptions, log *zap.Logger) (*Workers, error) {
	if len(cfgs) == 0 {
		return nil, &config.ConfigError{Err: errors.New("a worker group needs at least one pipeline")}
	}
	if files == nil {
		for _, c := range cfgs {
			files = append(files, "pipeline "+c.Name)
		}
	}
	if log == nil {
		log = zap.NewNop()
	}
	var errs []error
	for i := range cfgs {
		cfgs[i].ApplyDefaults()
		if err := cfgs[i].Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", files[i], err))
		}
	}
	if len(errs) > 0 {
		return nil, &config.ConfigError{Err: errors.Join(errs...)}
	}
	if err := CheckWorkerConfigs(files, cfgs); err != nil {
		return nil, err
	}
	if opt.Group == "" {
		opt.Group = WorkerGroupOf(cfgs)
	}
	if opt.ID == "" {
		host, _ := os.Hostname()
		opt.ID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	for _, c := range cfgs {
		opt.SessionTimeout = max(opt.SessionTimeout, c.HA.SessionTimeout)
	}
	w := &Workers{opt: opt, cfgs: cfgs, log: log.Named("workers"), reg: prometheus.NewRegistry(), ended: make(chan *activation, len(cfgs))}
	w.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for i, c := range cfgs {
		c.Metrics.Listen = ""
		plog := log.With(zap.String("pipeline", c.Name))
		reg := prometheus.WrapRegistererWith(prometheus.Labels{"pipeline": c.Name}, w.reg)
		s, err := newSeat(c, plog.Named("workers"), plog, WorkerGroup(opt.Group), reg, w.ended)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", files[i], err)
		}
		w.seats = append(w.seats, s)
	}
	return w, nil
}

// Run joins the worker group and runs each pipeline the group gives this
// worker, until ctx is done (every running pipeline stops cleanly, then
// the worker leaves, so that the others take its pipelines over at once)
// or a pipeline stops by itself (a critical error, a fence, snapshot.mode
// initial_only done): the worker then stops the others cleanly and
// returns that pipeline's error, as a lone instance would, and its
// pipelines move to the other workers. It blocks and owns every goroutine
// it starts.
func (w *Workers) Run(ctx context.Context) error {
	if w.opt.Listen != "" {
		srv, err := serveHTTP(w.opt.Listen, w.reg, w.ready, w.serveStatus, w.log)
		if err != nil {
			return err
		}
		defer srv.Close()
	}
	base, err := w.cfgs[0].KafkaOpts(w.cfgs[0].Kafka.Brokers)
	if err != nil {
		return err
	}
	if err := w.ensureTopics(ctx, base); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	g := &groupMember{group: WorkerGroup(w.opt.Group), clientID: w.opt.ID, seats: map[string]*Standby{}, log: w.log}
	var shutdown time.Duration
	for i, s := range w.seats {
		g.seats[PipelineTopic(w.cfgs[i].Name)] = s
		shutdown = max(shutdown, w.cfgs[i].ShutdownTimeout)
	}
	held, stopHold := g.holdInBackground(base, w.opt.SessionTimeout, shutdown)
	w.log.Info("joining the worker group; the pipelines given to this worker run here",
		zap.String("group", g.group), zap.String("worker", w.opt.ID), zap.Int("pipelines", len(w.seats)), zap.Duration("session_timeout", w.opt.SessionTimeout))
	var result error
	select {
	case <-ctx.Done():
	case a := <-w.ended:
		result = a.err
		w.log.Error("a pipeline stopped by itself; stopping this worker", zap.String("pipeline", a.p.cfg.Name), zap.Error(a.err))
	case err := <-held: // the group client could not be built
		return err
	}
	errs := make([]error, len(w.seats))
	g.each(w.seats, func(s *Standby) {
		i := slices.Index(w.seats, s)
		errs[i] = s.close()
	})
	stopHold()
	if result == nil {
		result = errors.Join(errs...)
	}
	return result
}

// ensureTopics creates the pipelines' assignment topics (one partition:
// the unit the group assigns) where missing.
func (w *Workers) ensureTopics(ctx context.Context, base []kgo.Opt) error {
	cl, err := kgo.NewClient(base...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var topics []string
	for _, c := range w.cfgs {
		topics = append(topics, PipelineTopic(c.Name))
	}
	rf := int16(w.cfgs[0].Kafka.TopicReplicationFactor)
	return fault.Retry(ctx, w.log, "prepare the assignment topics", func() error {
		resp, err := adm.CreateTopics(ctx, 1, rf, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, topics...)
		if err != nil {
			return err
		}
		for _, r := range resp.Sorted() {
			if r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists) {
				return fmt.Errorf("create assignment topic %s: %w", r.Topic, r.Err)
			}
		}
		return nil
	})
}

// Active is the names of the pipelines running on this worker, sorted.
// Safe from any goroutine.
func (w *Workers) Active() []string {
	var out []string
	for i, s := range w.seats {
		if s.current.Load() != nil {
			out = append(out, w.cfgs[i].Name)
		}
	}
	return out
}

// Pipeline is the seat of the pipeline named name (nil if it is not one of
// this worker's configs): its Role, Streaming, TablePhases.
func (w *Workers) Pipeline(name string) *Standby {
	for i, s := range w.seats {
		if w.cfgs[i].Name == name {
			return s
		}
	}
	return nil
}

// Copies returns the running copies of every pipeline on this worker.
func (w *Workers) Copies() []CopyProgress {
	var out []CopyProgress
	for _, s := range w.seats {
		out = append(out, s.Copies()...)
	}
	return out
}

// ready is /readyz: 200 while this worker is a member of its group (with
// the number of pipelines it runs), 503 before it has joined and after its
// membership was lost.
func (w *Workers) ready() (bool, string) {
	if !w.seats[0].member.Load() {
		return false, "not in the group " + WorkerGroup(w.opt.Group)
	}
	return true, fmt.Sprintf("worker: %d of %d pipelines here", len(w.Active()), len(w.seats))
}

// WorkerStatus is a worker's /status: which pipelines run here, each
// with its live status.
type WorkerStatus struct {
	Worker    string       `json:"worker"`
	Group     string       `json:"group"`
	Pipelines []LiveStatus `json:"pipelines"`
	Time      time.Time    `json:"time"`
}

func (w *Workers) serveStatus(rw http.ResponseWriter, _ *http.Request) {
	st := WorkerStatus{Worker: w.opt.ID, Group: WorkerGroup(w.opt.Group), Pipelines: []LiveStatus{}, Time: time.Now().UTC()}
	for _, s := range w.seats {
		if p := s.current.Load(); p != nil {
			ps := p.Status()
			ps.Role = RoleActive
			st.Pipelines = append(st.Pipelines, ps)
		}
	}
	rw.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(rw)
	enc.SetIndent("", "  ")
	_ = enc.Encode(st)
}

// Assignment is which worker of a group runs a pipeline, as the group
// coordinator says.
type Assignment struct {
	Pipeline string `json:"pipeline"`
	Worker   string `json:"worker"` // the member's client id; "" while no member has it
	Host     string `json:"host,omitempty"`
}

// WorkerAssignment asks the group coordinator of cl's cluster which
// member of the worker group holds each of names' assignment topics. It
// only reads (DescribeGroups) and blocks until the answer or ctx's end.
func WorkerAssignment(ctx context.Context, cl *kgo.Client, group string, names []string) ([]Assignment, error) {
	gid := WorkerGroup(group)
	described, err := kadm.NewClient(cl).DescribeGroups(ctx, gid)
	if err != nil {
		return nil, fmt.Errorf("describe group %s: %w", gid, err)
	}
	dg, ok := described[gid]
	if !ok {
		return nil, fmt.Errorf("describe group %s: no answer", gid)
	}
	if dg.Err != nil {
		return nil, fmt.Errorf("describe group %s: %w", gid, dg.Err)
	}
	holder := map[string]Assignment{}
	for _, m := range dg.Members {
		ca, ok := m.Assigned.AsConsumer()
		if !ok {
			continue
		}
		for _, t := range ca.Topics {
			if slices.Contains(t.Partitions, 0) {
				holder[t.Topic] = Assignment{Worker: m.ClientID, Host: m.ClientHost}
			}
		}
	}
	out := make([]Assignment, 0, len(names))
	for _, n := range names {
		a := holder[PipelineTopic(n)]
		a.Pipeline = n
		out = append(out, a)
	}
	return out, nil
}
