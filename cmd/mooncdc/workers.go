package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/group"
)

// This file is the CLI of a worker group: "mooncdc run --config DIR"
// runs the pipelines of DIR (one YAML per pipeline) that the group gives
// this worker, "mooncdc status --config DIR" shows which worker runs
// which.

// workerFlags are the flags only a worker group has: --group (the group's
// name: it sets worker_group in every file, whose default is
// group.DefaultWorkerGroup) and --worker-id (this worker's name in it;
// default host-pid).
type workerFlags struct{ group, id string }

// cutWorkerFlags removes --group and --worker-id (also -name, --name=V,
// --name V) from args; everything after "--" is left alone.
func cutWorkerFlags(cmd string, args []string) (workerFlags, []string, error) {
	var wf workerFlags
	rest, err := cutFlags(cmd, args, map[string]*string{"group": &wf.group, "worker-id": &wf.id})
	return wf, rest, err
}

// cutFlags removes the string flags named in dst (each as -name V,
// --name V or --name=V) from args, setting their values, and returns the
// other arguments; everything after "--" is left alone.
func cutFlags(cmd string, args []string, dst map[string]*string) ([]string, error) {
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		p := dst[name]
		if !strings.HasPrefix(a, "-") || p == nil {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, &config.ConfigError{Err: fmt.Errorf("mooncdc %s: flag needs an argument: -%s", cmd, name)}
			}
			i++
			value = args[i]
		}
		*p = value
	}
	return rest, nil
}

// apply makes --group set worker_group in every file of the directory,
// as any flag sets its key: after the file and MOONCDC_WORKER_GROUP.
func (wf workerFlags) apply(cf configFlags) configFlags {
	if wf.group != "" {
		cf.set = append(slices.Clone(cf.set), flagValue{flag: "group", key: "worker_group", value: wf.group})
	}
	return cf
}

// isConfigDir reports whether --config names a directory.
func isConfigDir(path string) bool {
	fi, err := os.Stat(path)
	return path != "" && err == nil && fi.IsDir()
}

// loadConfigDir loads every pipeline file of cf.configPath as run loads
// one file (the environment and the flags apply to each), checks each
// with validate and all of them together, and returns the files and their
// configs. Every problem names its file; errors are *connector.ConfigError.
func loadConfigDir(cf configFlags, environ []string, validate func(config.Config) error) ([]string, []config.Config, error) {
	pls, err := loadDirPipelines(cf, environ, validate)
	if err != nil {
		return nil, nil, err
	}
	var files []string
	var cfgs []config.Config
	var errs []error
	for _, p := range pls {
		files = append(files, p.file)
		cfgs = append(cfgs, p.cfg)
		errs = append(errs, p.errs...)
	}
	if len(errs) > 0 {
		return nil, nil, &config.ConfigError{Err: errors.Join(errs...)}
	}
	if err := group.CheckWorkerConfigs(files, cfgs); err != nil {
		return nil, nil, err
	}
	return files, cfgs, nil
}

// dirPipeline is one file of a config directory, loaded on its own.
type dirPipeline struct {
	file string
	cfg  config.Config // valid only when errs is empty
	errs []error       // the file's problems, one per line, each starting with the file
}

// loadDirPipelines loads each pipeline file of cf.configPath on its own
// (the environment and the flags apply to each) and checks it with
// validate; the only error is the directory's (unreadable, no pipeline
// files), a *connector.ConfigError.
func loadDirPipelines(cf configFlags, environ []string, validate func(config.Config) error) ([]dirPipeline, error) {
	files, err := group.ConfigDirFiles(cf.configPath)
	if err != nil {
		return nil, err
	}
	var out []dirPipeline
	for _, f := range files {
		one := cf
		one.configPath = f
		p := dirPipeline{file: f}
		cfg, err := one.load(environ, validate)
		if err != nil {
			var ce *config.ConfigError
			if !errors.As(err, &ce) {
				ce = &config.ConfigError{Err: err}
			}
			for _, line := range strings.Split(strings.TrimSpace(ce.Err.Error()), "\n") {
				if !strings.HasPrefix(line, f) {
					line = f + ": " + line
				}
				p.errs = append(p.errs, errors.New(line))
			}
		}
		p.cfg = cfg
		out = append(out, p)
	}
	return out, nil
}

