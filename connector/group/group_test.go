package group

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
)

// TestRebalanceTimeoutOutlastsARevokesCleanStop: a member rejoins only
// once its revoke callback has returned, after its pipelines stopped
// (deactivate: shutdown_timeout, then stopGrace, then an abort). If the
// coordinator's rebalance timeout were shorter, it would evict the member
// and give its seats to another while the old pipelines still write. For
// every shutdown_timeout the config accepts (1s to 1h), it is longer.
func TestRebalanceTimeoutOutlastsARevokesCleanStop(t *testing.T) {
	for _, shutdown := range []time.Duration{time.Second, 10 * time.Second, config.DefaultShutdownTimeout, 45 * time.Second, time.Minute, 10 * time.Minute, time.Hour} {
		rt := rebalanceTimeout(shutdown)
		if stop := shutdown + stopGrace; rt <= stop {
			t.Errorf("shutdown_timeout %v: rebalance timeout %v, not longer than a revoke's longest stop %v", shutdown, rt, stop)
		}
		if rt < time.Minute {
			t.Errorf("shutdown_timeout %v: rebalance timeout %v, under kgo's default of a minute", shutdown, rt)
		}
	}
}

// TestHeartbeatIntervalIsATenthOfTheSessionWithinBounds: the interval
// the member asks kgo for, at the edges of its bounds.
func TestHeartbeatIntervalIsATenthOfTheSessionWithinBounds(t *testing.T) {
	for _, c := range []struct{ session, want time.Duration }{
		{time.Second, 100 * time.Millisecond}, // the config's shortest session
		{500 * time.Millisecond, 100 * time.Millisecond},
		{6 * time.Second, 600 * time.Millisecond},
		{config.DefaultHASessionTimeout, time.Second},
		{30 * time.Second, 3 * time.Second},
		{30 * time.Minute, 3 * time.Second}, // the config's longest session
	} {
		if got := heartbeatInterval(c.session); got != c.want {
			t.Errorf("heartbeatInterval(%v) = %v, want %v", c.session, got, c.want)
		}
	}
}

// TestLeaseLapsesOnlyPastItsLength: lapsed is strict at the boundary,
// never true before the first answer, and not true for a renewal that
// the clock puts after now (since < 0).
func TestLeaseLapsesOnlyPastItsLength(t *testing.T) {
	const session = 10 * time.Second
	l := newLease(session)
	if want := session - 2*time.Second; l.length != want {
		t.Fatalf("lease of a %v session is %v long, want %v", session, l.length, want)
	}
	at := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		name    string
		renewed time.Time // zero: never answered
		now     time.Time
		want    bool
	}{
		{"never answered, an hour on", time.Time{}, at.Add(time.Hour), false},
		{"just renewed", at, at, false},
		{"exactly its length after", at, at.Add(l.length), false},
		{"a nanosecond past its length", at, at.Add(l.length + 1), true},
		{"a session after", at, at.Add(session), true},
		{"renewed after now (clocks)", at, at.Add(-time.Second), false},
	} {
		if c.renewed.IsZero() {
			l.renewed.Store(0)
		} else {
			l.renewed.Store(c.renewed.UnixNano())
		}
		got, since := l.lapsed(c.now)
		if got != c.want {
			t.Errorf("%s: lapsed = %v (since %v), want %v", c.name, got, since, c.want)
		}
		if !c.renewed.IsZero() && since != c.now.Sub(c.renewed) {
			t.Errorf("%s: since = %v, want %v", c.name, since, c.now.Sub(c.renewed))
		}
	}
}

