package connector

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
)

// TestExitCodeOfEachTypedError holds the exit codes, a public contract of
// the command, to the error types made in other packages: a config error
// (also wrapped) exits 2 wherever it was made, which is what config's own
// tests rely on when they assert that an error is a *config.ConfigError.
func TestExitCodeOfEachTypedError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{&config.ConfigError{Err: errors.New("x")}, ExitConfig},
		{fmt.Errorf("load: %w", &config.ConfigError{Err: errors.New("x")}), ExitConfig},
		{&UnsafeResumeError{Reason: "x"}, ExitUnsafeResume},
		{&delivery.FencedError{TransactionalID: "t", Err: errors.New("x")}, ExitFenced},
		{errors.New("x"), ExitRuntime},
	} {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}
