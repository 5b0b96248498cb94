package incremental

import (
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
)

// The tests of this package share one Postgres cluster, a database each
// (ittest.NewEnv); Main closes it after the last test.
func TestMain(m *testing.M) { ittest.Main(m) }
