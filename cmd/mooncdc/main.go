package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/group"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3".
// When empty, the module version or VCS revision from the build info is used.
var version string

// exit ends the process; a variable so that tests of the forced exit on a
// second signal do not end the test binary.
var exit = os.Exit

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

// run executes one mooncdc command line (args without the program name) and
// returns the process exit code. It blocks until the command is done; for
// "run", that is until ctx is cancelled, a signal arrives or the pipeline
// fails.
func run(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return connector.ExitConfig
	}
	switch args[0] {
	case "run":
		return runCommand(ctx, args[1:], environ, stdout, stderr)
	case "resnapshot":
		return resnapshotCommand(ctx, args[1:], environ, stdout, stderr)
	case "reset":
		return resetCommand(ctx, args[1:], environ, stdout, stderr)
	case "check":
		return checkCommand(ctx, args[1:], environ, stdout, stderr)
	case "status":
		return statusCommand(ctx, args[1:], environ, stdout, stderr)
	case "tail":
		return tailCommand(ctx, args[1:], environ, stdout, stderr)
	case "import-debezium":
		return importDebeziumCommand(args[1:], stdout, stderr)
	case "setup-ddl":
		return setupDDLCommand(ctx, args[1:], environ, stdout, stderr)
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, versionLine())
		return connector.ExitOK
	case "help", "-h", "-help", "--help":
		switch {
		case len(args) > 1 && args[1] == "run":
			fmt.Fprint(stdout, runUsage())
		case len(args) > 1 && args[1] == "resnapshot":
			fmt.Fprint(stdout, resnapshotUsage())
		case len(args) > 1 && args[1] == "reset":
			fmt.Fprint(stdout, resetUsage())
		case len(args) > 1 && args[1] == "check":
			fmt.Fprint(stdout, checkUsage())
		case len(args) > 1 && args[1] == "status":
			fmt.Fprint(stdout, statusUsage())
		case len(args) > 1 && args[1] == "tail":
			fmt.Fprint(stdout, tailUsage())
		case len(args) > 1 && args[1] == "import-debezium":
			fmt.Fprint(stdout, importDebeziumUsage())
		case len(args) > 1 && args[1] == "setup-ddl":
			fmt.Fprint(stdout, setupDDLUsage())
		default:
			fmt.Fprint(stdout, usage())
		}
		return connector.ExitOK
	default:
		fmt.Fprintf(stderr, "mooncdc: unknown command %q\n\n%s", args[0], usage())
		return connector.ExitConfig
	}
}

// runCommand is "mooncdc run": load and validate the config, then run the
// pipeline until it stops.
func runCommand(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) int {
	var profile string
	args, err := cutFlags("run", args, map[string]*string{"cpuprofile": &profile})
	if err == nil && profile != "" {
		var stop func()
		if stop, err = startCPUProfile(profile); err == nil {
			defer stop()
		}
	}
	var wf workerFlags
	if err == nil {
		wf, args, err = cutWorkerFlags("run", args)
	}
	if err == nil {
		var cf configFlags
		if cf, err = parseConfigFlags("run", args, false); err == nil && isConfigDir(cf.configPath) {
			return runWorkersCommand(ctx, cf, wf, environ, stderr)
		}
		if err == nil && (wf.group != "" || wf.id != "") {
			err = &config.ConfigError{Err: errors.New("mooncdc run: --group and --worker-id are for a worker group: --config DIR")}
		}
	}
	var cfg config.Config
	if err == nil {
		cfg, err = loadRunConfig(args, environ)
	}
	if code, stop := configFailed(err, runUsage(), stdout, stderr); stop {
		return code
	}

	prog := newProgress(cfg.Log, stderr)
	log, err := newLogger(cfg.Log, prog.Writer())
	if err != nil { // Validate accepted level and format, so this is a bug
		fmt.Fprintf(stderr, "mooncdc: build logger: %v\n", err)
		return connector.ExitRuntime
	}
	defer func() { _ = log.Sync() }() // stderr may not support fsync

	log.Info("starting mooncdc", zap.String("version", versionString()), zap.Object("config", cfg))
	for _, w := range cfg.SecurityWarnings() {
		log.Warn(w)
	}
	if cfg.WorkerGroup != "" {
		log.Warn("worker_group is ignored: it names the worker group of mooncdc run --config DIR, and this run has one pipeline file", zap.String("worker_group", cfg.WorkerGroup))
	}

	ctx, stop := notifyShutdown(ctx, log, exit)
	defer stop()
	defer setMemoryLimit(cfg, environ)()

	p, err := newRunner(cfg, log)
	if err == nil {
		stopProgress := startProgress(ctx, prog, p.Copies, log.Named("progress"))
		err = p.Run(ctx)
		stopProgress()
	}
	code := connector.ExitCode(err)
	if err != nil {
		log.Error("mooncdc stopped", zap.Error(err), zap.Int("exit_code", code))
	} else {
		log.Info("mooncdc stopped cleanly")
	}
	return code
}