// TestHeldIsTheSeatsWhosePartitionZeroIsInTheAssignment: a seat is held
// only through partition 0 of its own topic; other partitions and topics
// that are not seats start nothing.
func TestHeldIsTheSeatsWhosePartitionZeroIsInTheAssignment(t *testing.T) {
	a, b := &Standby{group: "a"}, &Standby{group: "b"}
	g := &groupMember{seats: map[string]*Standby{"mooncdc-pipeline-a": a, "mooncdc-pipeline-b": b}}
	for _, c := range []struct {
		name string
		m    map[string][]int32
		want []*Standby
	}{
		{"nothing", nil, nil},
		{"one seat", map[string][]int32{"mooncdc-pipeline-a": {0}}, []*Standby{a}},
		{"another partition of a seat's topic", map[string][]int32{"mooncdc-pipeline-a": {1}}, nil},
		{"a topic that is no seat", map[string][]int32{"mooncdc-pipeline-c": {0}}, nil},
		{"both, one with more partitions", map[string][]int32{"mooncdc-pipeline-a": {0}, "mooncdc-pipeline-b": {2, 0}}, []*Standby{a, b}},
		{"an empty list", map[string][]int32{"mooncdc-pipeline-a": {}}, nil},
	} {
		got := g.held(c.m)
		if len(got) != len(c.want) {
			t.Errorf("%s: held %d seats, want %d", c.name, len(got), len(c.want))
			continue
		}
		for _, s := range c.want {
			if !slices.Contains(got, s) {
				t.Errorf("%s: seat %s not held", c.name, s.group)
			}
		}
	}
}

// seatForTest is a Standby that has not been activated: no pipeline,
// nothing to stop. Enough for the membership's decisions.
func seatForTest(name string) *Standby {
	cfg := config.DefaultConfig()
	cfg.Name = name
	return &Standby{cfg: cfg, log: zap.NewNop(), group: "mooncdc-" + name}
}

// TestMembershipDecidesTheRoleAndIgnoresADroppedClient: an assignment
// (even of nothing) makes every seat a standby, a loss makes every seat
// leave the group, and once a client's membership is dropped (its lease
// lapsed; a new client joins) its late callbacks change nothing: they
// could otherwise mark seats of the new membership, or stop them.
func TestMembershipDecidesTheRoleAndIgnoresADroppedClient(t *testing.T) {
	ctx := context.Background()
	type step struct {
		do   string // assign, lose, drop, revoke
		want string // every seat's Role after it
	}
	for _, c := range []struct {
		name  string
		seats int
		steps []step
	}{
		{"a standby instance joins", 1, []step{{"", ""}, {"assign", connector.RoleStandby}}},
		{"joins, then loses the session", 1, []step{{"assign", connector.RoleStandby}, {"lose", ""}}},
		{"a worker of three pipelines, nothing assigned", 3, []step{{"assign", connector.RoleStandby}, {"revoke", connector.RoleStandby}}},
		{"dropped before its first assignment", 1, []step{{"drop", ""}, {"assign", ""}}},
		{"dropped, then a late loss", 2, []step{{"assign", connector.RoleStandby}, {"drop", connector.RoleStandby}, {"lose", connector.RoleStandby}}},
	} {
		g := &groupMember{group: "mooncdc-test", seats: map[string]*Standby{}, log: zap.NewNop()}
		for i := range c.seats {
			name := string(rune('a' + i))
			g.seats[PipelineTopic(name)] = seatForTest(name)
		}
		m := &membership{g: g, lease: newLease(config.DefaultHASessionTimeout)}
		for _, st := range c.steps {
			switch st.do {
			case "assign":
				m.onAssigned(ctx, nil, map[string][]int32{})
			case "lose":
				m.onLost(ctx, nil, nil)
			case "drop":
				m.drop()
			case "revoke":
				m.onRevoked(ctx, nil, map[string][]int32{})
			}
			for topic, s := range g.seats {
				if got := s.Role(); got != st.want {
					t.Errorf("%s: after %q, seat %s is %q, want %q", c.name, st.do, topic, got, st.want)
				}
				if s.activeNow() {
					t.Errorf("%s: after %q, seat %s runs a pipeline; nothing was assigned", c.name, st.do, topic)
				}
			}
		}
	}
}

