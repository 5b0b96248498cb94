package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
)

// checkTimeout bounds each network step of "mooncdc check": connecting to
// Postgres, each check's catalog queries, reaching Kafka and reading the
// offsets topic, asking the Schema Registry. An unreachable server fails
// its check within it. A variable so that tests can shorten it.
var checkTimeout = 10 * time.Second

// checkEmbeddedAddr is where check looks for the embedded development
// Kafka when kafka.brokers is empty; a variable so that tests can point it
// at a closed port whatever listens on 9092.
var checkEmbeddedAddr = EmbeddedKafkaAddr

// checkCommand is "mooncdc check": with the config run would use, it checks
// what run needs from Postgres, Kafka and the Schema Registry, without
// changing anything, and prints one line per check and a summary. It exits
// 0 when no check failed (warnings allowed), 1 when one did, 2 for a bad
// config. With --config DIR it checks every pipeline of a worker group
// (checkWorkersCommand). It blocks for at most a few checkTimeouts per
// pipeline.
func checkCommand(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) int {
	wf, args, err := cutWorkerFlags("check", args)
	var cf configFlags
	if err == nil {
		cf, err = parseConfigFlags("check", args, false)
	}
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, checkUsage())
		return connector.ExitOK
	}
	if err == nil && wf.id != "" {
		err = &config.ConfigError{Err: errors.New("mooncdc check: --worker-id is for mooncdc run --config DIR")}
	}
	if err == nil && isConfigDir(cf.configPath) {
		return checkWorkersCommand(ctx, cf, wf, environ, stdout, stderr)
	}
	if err == nil && wf.group != "" {
		err = &config.ConfigError{Err: errors.New("mooncdc check: --group is for a worker group: --config DIR")}
	}
	var cfg config.Config
	if err == nil {
		cfg, err = cf.load(environ, config.Config.Validate)
	}
	if code, stop := configFailed(err, "", stdout, stderr); stop {
		return code
	}
	all := checkPipeline(ctx, cfg, stdout, "")
	fmt.Fprintln(stdout, all.summary())
	if all.count(checkFailed) > 0 {
		return connector.ExitRuntime
	}
	return connector.ExitOK
}

// checkPipeline runs every check of one pipeline's cfg and prints each
// line, after indent, as its group (Postgres, Kafka, the registry) is
// done; it returns the lines, without a summary.
func checkPipeline(ctx context.Context, cfg config.Config, stdout io.Writer, indent string) checkLines {
	// Kafka and the registry do not depend on Postgres: they are asked
	// meanwhile, and every group prints in a fixed order.
	kafkaDone, registryDone := make(chan checkLines, 1), make(chan checkLines, 1)
	go func() { kafkaDone <- checkKafka(ctx, cfg) }()
	go func() { registryDone <- checkRegistry(ctx, cfg) }()
	var all checkLines
	for _, group := range []func() checkLines{
		func() checkLines { return checkPostgres(ctx, cfg) },
		func() checkLines { return <-kafkaDone },
		func() checkLines { return <-registryDone },
	} {
		lines := group()
		for _, l := range lines {
			fmt.Fprintln(stdout, indent+l.String())
		}
		all = append(all, lines...)
	}
	return all
}

// ---- lines ----

type checkVerdict int

const (
	checkPassed  checkVerdict = iota // ✓
	checkWarned                      // !: worth acting on, but run works
	checkFailed                      // ✗: run would fail or lose data
	checkSkipped                     // -: could not be checked
)

// checkLine is one printed result: "✓ what: detail", "✗ what: cause — fix",
// "! what: cause — fix" or "- what skipped: cause".
type checkLine struct {
	verdict    checkVerdict
	what, text string // text is the detail, the cause or the skip reason
	fix        string
}

func (l checkLine) String() string {
	switch l.verdict {
	case checkPassed:
		if l.text == "" {
			return "✓ " + l.what
		}
		return "✓ " + l.what + ": " + l.text
	case checkSkipped:
		return "- " + l.what + " skipped: " + l.text
	}
	mark := "✗ "
	if l.verdict == checkWarned {
		mark = "! "
	}
	s := mark + l.what + ": " + l.text
	if l.fix != "" {
		s += " — " + l.fix
	}
	return s
}

type checkLines []checkLine

func (ls *checkLines) pass(what, detail string) {
	*ls = append(*ls, checkLine{verdict: checkPassed, what: what, text: detail})
}

func (ls *checkLines) warn(what, cause, fix string) {
	*ls = append(*ls, checkLine{verdict: checkWarned, what: what, text: cause, fix: fix})
}

func (ls *checkLines) fail(what, cause, fix string) {
	*ls = append(*ls, checkLine{verdict: checkFailed, what: what, text: cause, fix: fix})
}

func (ls *checkLines) skip(what, why string) {
	*ls = append(*ls, checkLine{verdict: checkSkipped, what: what, text: why})
}

func (ls checkLines) count(v checkVerdict) int {
	n := 0
	for _, l := range ls {
		if l.verdict == v {
			n++
		}
	}
	return n
}

func (ls checkLines) summary() string {
	failed, warned, skipped := ls.count(checkFailed), ls.count(checkWarned), ls.count(checkSkipped)
	s := fmt.Sprintf("%d passed, %d %s, %d failed", ls.count(checkPassed), warned, checkPlural(warned, "warning", "warnings"), failed)
	if skipped > 0 {
		s += fmt.Sprintf(", %d skipped", skipped)
	}
	switch {
	case failed > 0:
		return s + ": fix the ✗ lines, then run mooncdc check again"
	case warned > 0:
		return s + ": mooncdc run can start; read the ! lines"
	default:
		return s + ": ready for mooncdc run"
	}
}

func checkPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// checkNames lists names for a message: all of them, or the first few and a
// count of the rest.
func checkNames(names []string) string {
	const maxNames = 10
	if len(names) <= maxNames {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNames], ", "), len(names)-maxNames)
}

// checkOneLine joins the lines of a multi-line error (pgconn lists each
// address it tried) into one, dropping repeats: one line per check.
func checkOneLine(s string) string {
	var b strings.Builder
	var seen []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l == "" || slices.Contains(seen, l) {
			continue
		}
		switch {
		case b.Len() == 0:
		case strings.HasSuffix(b.String(), ":"):
			b.WriteByte(' ')
		default:
			b.WriteString("; ")
		}
		b.WriteString(l)
		seen = append(seen, l)
	}
	return b.String()
}
