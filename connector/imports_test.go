package connector_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestPackagesImportOnlyAlongTheFlow keeps the package boundaries the
// compiler can hold one way: a package of connector/ may depend (also
// through others) only on the connector packages listed for it, none
// depends on connector/group (standby instances and worker groups stand
// above the wiring: cmd → group → connector), and no product package under
// connector/ depends on kfake (the embedded development Kafka is
// cmd/mooncdc's). Test files are not counted. It asks `go list` only:
// nothing is built.
func TestPackagesImportOnlyAlongTheFlow(t *testing.T) {
	const mod = "github.com/mooncdc/mooncdc/"
	// Every package under connector/ is listed; a new one needs its line.
	// nil: may import every package of connector/.
	allowed := map[string][]string{
		"connector":       nil, // the wiring: may import every package below
		"connector/group": nil, // seats: may import connector and every package below it
		// Test support, not product: the integration tests of the whole
		// pipeline (test-only packages) and their helpers drive connector's
		// API, and ittest starts kfake brokers (internal/kafkatest).
		"connector/internal/it/ittest":             nil,
		"connector/internal/it/copyfaults":         nil,
		"connector/internal/it/ddl":                nil,
		"connector/internal/it/incremental":        nil,
		"connector/internal/it/pipeline":           nil,
		"connector/internal/it/records":            nil,
		"connector/internal/it/snapshot":           nil,
		"connector/internal/it/transforms":         nil,
		"connector/config":                         {"connector/internal/transform"}, // the transforms key is parsed into its chain at Validate
		"connector/stream":                         {},
		"connector/internal/phases":                {},
		"connector/internal/transform":             {},                               // pure: the record model, SMTs and CEL over schema only
		"connector/internal/connectformat":         {"connector/internal/transform"}, // pure: Protobuf, JSON Schema and CloudEvents of Connect data
		"connector/internal/watermark":             {},                               // pure: stdlib and pglogrepl only
		"connector/internal/notify":                {},                               // pure: Debezium's notifications, stdlib only
		"connector/internal/fault":                 {"connector/config", "connector/internal/transform", "connector/stream"},
		"connector/pgsource":                       {"connector/config", "connector/internal/transform", "connector/internal/fault", "connector/stream"},
		"connector/internal/delivery":              {"connector/config", "connector/internal/transform", "connector/internal/fault", "connector/internal/phases", "connector/internal/watermark", "connector/stream"},
		"connector/internal/delivery/deliverytest": {},
		"connector/internal/record":                {"connector/config", "connector/internal/connectformat", "connector/internal/transform", "connector/internal/delivery", "connector/internal/fault", "connector/internal/phases", "connector/internal/watermark", "connector/internal/notify", "connector/stream"},
		"connector/internal/emit":                  {"connector/config", "connector/internal/connectformat", "connector/internal/transform", "connector/pgsource", "connector/internal/delivery", "connector/internal/fault", "connector/internal/phases", "connector/internal/record", "connector/internal/watermark", "connector/internal/notify", "connector/stream"},
		"connector/internal/snapshot":              {"connector/config", "connector/internal/connectformat", "connector/internal/transform", "connector/pgsource", "connector/stream", "connector/internal/delivery", "connector/internal/emit", "connector/internal/fault", "connector/internal/phases", "connector/internal/record", "connector/internal/watermark", "connector/internal/notify"},
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, mod+"connector/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, deps := strings.TrimPrefix(f[0], mod), f[1:]
		may, known := allowed[pkg]
		if !known {
			t.Errorf("%s: a new package under connector/: add it to this test with the packages it may import (docs/architecture.md)", pkg)
			continue
		}
		for _, d := range deps {
			if strings.HasPrefix(d, "github.com/twmb/franz-go/pkg/kfake") && !strings.HasPrefix(pkg, "connector/internal/it/") {
				t.Errorf("%s depends on %s: the embedded development Kafka belongs to cmd/mooncdc", pkg, d)
			}
			dep, ok := strings.CutPrefix(d, mod)
			if dep == "connector/group" && !strings.HasPrefix(pkg, "connector/internal/it/") {
				t.Errorf("%s depends on connector/group, which stands above the pipeline (cmd → group → connector): nothing under connector/ may import it", pkg)
			}
			if !ok || !strings.HasPrefix(dep, "connector") || may == nil {
				continue
			}
			if !slices.Contains(may, dep) {
				t.Errorf("%s depends on %s, against the flow (docs/architecture.md): it may import only %v of connector/", pkg, dep, may)
			}
		}
	}
}
