package connector

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

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
