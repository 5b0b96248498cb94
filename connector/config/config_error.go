package config

// ConfigError reports invalid configuration; the CLI exits with ExitConfig.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return "invalid config: " + e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Fatal marks the error as one no retry fixes: a person must change the
// configuration (connector's classify stops the pipeline on it).
func (e *ConfigError) Fatal() {}