// TestReadinessOfASeatAndAWorker: /readyz of a standby instance is 200
// "standby" while it is in the group (a probe that failed healthy
// standbys would stall a rolling update), 503 outside it, and while its
// seat's pipeline is active, that pipeline's own answer (503 until it
// streams); a worker's is 200 while it is in the group, with the count of
// pipelines it runs.
func TestReadinessOfASeatAndAWorker(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Name = "ready"
	cfg.Postgres.URL = "postgres://u@h/db"
	cfg.Kafka.Brokers = []string{"k:9092"}
	p, err := connector.New(cfg, nil) // no I/O: it never runs
	if err != nil {
		t.Fatal(err)
	}
	s := seatForTest("ready")
	w := &Workers{opt: WorkerOptions{Group: "g"}, cfgs: []config.Config{s.cfg, cfg}, seats: []*Standby{s, seatForTest("other")}}
	for _, c := range []struct {
		name              string
		member            bool
		active            *connector.Pipeline
		wantOK            bool
		wantWord, wantWkr string
		wantRole          string
	}{
		{"not joined", false, nil, false, "not in the group mooncdc-ready", "not in the group mooncdc-workers-g", ""},
		{"a standby in the group", true, nil, true, "standby", "worker: 0 of 2 pipelines here", connector.RoleStandby},
		{"active, not streaming yet", true, p, false, "not streaming", "worker: 1 of 2 pipelines here", connector.RoleActive},
	} {
		s.member.Store(c.member)
		w.seats[1].member.Store(c.member)
		s.current.Store(c.active)
		ok, word := s.ready()
		if ok != c.wantOK || word != c.wantWord {
			t.Errorf("%s: standby /readyz = %v %q, want %v %q", c.name, ok, word, c.wantOK, c.wantWord)
		}
		if got := s.Role(); got != c.wantRole {
			t.Errorf("%s: Role = %q, want %q", c.name, got, c.wantRole)
		}
		wok, wword := w.ready()
		if wok != c.member || wword != c.wantWkr {
			t.Errorf("%s: worker /readyz = %v %q, want %v %q", c.name, wok, wword, c.member, c.wantWkr)
		}
		if got, want := w.Active(), map[bool][]string{true: {"ready"}}[c.active != nil]; !slices.Equal(got, want) {
			t.Errorf("%s: worker's active pipelines %v, want %v", c.name, got, want)
		}
	}
}

// TestGroupAndTopicNames: the names other tools see (kafka-consumer-groups,
// mooncdc status, ACLs an operator grants) are a contract.
func TestGroupAndTopicNames(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{StandbyGroup("orders"), "mooncdc-orders"},
		{WorkerGroup("prod"), "mooncdc-workers-prod"},
		{WorkerGroup(DefaultWorkerGroup), "mooncdc-workers-default"},
		{PipelineTopic("orders"), "mooncdc-pipeline-orders"},
		{WorkerGroupOf(nil), DefaultWorkerGroup},
		{WorkerGroupOf([]config.Config{{}, {WorkerGroup: "b"}}), DefaultWorkerGroup},
		{WorkerGroupOf([]config.Config{{WorkerGroup: "a"}, {WorkerGroup: "a"}}), "a"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestCheckWorkerConfigsNamesTheFileOfEveryConflict: what must hold across
// the pipelines of one worker group, each conflict reported against the
// later file with the earlier one named, all of them at once, as a
// *config.ConfigError.
func TestCheckWorkerConfigsNamesTheFileOfEveryConflict(t *testing.T) {
	base := func(name string) config.Config {
		c := config.DefaultConfig()
		c.Name = name
		c.Postgres.URL = "postgres://u@h:5432/db"
		c.Kafka.Brokers = []string{"k1:9092", "k2:9092"}
		c.ApplyDefaults()
		return c
	}
	for _, c := range []struct {
		name  string
		other func(c *config.Config) // applied to b.yaml's config
		first func(c *config.Config) // applied to a.yaml's, if set
		want  []string               // substrings of the error; none: no error
	}{
		{name: "distinct pipelines", other: func(*config.Config) {}},
		{name: "the same name", other: func(c *config.Config) { c.Name = "a" },
			want: []string{`b.yaml: name "a" is also the name of a.yaml (each pipeline needs its own name)`}},
		{name: "the same slot on the same database", other: func(c *config.Config) { c.Postgres.Slot = "mooncdc_a" },
			want: []string{`b.yaml: postgres.slot "mooncdc_a" on the same database as a.yaml`}},
		{name: "the same slot on another database", other: func(c *config.Config) {
			c.Postgres.Slot = "mooncdc_a"
			c.Postgres.URL = "postgres://u@h:5432/other"
		}},
		{name: "the same slot on another server", other: func(c *config.Config) {
			c.Postgres.Slot = "mooncdc_a"
			c.Postgres.URL = "postgres://u@h2:5432/db"
		}},
		{name: "the embedded Kafka", other: func(c *config.Config) { c.Kafka.Brokers = nil },
			want: []string{"b.yaml: kafka.brokers is empty: a worker group needs a Kafka cluster"}},
		{name: "other brokers", other: func(c *config.Config) { c.Kafka.Brokers = []string{"k1:9092"} },
			want: []string{"b.yaml: kafka.brokers [k1:9092] differ from a.yaml's [k1:9092 k2:9092]"}},
		{name: "brokers in another order", other: func(c *config.Config) { c.Kafka.Brokers = []string{"k2:9092", "k1:9092"} },
			want: []string{"b.yaml: kafka.brokers [k2:9092 k1:9092] differ from a.yaml's"}},
		{name: "another metrics.listen", other: func(c *config.Config) { c.Metrics.Listen = ":9999" },
			want: []string{`b.yaml: metrics.listen ":9999" differs from a.yaml's`}},
		{name: "another worker_group", other: func(c *config.Config) { c.WorkerGroup = "prod" },
			want: []string{`b.yaml: worker_group "prod" differs from a.yaml's unset ("default")`}},
		{name: "worker_group set in the first only", first: func(c *config.Config) { c.WorkerGroup = "prod" }, other: func(*config.Config) {},
			want: []string{`b.yaml: worker_group unset ("default") differs from a.yaml's "prod"`}},
		{name: "a name too long for its assignment topic", other: func(c *config.Config) { c.Name = strings.Repeat("n", 240) },
			want: []string{"b.yaml: name \"" + strings.Repeat("n", 240) + "\": its assignment topic mooncdc-pipeline-"}},
		{name: "three conflicts at once", other: func(c *config.Config) {
			c.Name = "a"
			c.Kafka.Brokers = nil
			c.Metrics.Listen = ":1"
		}, want: []string{"b.yaml: name", "b.yaml: kafka.brokers is empty", "b.yaml: metrics.listen"}},
	} {
		a, b := base("a"), base("b")
		if c.first != nil {
			c.first(&a)
		}
		c.other(&b)
		err := CheckWorkerConfigs([]string{"a.yaml", "b.yaml"}, []config.Config{a, b})
		if len(c.want) == 0 {
			if err != nil {
				t.Errorf("%s: %v, want no error", c.name, err)
			}
			continue
		}
		var ce *config.ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: %v (%T), want a *config.ConfigError", c.name, err, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant it to contain %q", c.name, err, w)
			}
		}
		if strings.Contains(err.Error(), "a.yaml: ") {
			t.Errorf("%s: %v: blames the first file", c.name, err)
		}
	}
}

