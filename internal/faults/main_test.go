//go:build faults

package faults

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/internal/gobuild"
	"github.com/twmb/franz-go/pkg/kgo"
)

// mooncdcBin is the mooncdc binary built from ./cmd/mooncdc for this run.
var mooncdcBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "faults-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		os.Exit(1)
	}
	// Built with the suite's race setting (gobuild): make test-faults runs
	// without -race, so this is the binary users run.
	mooncdcBin, err = gobuild.BuildIn(dir, "github.com/mooncdc/mooncdc/cmd/mooncdc", "mooncdc")
	if err != nil {
		fmt.Fprintf(os.Stderr, "faults: %v\n", err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

const (
	modeAtLeastOnce = "at-least-once"
	modeExactlyOnce = "exactly-once"
)

// modes returns the delivery modes to run: FAULTS_MODES, comma-separated,
// or both.
func modes(t *testing.T) []string {
	v := strings.TrimSpace(os.Getenv("FAULTS_MODES"))
	if v == "" {
		return []string{modeAtLeastOnce, modeExactlyOnce}
	}
	var out []string
	for _, m := range strings.Split(v, ",") {
		m = strings.TrimSpace(m)
		switch m {
		case modeAtLeastOnce, modeExactlyOnce:
			out = append(out, m)
		case "":
		default:
			t.Fatalf("FAULTS_MODES: unknown mode %q (want %s and/or %s)", m, modeAtLeastOnce, modeExactlyOnce)
		}
	}
	return out
}

// seed returns FAULTS_SEED or a seed from the clock.
func seed(t *testing.T) uint64 {
	if v := os.Getenv("FAULTS_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("FAULTS_SEED=%q: %v", v, err)
		}
		return s
	}
	return uint64(time.Now().UnixNano())
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// scenario is one fault pattern; run injects the faults while the load
// runs and returns how many it injected. The harness then finishes the
// load, waits for mooncdc to catch up, stops it cleanly and checks.
type scenario struct {
	name string
	run  func(e *env) int
	ha   bool // the config has ha.enabled (standby instances)
	// postgres, if set, is more keys of the config's postgres section,
	// each line indented by two spaces and ended by a newline.
	postgres string
	// verify, if set, checks the records further, knowing how many faults
	// run injected.
	verify func(e *env, raw map[string][]*kgo.Record, faults int)
	// bigRows, if set, is the big table's rows (default: tables[0].seed).
	bigRows func(t *testing.T) int
	// updateKeys, if set, makes the load one-row UPDATEs of the big
	// table's ids [0, updateKeys) only.
	updateKeys int64
}

var scenarios = []scenario{
	{name: "kill9", run: runKill9},
	{name: "pgrestart", run: runPGRestart},
	{name: "brokerrestart", run: runBrokerRestart},
	{name: "twoinstances", run: runTwoInstances, ha: true},
	{name: "standby", run: runStandby, ha: true},
	{name: "partition", run: runPartition, ha: true, verify: verifyPartition},
	{name: "resume", run: runResume, verify: verifyResume, bigRows: resumeRows},
	{name: "halfopen", run: runHalfOpen, postgres: "  replication_timeout: " + halfOpenTimeout.String() + "\n"},
	{name: "pause", run: runPause, ha: true, verify: verifyPause, bigRows: func(*testing.T) int { return pauseKeys }, updateKeys: pauseKeys},
	{name: "incremental", run: runIncrementalKill9},
}

// TestFaults runs every scenario in every mode, each on a fresh Postgres
// and broker: TestFaults/<scenario>/<mode>.
func TestFaults(t *testing.T) {
	ms := modes(t)
	base := seed(t)
	for i, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			for j, mode := range ms {
				t.Run(mode, func(t *testing.T) {
					runScenario(t, sc, mode, base, base+uint64(i*10+j))
				})
			}
		})
	}
}
