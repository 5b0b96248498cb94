package composetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
)

const dashboardPath = "deploy/grafana/mooncdc.json"

// dashboardNeeds are metrics the dashboard must show (issue 6).
var dashboardNeeds = []string{
	"mooncdc_changes_written_total",
	"mooncdc_transactions_durable_total",
	"mooncdc_replication_lag_bytes",
	"mooncdc_durable_lsn",
	"mooncdc_table_copy_rows_total",
	"mooncdc_table_copy_duration_seconds",
	"mooncdc_streaming",
	"mooncdc_worker_errors_total",
	"mooncdc_inflight_bytes",
	"mooncdc_kafka_transactions_total",
}

type dashboard struct {
	Title         string  `json:"title"`
	UID           string  `json:"uid"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Inputs        []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Datasource *datasource     `json:"datasource"`
			Query      json.RawMessage `json:"query"` // a string or {"query": ...}
		} `json:"list"`
	} `json:"templating"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *datasource `json:"datasource"`
	GridPos    *struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		Expr       string      `json:"expr"`
		RefID      string      `json:"refId"`
		Datasource *datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's panels
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, dashboardPath))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	return d
}

// allPanels flattens rows.
func allPanels(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

// exportedMetrics returns the names a Prometheus server stores for
// mooncdc's registry: every collector of connector.Metrics (vectors
// included, even before they have a child) and what the registry gathers
// (the Go and process collectors), with the _sum/_count/_bucket series of
// summaries and histograms.
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	cfg := config.DefaultConfig()
	cfg.Name = "dashboard"
	cfg.Postgres.URL = "postgres://mooncdc@localhost:5432/shop"
	cfg.Kafka.Brokers = []string{"localhost:9092"}
	p, err := connector.New(cfg, nil)
	if err != nil {
		t.Fatalf("connector.New: %v", err)
	}
	m := p.Metrics()
	names := map[string]bool{}

	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	collectorType := reflect.TypeFor[prometheus.Collector]()
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.Type().Implements(collectorType) || f.IsNil() {
			continue
		}
		ch := make(chan *prometheus.Desc, 16)
		go func() { f.Interface().(prometheus.Collector).Describe(ch); close(ch) }()
		for d := range ch {
			mm := fqName.FindStringSubmatch(d.String())
			if mm == nil {
				t.Fatalf("Metrics.%s: no fqName in %s", v.Type().Field(i).Name, d)
			}
			names[mm[1]] = true
		}
	}

	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, mf := range families {
		names[mf.GetName()] = true
		switch mf.GetType().String() { // client_model's dto.MetricType, not a direct dependency
		case "SUMMARY":
			names[mf.GetName()+"_sum"], names[mf.GetName()+"_count"] = true, true
		case "HISTOGRAM", "GAUGE_HISTOGRAM":
			names[mf.GetName()+"_sum"], names[mf.GetName()+"_count"], names[mf.GetName()+"_bucket"] = true, true, true
		}
	}
	for _, want := range []string{"mooncdc_table_copy_rows_total", "mooncdc_kafka_transactions_total", "go_goroutines", "process_resident_memory_bytes"} {
		if !names[want] {
			t.Fatalf("exportedMetrics misses %s: fix the test's collection of names", want)
		}
	}
	return names
}

// PromQL words that are not metric names where they stand without "(".
var promqlKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"inf": true, "nan": true,
}

var (
	promqlString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promqlMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promqlRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promqlLabels   = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlVariable = regexp.MustCompile(`\$\{?\w+(:\w+)?\}?`)
	promqlIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
)

