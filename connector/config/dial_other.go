//go:build !linux

package config

import "time"

// setUserTimeout does nothing where TCP_USER_TIMEOUT is not available: the
// keepalives and mooncdc's own deadlines still bound a silent link.
func setUserTimeout(uintptr, time.Duration) error { return nil }