// runner is what "mooncdc run" runs: the pipeline, or with ha.enabled a
// standby member that runs it while it is the active instance.
type runner interface {
	Run(ctx context.Context) error
	Copies() []connector.CopyProgress
}

// newRunner builds the pipeline, or the standby member with ha.enabled,
// or, with kafka.brokers empty, the pipeline on the embedded development
// Kafka, which has no group to share: it runs as without ha.
func newRunner(cfg config.Config, log *zap.Logger) (runner, error) {
	if cfg.EmbeddedKafka() {
		if cfg.HA.Enabled {
			log.Warn("ha.enabled is ignored with the embedded Kafka (kafka.brokers empty): no other instance can share it")
			cfg.HA.Enabled = false
		}
		// Validated now, as the pipeline it runs will be.
		check := cfg
		check.Kafka.Brokers = []string{EmbeddedKafkaAddr}
		if _, err := connector.New(check, log); err != nil {
			return nil, err
		}
		return &embeddedRunner{cfg: cfg, log: log}, nil
	}
	if cfg.HA.Enabled {
		return group.NewStandby(cfg, log)
	}
	return connector.New(cfg, log)
}

// embeddedRunner runs the pipeline on the embedded development Kafka
// (kafka.brokers empty), which it starts first and stops last.
type embeddedRunner struct {
	cfg config.Config
	log *zap.Logger
	p   atomic.Pointer[connector.Pipeline]
}

func (r *embeddedRunner) Run(ctx context.Context) error {
	emb, err := StartEmbeddedKafka(r.cfg.DataDir, r.log)
	if err != nil {
		return err
	}
	defer emb.Close()
	cfg := r.cfg
	cfg.Kafka.Brokers = emb.ListenAddrs()
	p, err := connector.New(cfg, r.log)
	if err != nil {
		return err
	}
	r.p.Store(p)
	return p.Run(ctx)
}

func (r *embeddedRunner) Copies() []connector.CopyProgress {
	if p := r.p.Load(); p != nil {
		return p.Copies()
	}
	return nil
}

// runFlags maps the flags of "mooncdc run" to config keys. The most used keys
// have flags; every key has an environment variable.
var runFlags = []struct{ flag, key, help string }{
	{"name", "name", "connector name: offsets key, default slot/publication/topic prefix"},
	{"postgres-url", "postgres.url", "Postgres connection URL, e.g. postgres://user@host:5432/db"},
	{"tables", "postgres.tables", "comma-separated table patterns, e.g. public.orders,public.*"},
	{"brokers", "kafka.brokers", "comma-separated Kafka brokers; empty for the embedded development Kafka"},
	{"data-dir", "data_dir", "directory of the embedded Kafka's data"},
	{"metrics-listen", "metrics.listen", "host:port for /metrics, /healthz, /readyz; empty disables"},
	{"log-level", "log.level", "debug, info, warn or error"},
	{"log-format", "log.format", "json or console"},
	{"snapshot-mode", "snapshot.mode", "initial, never, initial_only or always"},
}

// loadRunConfig applies, in order, the defaults, the --config file, the
// MOONCDC_* environment and the flags, then the derived defaults, and
// validates. Errors other than flag.ErrHelp are *connector.ConfigError.
func loadRunConfig(args []string, environ []string) (config.Config, error) {
	cf, err := parseConfigFlags("run", args, false)
	if err != nil {
		return config.Config{}, err
	}
	return cf.load(environ, config.Config.Validate)
}

