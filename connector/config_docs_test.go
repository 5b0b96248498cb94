package connector

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestEveryConfigKeyIsDocumented keeps configDocs, the source of the
// configuration reference, in step with Config: a new key needs its
// description, a removed one takes its description along.
func TestEveryConfigKeyIsDocumented(t *testing.T) {
	missing, stale := undocumentedKeys()
	for _, k := range missing {
		t.Errorf("config key %s has no entry in configDocs (config_docs.go): say what it does there", k)
	}
	for _, k := range stale {
		t.Errorf("configDocs has an entry for %s, which is no config key", k)
	}
	for _, d := range ConfigReference() {
		if strings.TrimSpace(d.Doc) == "" || d.Default == "" {
			t.Errorf("%s: empty description or default", d.Path)
		}
	}
}

func TestConfigReferenceDefaults(t *testing.T) {
	want := map[string]string{
		"kafka.transaction_timeout":            "`15m`",
		"kafka.transaction_max_interval":       "`100ms`",
		"snapshot.discovery_interval":          "`10s`",
		"kafka.delivery":                       "`at-least-once`",
		"kafka.topic_replication_factor":       "`-1`",
		"format.skipped_operations":            "`[t]`",
		"format.message_key_columns":           "`{}`",
		"postgres.slot":                        "`mooncdc_<name>`",
		"postgres.url":                         "empty",
		"format.schema_registry.auto_register": "`true`",
	}
	got := map[string]ConfigKeyDoc{}
	for _, d := range ConfigReference() {
		got[d.Path] = d
	}
	for k, w := range want {
		if got[k].Default != w {
			t.Errorf("%s: default %q, want %q", k, got[k].Default, w)
		}
	}
	if f := got["postgres.tables"].EnvForm; f != "comma-separated" {
		t.Errorf("postgres.tables env form %q", f)
	}
	if f := got["format.column_mask"].EnvForm; !strings.HasPrefix(f, "YAML flow") {
		t.Errorf("format.column_mask env form %q", f)
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10 * time.Second: "10s", 15 * time.Minute: "15m", time.Hour: "1h", 90 * time.Second: "1m30s",
		100 * time.Millisecond: "100ms", 2*time.Hour + 30*time.Minute: "2h30m",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestMetricDefinitionsAreTheRegisteredFamilies keeps the metrics reference
// (generated from MetricDefinitions) true: every family a pipeline registers
// is defined there, with its labels, and nothing else is.
func TestMetricDefinitionsAreTheRegisteredFamilies(t *testing.T) {
	reg := prometheus.NewRegistry()
	var collectors []prometheus.Collector
	newMetricsIn(registerFunc(func(cs ...prometheus.Collector) { collectors = append(collectors, cs...); reg.MustRegister(cs...) }), func() float64 { return 0 })
	var descs []string
	for _, c := range collectors {
		ch := make(chan *prometheus.Desc, 4)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			descs = append(descs, d.String())
		}
	}
	defs := MetricDefinitions()
	if len(descs) != len(defs) {
		t.Errorf("%d families registered, %d defined", len(descs), len(defs))
	}
	for _, d := range defs {
		found := false
		for _, s := range descs {
			if strings.Contains(s, `fqName: "`+d.Name+`"`) {
				found = true
				labels := "variableLabels: {" + strings.Join(d.Labels, ",") + "}"
				if !strings.Contains(s, labels) {
					t.Errorf("%s: registered as %s, defined with labels %v", d.Name, s, d.Labels)
				}
			}
		}
		if !found {
			t.Errorf("%s is defined but not registered", d.Name)
		}
		if d.Kind != "counter" && d.Kind != "gauge" {
			t.Errorf("%s: kind %q", d.Name, d.Kind)
		}
		if strings.HasSuffix(d.Name, "_total") != (d.Kind == "counter") {
			t.Errorf("%s: a counter's name ends in _total, a gauge's does not", d.Name)
		}
	}
}

type registerFunc func(...prometheus.Collector)

func (f registerFunc) Register(c prometheus.Collector) error   { f(c); return nil }
func (f registerFunc) MustRegister(cs ...prometheus.Collector) { f(cs...) }
func (f registerFunc) Unregister(prometheus.Collector) bool    { return false }
