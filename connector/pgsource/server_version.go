package pgsource

import (
	"fmt"

	"github.com/mooncdc/mooncdc/connector/internal/fault"
)

// MinServerVersion is the oldest Postgres mooncdc streams from
// (server_version_num): pgoutput sends logical messages from 14 on.
const MinServerVersion = 140000

// CheckServerVersion refuses a server older than MinServerVersion, which
// would otherwise fail later at START_REPLICATION with an unclear error.
func CheckServerVersion(num int) error {
	if num >= MinServerVersion {
		return nil
	}
	return &fault.CriticalError{Err: fmt.Errorf("PostgreSQL %d.%d is too old: mooncdc streams pgoutput with logical messages, which PostgreSQL 14 brought; upgrade the server to 14 or later",
		num/10000, num%10000)}
}