// TestConfigDirFilesListsThePipelineFilesSorted: a directory's *.yaml and
// *.yml files are its pipelines, in name order; anything else (other
// extensions, directories) is not; no pipeline file at all, or no
// directory, is a *config.ConfigError that names the directory.
func TestConfigDirFilesListsThePipelineFilesSorted(t *testing.T) {
	for _, c := range []struct {
		name    string
		files   []string // to create; a trailing "/" makes a directory
		want    []string
		wantErr string
	}{
		{name: "yaml and yml, sorted", files: []string{"b.yml", "a.yaml", "c.yaml"}, want: []string{"a.yaml", "b.yml", "c.yaml"}},
		{name: "others left out", files: []string{"a.yaml", "README.md", "a.yaml.bak", "x.json", "sub.yaml/"}, want: []string{"a.yaml"}},
		{name: "empty", wantErr: "no pipeline files (*.yaml, *.yml)"},
		{name: "only other files", files: []string{"notes.txt", "dir.yml/"}, wantErr: "no pipeline files (*.yaml, *.yml)"},
	} {
		dir := t.TempDir()
		for _, f := range c.files {
			var err error
			if d, ok := strings.CutSuffix(f, "/"); ok {
				err = os.Mkdir(filepath.Join(dir, d), 0o700)
			} else {
				err = os.WriteFile(filepath.Join(dir, f), nil, 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		got, err := ConfigDirFiles(dir)
		if c.wantErr != "" {
			var ce *config.ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), dir) {
				t.Errorf("%s: %v (%T), want a *config.ConfigError naming %s: %q", c.name, err, err, dir, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for i := range c.want {
			c.want[i] = filepath.Join(dir, c.want[i])
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	_, err := ConfigDirFiles(filepath.Join(t.TempDir(), "missing"))
	var ce *config.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "config directory") {
		t.Errorf("a missing directory: %v (%T), want a *config.ConfigError about the config directory", err, err)
	}
}