// configFlags are the parsed flags of a command that takes the config the
// way run does (--config and runFlags).
type configFlags struct {
	cmd        string
	configPath string
	set        []flagValue // the config flags given, in the order flag.Visit reports them
	args       []string    // positional arguments
}

type flagValue struct{ flag, key, value string }

// parseConfigFlags parses --config and runFlags for command cmd. With
// positional, arguments that are not flags are collected (flags may come
// before, between or after them; everything after "--" is positional);
// without it, any such argument is an error. Errors other than
// flag.ErrHelp are *connector.ConfigError.
func parseConfigFlags(cmd string, args []string, positional bool) (configFlags, error) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by the caller
	configPath := fs.String("config", "", "YAML config file")
	keyOf := map[string]string{}
	for _, f := range runFlags {
		fs.String(f.flag, "", f.help)
		keyOf[f.flag] = f.key
	}
	cf := configFlags{cmd: cmd}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return configFlags{}, err
			}
			return configFlags{}, &config.ConfigError{Err: fmt.Errorf("mooncdc %s: %w", cmd, err)}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if !positional {
			return configFlags{}, &config.ConfigError{Err: fmt.Errorf("mooncdc %s: unexpected argument %q (flags take the form --name=value)", cmd, rest[0])}
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			cf.args = append(cf.args, rest...)
			break
		}
		cf.args = append(cf.args, rest[0])
		args = rest[1:]
	}
	cf.configPath = *configPath
	fs.Visit(func(f *flag.Flag) {
		if key, ok := keyOf[f.Name]; ok {
			cf.set = append(cf.set, flagValue{flag: f.Name, key: key, value: f.Value.String()})
		}
	})
	return cf, nil
}

// load applies, in order, the defaults, the --config file, the MOONCDC_*
// environment and the flags, then the derived defaults, and checks the
// result with validate. Errors are *connector.ConfigError.
func (cf configFlags) load(environ []string, validate func(config.Config) error) (config.Config, error) {
	cfg, err := config.LoadConfig(cf.configPath, environ)
	if err != nil {
		return config.Config{}, err
	}
	var errs []error
	for _, f := range cf.set {
		if err := cfg.Set(f.key, f.value); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w (sets %s)", f.flag, err, f.key))
		}
	}
	if len(errs) > 0 {
		return config.Config{}, &config.ConfigError{Err: errors.Join(errs...)}
	}
	cfg.ApplyDefaults()
	if err := validate(cfg); err != nil {
		return config.Config{}, err
	}
	return cfg, nil
}

// configFailed reports a command's flag or configuration error the way
// every command does: with err a flag.ErrHelp, the usage on stdout (exit
// 0); else the error and its fix on stderr (its exit code). stop is false
// when err is nil.
func configFailed(err error, usage string, stdout, stderr io.Writer) (code int, stop bool) {
	switch {
	case err == nil:
		return connector.ExitOK, false
	case errors.Is(err, flag.ErrHelp) && usage != "":
		fmt.Fprint(stdout, usage)
		return connector.ExitOK, true
	default:
		fmt.Fprint(stderr, formatConfigError(err))
		return connector.ExitCode(err), true
	}
}

