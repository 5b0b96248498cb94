package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/mooncdc/mooncdc/connector/config"
)

// startCPUProfile writes a CPU profile of the process to path until the
// returned stop is called (run's --cpuprofile: a diagnostic for an
// operator or a bug report, and make bench's CPU per stage). A path that
// cannot be created is a config error naming the flag.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, &config.ConfigError{Err: fmt.Errorf("mooncdc run --cpuprofile: %w", err)}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, &config.ConfigError{Err: fmt.Errorf("mooncdc run --cpuprofile: %w", err)}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
