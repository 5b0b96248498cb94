package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
)

// This file runs mooncdc for a benchmark: as a child process (bin/mooncdc run,
// the default) or in this process, behind pipelineRunner.

// syncBuffer collects a child's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// pipelineRunner is mooncdc as a child process or in this process.
type pipelineRunner interface {
	start() error
	pid() int
	exited() <-chan struct{}
	// stop asks for a clean stop and waits for it.
	stop() error
	rusage() (user, sys time.Duration, maxRSS int64)
	output() string
}

type childRunner struct {
	bin, config string
	cpuprofile  string // run --cpuprofile: the child's CPU profile, written at its exit
	cmd         *exec.Cmd
	out         syncBuffer
	done        chan struct{}
	err         error
	hwm         atomic.Int64 // the child's VmHWM, sampled every 20ms until it exits
}

// The child's peak RSS is its VmHWM, sampled while it runs: its ru_maxrss
// is no measure, as Linux carries the RSS high-water mark of the process
// that forked it (this one, which may be the larger: Go forks with
// CLONE_VM, and exec records the shared mm's mark) into the child's
// ru_maxrss. Sampling misses at most the growth of the last 20ms.
const hwmSampling = 20 * time.Millisecond

func (r *childRunner) start() error {
	args := []string{"run", "--config", r.config}
	if r.cpuprofile != "" {
		args = append(args, "--cpuprofile", r.cpuprofile)
	}
	r.cmd = exec.Command(r.bin, args...)
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
	// Should the benchmark die, mooncdc must not stream on.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	r.done = make(chan struct{})
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", r.bin, err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	go func() {
		tick := time.NewTicker(hwmSampling)
		defer tick.Stop()
		for {
			if h, err := vmHWM(r.cmd.Process.Pid); err == nil && h > r.hwm.Load() {
				r.hwm.Store(h)
			}
			select {
			case <-r.done:
				return
			case <-tick.C:
			}
		}
	}()
	return nil
}

func (r *childRunner) pid() int                { return r.cmd.Process.Pid }
func (r *childRunner) exited() <-chan struct{} { return r.done }
func (r *childRunner) output() string          { return r.out.String() }

func (r *childRunner) stop() error {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(2 * time.Minute):
		_ = r.cmd.Process.Kill()
		<-r.done
		return fmt.Errorf("mooncdc did not stop within 2 minutes of SIGTERM; killed")
	}
	if r.err != nil {
		return fmt.Errorf("mooncdc exited with %v", r.err)
	}
	return nil
}

func (r *childRunner) rusage() (time.Duration, time.Duration, int64) {
	u, sy, _ := childRusage(r.cmd.ProcessState)
	return u, sy, r.hwm.Load()
}

// inprocRunner runs connector.New(cfg, log).Run(ctx) in this process, with
// an optional CPU profile covering start to the end LSN (or, for a run that
// ends by itself, to its end).
type inprocRunner struct {
	cfg        config.Config
	cpuprofile string
	// jsonInfo logs at info level in mooncdc's JSON format (as the command
	// does with log.format json), instead of console at warn level.
	jsonInfo  bool
	out       syncBuffer
	cancel    context.CancelFunc
	done      chan struct{}
	err       error
	u0, s0    time.Duration
	user, sys time.Duration
	profile   *os.File
}

func (r *inprocRunner) start() error {
	enc := zap.NewDevelopmentEncoderConfig()
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(&r.out), zapcore.WarnLevel)
	if r.jsonInfo {
		enc := zap.NewProductionEncoderConfig()
		enc.EncodeTime = zapcore.ISO8601TimeEncoder
		core = zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(&r.out), zapcore.InfoLevel)
	}
	log := zap.New(core)
	p, err := connector.New(r.cfg, log)
	if err != nil {
		return err
	}
	if r.cpuprofile != "" {
		f, err := os.Create(r.cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		r.profile = f
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done = make(chan struct{})
	r.u0, r.s0 = selfRusage()
	go func() {
		r.err = p.Run(ctx)
		close(r.done)
	}()
	return nil
}

// stopProfile ends the CPU profile (at the end LSN, before the shutdown).
func (r *inprocRunner) stopProfile() error {
	if r.profile == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := r.profile.Close()
	r.profile = nil
	return err
}

func (r *inprocRunner) pid() int                { return os.Getpid() }
func (r *inprocRunner) exited() <-chan struct{} { return r.done }
func (r *inprocRunner) output() string          { return r.out.String() }

func (r *inprocRunner) stop() error {
	perr := r.stopProfile()
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(2 * time.Minute):
		return fmt.Errorf("the in-process pipeline did not stop within 2 minutes")
	}
	u, s := selfRusage()
	r.user, r.sys = u-r.u0, s-r.s0
	if r.err != nil {
		return fmt.Errorf("pipeline: %w", r.err)
	}
	return perr
}

func (r *inprocRunner) rusage() (time.Duration, time.Duration, int64) {
	hwm, _ := vmHWM(os.Getpid())
	return r.user, r.sys, hwm
}