// formatConfigError prints one problem per line under a heading.
func formatConfigError(err error) string {
	var ce *config.ConfigError
	if !errors.As(err, &ce) {
		return fmt.Sprintf("mooncdc: %v\n", err)
	}
	lines := strings.Split(strings.TrimSpace(ce.Err.Error()), "\n")
	var b strings.Builder
	if len(lines) == 1 {
		fmt.Fprintf(&b, "mooncdc: invalid config: %s\n", lines[0])
	} else {
		b.WriteString("mooncdc: invalid config:\n")
		for _, l := range lines {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	b.WriteString("Run 'mooncdc help run' for the flags and environment variables.\n")
	return b.String()
}

func usage() string {
	return `mooncdc streams a Postgres publication into Kafka as Debezium-compatible records.

Usage:
  mooncdc run [--config FILE] [flags]   stream until SIGINT/SIGTERM/SIGHUP
  mooncdc run --config DIR [--group G] [--worker-id ID] [flags]
                                        a worker of a group sharing DIR's pipelines
  mooncdc resnapshot [--config FILE] [flags] TABLE...
                                        copy tables again (sets them back to init)
  mooncdc reset [--config FILE] [flags] [--drop-slot] [--yes]
                                        start over: delete the offsets (and the slot)
  mooncdc check [--config FILE] [flags] preflight: Postgres, slot, tables, Kafka, registry
  mooncdc check --config DIR [--group G] [flags]
                                        the same for every pipeline of a worker group
  mooncdc status [--config FILE] [flags] [--json]
                                        each table's phase and progress, the slot's lag
  mooncdc status --config DIR [--group G] [--json]
                                        which worker of the group runs each pipeline
  mooncdc tail [--config FILE] [flags] [--pretty] TOPIC...
                                        print records as they arrive, decoded
  mooncdc import-debezium [--brokers B] [--offsets-topic T] FILE
                                        print the mooncdc YAML for a Debezium connector config
  mooncdc setup-ddl [--config FILE] [flags] [--uninstall]
                                        install the DDL event trigger (schema-change records)
  mooncdc version                       print the version
  mooncdc help [run|resnapshot|reset|check|status|tail|import-debezium|setup-ddl]
                                        print this help, or a command's flags

Exit codes: 0 clean stop, 1 runtime error, 2 invalid config, 3 unsafe resume
(the offsets do not describe this database or slot, or the slot was invalidated:
the message names 'mooncdc reset'), 4 fenced by another instance.

Run 'mooncdc help run' for the flags and environment variables.
`
}

func runUsage() string {
	var b strings.Builder
	b.WriteString(`Usage: mooncdc run [--config FILE] [--cpuprofile FILE] [flags]
       mooncdc run --config DIR [--group NAME] [--worker-id ID] [--cpuprofile FILE] [flags]

Streams until SIGINT, SIGTERM or SIGHUP, then stops cleanly (flushes to Kafka,
writes the offsets, confirms the LSN to Postgres) and exits 0. A clean stop
that Kafka keeps from finishing ends after shutdown_timeout (30s) with exit 1,
naming the records not acknowledged (they are sent again at the next start).
A second signal exits at once with code 1.

Configuration, each later source overriding the earlier ones:
defaults < the YAML file (--config) < MOONCDC_* environment variables < flags.

With --config DIR, a worker group: every *.yaml and *.yml file of DIR is a
pipeline (the environment and flags apply to each; names must differ), and
every worker run with the same DIR and group shares them through the Kafka
consumer group mooncdc-workers-NAME (NAME: --group, else the files'
worker_group, which must agree, else "default"): each pipeline
runs on one worker, balanced, and moves when a worker joins or leaves.
--worker-id names this worker in 'mooncdc status --config DIR' (default
host-pid). One endpoint per worker (metrics.listen, the same in every file);
metrics carry a pipeline label.

--cpuprofile FILE writes a Go CPU profile of the whole run to FILE (for
'go tool pprof'; a diagnostic, at about 1% of CPU).

`)
	b.WriteString(configFlagsUsage())
	return b.String()
}

// configFlagsUsage describes --config, runFlags and the environment
// variables, which run and resnapshot share.
func configFlagsUsage() string {
	var b strings.Builder
	b.WriteString(`Flags:
  --config FILE
        YAML config file (unknown keys are rejected)
`)
	for _, f := range runFlags {
		fmt.Fprintf(&b, "  --%s VALUE\n        %s (%s, %s)\n", f.flag, f.help, f.key, config.EnvVar(f.key))
	}
	b.WriteString(`
Environment: every config key has a variable, MOONCDC_ and the key path
upper-cased with dots as '_'; lists are comma-separated; durations have a
unit (10s, 1m30s). Any other MOONCDC_* variable is an error.
`)
	for _, k := range config.ConfigKeys() {
		fmt.Fprintf(&b, "  %-40s %s\n", config.EnvVar(k), k)
	}
	return b.String()
}

// versionString is the build's version: -ldflags "-X main.version=…", else
// the module version, else the VCS revision, else "dev".
func versionString() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "dev-" + rev
}

func versionLine() string {
	return fmt.Sprintf("mooncdc %s (%s %s/%s)", versionString(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
