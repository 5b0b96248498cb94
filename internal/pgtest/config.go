package pgtest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// confFile is written into the data directory on every Start and included
// from the end of postgresql.conf, so it overrides initdb's choices and can be
// rewritten (for a new port) without growing postgresql.conf.
const confFile = "pgtest.conf"

// defaultSettings are the server settings of every cluster before
// Options.Settings is applied.
//
// synchronous_commit stays on although the brief for this package asked for
// off: with fsync off a synchronous commit costs only a write(2), while an
// asynchronous one (a) is lost by Stop("immediate") if the WAL writer has not
// yet written it, and (b) reaches a walsender, which streams only flushed WAL,
// up to wal_writer_delay (200ms) late.
func defaultSettings(port int) map[string]string {
	return map[string]string{
		"listen_addresses":        "127.0.0.1",
		"port":                    strconv.Itoa(port),
		"unix_socket_directories": "", // TCP only; socket paths over ~100 bytes fail
		"wal_level":               "logical",
		"max_replication_slots":   "32",
		"max_wal_senders":         "32",
		"wal_sender_timeout":      "60s",
		"fsync":                   "off",
		"synchronous_commit":      "on",
		"full_page_writes":        "off",
		"shared_buffers":          "128MB",
		"max_connections":         "100",
		"logging_collector":       "off", // output goes to pg_ctl's stdout, our pipe
		"log_destination":         "stderr",
		"log_min_messages":        "warning",
	}
}

// settings merges overrides into the defaults. The port is Options.Port's
// business: a port set here would make URL lie.
func settings(port int, overrides map[string]string) (map[string]string, error) {
	s := defaultSettings(port)
	for k, v := range overrides {
		if k == "port" {
			return nil, fmt.Errorf("set Options.Port, not Settings[%q]", k)
		}
		s[k] = v
	}
	return s, nil
}

// renderConfig returns postgresql.conf lines for s, sorted by name. Values are
// raw (wal_level: logical, not 'logical'); every value is written as a quoted
// string, which the server accepts for settings of any type.
func renderConfig(s map[string]string) ([]byte, error) {
	var b strings.Builder
	b.WriteString("# Written by pgtest on every start; edits are lost.\n")
	for _, k := range slices.Sorted(maps.Keys(s)) {
		if !validName(k) {
			return nil, fmt.Errorf("invalid setting name %q", k)
		}
		fmt.Fprintf(&b, "%s = %s\n", k, quoteConf(s[k]))
	}
	return []byte(b.String()), nil
}

func validName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// quoteConf quotes v for postgresql.conf, whose quoted strings take
// backslash escapes and doubled single quotes.
func quoteConf(v string) string {
	v = strings.NewReplacer(`\`, `\\`, `'`, `''`, "\n", `\n`, "\r", `\r`).Replace(v)
	return "'" + v + "'"
}

// includeConf makes the initdb-written postgresql.conf include confFile last.
func includeConf(dataDir string) error {
	f, err := os.OpenFile(filepath.Join(dataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "\ninclude_if_exists = '%s'\n", confFile)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeConfig writes s to confFile in dataDir, owned by the server user.
func writeConfig(dataDir string, s map[string]string, u serverUser) error {
	conf, err := renderConfig(s)
	if err != nil {
		return err
	}
	path := filepath.Join(dataDir, confFile)
	if err := os.WriteFile(path, conf, 0o600); err != nil {
		return err
	}
	return u.chown(path)
}
