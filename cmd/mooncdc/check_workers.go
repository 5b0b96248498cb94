package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/group"
)

// checkWorkersCommand is "mooncdc check --config DIR": every pipeline
// file of a worker group's directory, as "mooncdc run --config DIR" would
// run them. It prints a section for the directory (each file loaded and
// validated on its own, then the rules across the files that run applies,
// group.CheckWorkerConfigs), then a section per file: the file's
// config problems, or every check of checkPipeline and the pipeline's
// summary; then a summary of all. A file whose config is invalid is not
// checked further; the others are, even when the rules across the files
// fail, so that one run of check shows every problem. It exits 0 when no
// line is ✗, 2 when a config problem is (a file's or across the files, as
// run would refuse to start), else 1. It blocks for at most a few
// checkTimeouts per pipeline.
func checkWorkersCommand(ctx context.Context, cf configFlags, wf workerFlags, environ []string, stdout, stderr io.Writer) int {
	pls, err := loadDirPipelines(wf.apply(cf), environ, config.Config.Validate)
	if err != nil {
		fmt.Fprint(stderr, formatConfigError(err))
		return connector.ExitCode(err)
	}
	var files []string
	var cfgs []config.Config
	for _, p := range pls {
		if len(p.errs) == 0 {
			files = append(files, p.file)
			cfgs = append(cfgs, p.cfg)
		}
	}

	fmt.Fprintf(stdout, "Config directory %s: %d pipeline %s, worker group %s\n", cf.configPath, len(pls), checkPlural(len(pls), "file", "files"), group.WorkerGroup(group.WorkerGroupOf(cfgs)))
	var config checkLines
	for _, p := range pls {
		if len(p.errs) > 0 {
			config.fail(p.file, fmt.Sprintf("invalid config (%d %s, below)", len(p.errs), checkPlural(len(p.errs), "problem", "problems")), "fix the file; its pipeline is not checked further")
		} else {
			config.pass(p.file, fmt.Sprintf("pipeline %s", p.cfg.Name))
		}
	}
	switch err := group.CheckWorkerConfigs(files, cfgs); {
	case len(cfgs) == 0:
		config.skip("rules across the files", "no file is valid")
	case err != nil:
		for _, line := range configErrorLines(err) {
			config.fail("across the files", line, "")
		}
	default:
		what := fmt.Sprintf("rules across the %d valid %s", len(cfgs), checkPlural(len(cfgs), "file", "files"))
		config.pass(what, "names and slots distinct, one Kafka cluster, one metrics.listen, one worker_group")
	}
	for _, l := range config {
		fmt.Fprintln(stdout, "  "+l.String())
	}

	all := append(checkLines{}, config...)
	if shared := checkSharedCapacity(ctx, cfgs); len(shared) > 0 {
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, "Postgres servers shared by pipelines")
		for _, l := range shared {
			fmt.Fprintln(stdout, "  "+l.String())
		}
		all = append(all, shared...)
	}
	for _, p := range pls {
		fmt.Fprintln(stdout)
		if len(p.errs) > 0 {
			fmt.Fprintf(stdout, "%s: invalid config\n", p.file)
			var lines checkLines
			for _, e := range p.errs {
				lines.fail("config", strings.TrimPrefix(e.Error(), p.file+": "), "")
			}
			for _, l := range lines {
				fmt.Fprintln(stdout, "  "+l.String())
			}
			continue
		}
		fmt.Fprintf(stdout, "Pipeline %s (%s)\n", p.cfg.Name, p.file)
		lines := checkPipeline(ctx, p.cfg, stdout, "  ")
		fmt.Fprintln(stdout, "  "+lines.summary())
		all = append(all, lines...)
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(stdout, "All %d pipeline %s: %s\n", len(pls), checkPlural(len(pls), "file", "files"), all.summary())
	switch {
	case config.count(checkFailed) > 0:
		return connector.ExitConfig
	case all.count(checkFailed) > 0:
		return connector.ExitRuntime
	}
	return connector.ExitOK
}

// configErrorLines is err's problems, one per line (a *ConfigError joins
// them).
func configErrorLines(err error) []string {
	var ce *config.ConfigError
	if errors.As(err, &ce) {
		err = ce.Err
	}
	return strings.Split(strings.TrimSpace(err.Error()), "\n")
}