// runWorkersCommand is "mooncdc run --config DIR": a worker of the group.
// Logging follows the first file's log section; the worker serves one
// endpoint, on the metrics.listen every file shares.
func runWorkersCommand(ctx context.Context, cf configFlags, wf workerFlags, environ []string, stderr io.Writer) int {
	files, cfgs, err := loadConfigDir(wf.apply(cf), environ, config.Config.Validate)
	if err != nil {
		fmt.Fprint(stderr, formatConfigError(err))
		return connector.ExitCode(err)
	}
	prog := newProgress(cfgs[0].Log, stderr)
	log, err := newLogger(cfgs[0].Log, prog.Writer())
	if err != nil {
		fmt.Fprintf(stderr, "mooncdc: build logger: %v\n", err)
		return connector.ExitRuntime
	}
	defer func() { _ = log.Sync() }()
	wg := group.WorkerGroupOf(cfgs)
	log.Info("starting mooncdc as a worker", zap.String("version", versionString()), zap.String("config_dir", cf.configPath), zap.Strings("files", files),
		zap.String("group", group.WorkerGroup(wg)))
	for i, c := range cfgs {
		for _, w := range c.SecurityWarnings() {
			log.Warn(w, zap.String("file", files[i]))
		}
	}
	ctx, stop := notifyShutdown(ctx, log, exit)
	defer stop()
	defer setMemoryLimit(cfgs[0], environ)()

	w, err := group.NewWorkers(cfgs, files, group.WorkerOptions{Group: wg, ID: wf.id, Listen: cfgs[0].Metrics.Listen}, log)
	if err == nil {
		stopProgress := startProgress(ctx, prog, w.Copies, log.Named("progress"))
		err = w.Run(ctx)
		stopProgress()
	}
	code := connector.ExitCode(err)
	if err != nil {
		log.Error("mooncdc worker stopped", zap.Error(err), zap.Int("exit_code", code))
	} else {
		log.Info("mooncdc worker stopped cleanly")
	}
	return code
}

// statusWorkersCommand is "mooncdc status --config DIR": which worker of
// the group runs each pipeline, as the group coordinator says. It only
// reads; "mooncdc status --config DIR/FILE" shows one pipeline's tables.
func statusWorkersCommand(ctx context.Context, cf configFlags, wf workerFlags, asJSON bool, environ []string, stdout, stderr io.Writer) int {
	_, cfgs, err := loadConfigDir(wf.apply(cf), environ, validateForResnapshot)
	if err != nil {
		fmt.Fprint(stderr, formatConfigError(err))
		return connector.ExitCode(err)
	}
	wg := group.WorkerGroupOf(cfgs)
	var names []string
	for _, c := range cfgs {
		names = append(names, c.Name)
	}
	opts, err := cfgs[0].KafkaOpts(cfgs[0].Kafka.Brokers)
	var asg []group.Assignment
	if err == nil {
		var cl *kgo.Client
		if cl, err = kgo.NewClient(opts...); err == nil {
			actx, cancel := context.WithTimeout(ctx, statusKafkaTimeout)
			asg, err = group.WorkerAssignment(actx, cl, wg, names)
			cancel()
			cl.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "mooncdc status: could not read the worker group %s: %s\n", group.WorkerGroup(wg), singleLine(err.Error()))
		return connector.ExitRuntime
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"group": group.WorkerGroup(wg), "pipelines": asg})
		return connector.ExitOK
	}
	fmt.Fprintf(stdout, "Worker group %s\n", group.WorkerGroup(wg))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  PIPELINE\tWORKER\tHOST")
	for _, a := range asg {
		worker := a.Worker
		if worker == "" {
			worker = "(none: not assigned)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", a.Pipeline, worker, a.Host)
	}
	_ = tw.Flush()
	return connector.ExitOK
}
