package config

import "errors"

// ExitConfig and ExitCode stand in for connector's (errors.go), which this
// package cannot import: the CLI exits with ExitConfig exactly when the
// error is a *ConfigError (the first case of connector.ExitCode, held by
// connector's TestExitCodeOfEachTypedError). The tests here assert that
// the errors they provoke are config errors.
const ExitConfig = 2

func ExitCode(err error) int {
	var ce *ConfigError
	if errors.As(err, &ce) {
		return ExitConfig
	}
	return 1
}