// metricNames returns the metric names a PromQL expression (or a Grafana
// label_values(...) query) selects: identifiers that are not functions,
// keywords, label names, strings, ranges or dashboard variables.
func metricNames(expr string) []string {
	s := promqlString.ReplaceAllString(expr, `""`)
	s = promqlVariable.ReplaceAllString(s, " ")
	s = promqlMatchers.ReplaceAllString(s, " ")
	s = promqlRange.ReplaceAllString(s, " ")
	s = promqlLabels.ReplaceAllString(s, " ")
	if inner, ok := strings.CutPrefix(strings.TrimSpace(s), "label_values("); ok {
		s, _, _ = strings.Cut(inner, ",") // label_values(metric, label)
	}
	var out []string
	for _, loc := range promqlIdent.FindAllStringIndex(s, -1) {
		word := s[loc[0]:loc[1]]
		rest := strings.TrimLeft(s[loc[1]:], " \t\n")
		if strings.HasPrefix(rest, "(") || promqlKeywords[strings.ToLower(word)] {
			continue
		}
		if loc[0] > 0 && (s[loc[0]-1] >= '0' && s[loc[0]-1] <= '9' || s[loc[0]-1] == '.') {
			continue // a number's exponent or suffix, e.g. 1e3
		}
		if !slices.Contains(out, word) {
			out = append(out, word)
		}
	}
	return out
}

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`sum by (instance) (rate(mooncdc_changes_written_total{instance=~"$instance"}[$__rate_interval]))`, []string{"mooncdc_changes_written_total"}},
		{`max(time() - max_over_time(timestamp(changes(a{x="y"}[1m]) > 0)[6h:1m]) and on (instance) (b > 0))`, []string{"a", "b"}},
		{`x / on(job) group_left(le) y * 1e3 offset 5m`, []string{"x", "y"}},
		{`label_values(mooncdc_streaming, instance)`, []string{"mooncdc_streaming"}},
		{`label_replace(up, "dst", "$1", "src", "(.*)")`, []string{"up"}},
		{`sum without (table) (increase(c_total[1h]))`, []string{"c_total"}},
	} {
		if got := metricNames(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("metricNames(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

var counterFuncs = regexp.MustCompile(`\b(rate|irate|increase|resets)\s*\(`)

// counterArgs returns the metric names inside rate()/irate()/increase()/
// resets() calls: those need counters.
func counterArgs(expr string) []string {
	var out []string
	for _, loc := range counterFuncs.FindAllStringIndex(expr, -1) {
		depth, end := 0, len(expr)
		for i := loc[1] - 1; i < len(expr); i++ {
			if expr[i] == '(' {
				depth++
			} else if expr[i] == ')' {
				if depth--; depth == 0 {
					end = i
					break
				}
			}
		}
		out = append(out, metricNames(expr[loc[1]:end])...)
	}
	return out
}

func TestDashboard(t *testing.T) {
	d := loadDashboard(t)
	if d.Title == "" || d.UID == "" {
		t.Errorf("%s: title and uid must be set", dashboardPath)
	}
	if d.SchemaVersion < 36 || d.SchemaVersion > 41 {
		t.Errorf("%s: schemaVersion %d; use 39 (Grafana 10.4/11)", dashboardPath, d.SchemaVersion)
	}
	if !slices.ContainsFunc(d.Inputs, func(in struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	}) bool {
		return in.Name == "DS_PROMETHEUS" && in.Type == "datasource" && in.PluginID == "prometheus"
	}) {
		t.Errorf("%s: no __inputs entry DS_PROMETHEUS (type datasource, pluginId prometheus); import would not ask for the data source", dashboardPath)
	}

	const dsUID = "${DS_PROMETHEUS}"
	ids := map[int]string{}
	exprs := map[string][]string{} // where → expressions
	for _, p := range allPanels(d.Panels) {
		where := "panel " + p.Title
		if prev, dup := ids[p.ID]; dup {
			t.Errorf("%s: %s and panel %s share id %d; panel ids must be unique", dashboardPath, where, prev, p.ID)
		}
		ids[p.ID] = p.Title
		if p.GridPos == nil || p.GridPos.W == 0 || p.GridPos.H == 0 {
			t.Errorf("%s: %s has no gridPos", dashboardPath, where)
		}
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: %s has no targets", dashboardPath, where)
		}
		for _, tg := range p.Targets {
			ds := tg.Datasource
			if ds == nil {
				ds = p.Datasource
			}
			if ds == nil || ds.UID != dsUID {
				t.Errorf("%s: %s target %s: datasource uid must be %q, the import input", dashboardPath, where, tg.RefID, dsUID)
			}
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("%s: %s target %s has no expr", dashboardPath, where, tg.RefID)
			}
			exprs[where] = append(exprs[where], tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			_ = json.Unmarshal(v.Query, &q.Query) // the plain string form
		}
		exprs["variable "+v.Name] = append(exprs["variable "+v.Name], q.Query)
	}

	exported := exportedMetrics(t)
	used := map[string]bool{}
	for _, where := range slices.Sorted(func(yield func(string) bool) {
		for k := range exprs {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, e := range exprs[where] {
			names := metricNames(e)
			if len(names) == 0 {
				t.Errorf("%s: %s: no metric in %q", dashboardPath, where, e)
			}
			for _, n := range names {
				used[n] = true
				if !exported[n] {
					t.Errorf("%s: %s uses %s, which mooncdc does not export (renamed in connector/metrics.go?); fix the query or the metric name: %s", dashboardPath, where, n, e)
				}
			}
			for _, n := range counterArgs(e) {
				if !strings.HasSuffix(n, "_total") && !strings.HasSuffix(n, "_count") && !strings.HasSuffix(n, "_sum") && !strings.HasSuffix(n, "_bucket") {
					t.Errorf("%s: %s applies rate/increase to %s, which is not a counter; use deriv() or delta() for a gauge: %s", dashboardPath, where, n, e)
				}
			}
		}
	}
	for _, n := range dashboardNeeds {
		if !used[n] {
			t.Errorf("%s: no panel shows %s; add one", dashboardPath, n)
		}
	}
}
