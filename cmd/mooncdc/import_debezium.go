package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mooncdc/mooncdc/connector"
)

// This file is "mooncdc import-debezium FILE": it reads a Debezium
// PostgreSQL connector config, as JSON for Kafka Connect's REST API
// ({"name":…,"config":{…}} or the bare config map) or as a .properties
// file, and prints the mooncdc YAML for it (import_debezium_map.go) with
// every property it could not map listed, with the reason, as comments
// and on stderr.

func importDebeziumUsage() string {
	return `Usage: mooncdc import-debezium [--brokers HOST:PORT,...] [--offsets-topic TOPIC] FILE

Converts a Debezium PostgreSQL connector config into mooncdc YAML on stdout.
FILE is JSON as sent to Kafka Connect's REST API ({"name":…,"config":{…}} or the
bare config map) or a .properties file; "-" reads stdin. Every option that
cannot be mapped is listed, with the reason, in the YAML's comments and on
stderr. Keys that this mooncdc version does not support yet are written
anyway, marked, so that 'mooncdc run' refuses the file rather than run without
them. Passwords are never copied into the output.

Flags:
  --brokers HOST:PORT,...
        the Kafka Connect worker's bootstrap.servers (kafka.brokers)
  --offsets-topic TOPIC
        the Kafka Connect worker's offset.storage.topic (default connect-offsets),
        for migrate_from.debezium

Exit codes: 0 converted (even with options not mapped), 2 the file cannot be
read or is not a Debezium PostgreSQL connector config.
`
}

// importDebeziumCommand is "mooncdc import-debezium".
func importDebeziumCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import-debezium", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	brokers := fs.String("brokers", "", "")
	offsetsTopic := fs.String("offsets-topic", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, importDebeziumUsage())
			return connector.ExitOK
		}
		fmt.Fprintf(stderr, "mooncdc import-debezium: %v\n\n%s", err, importDebeziumUsage())
		return connector.ExitConfig
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "mooncdc import-debezium: give one FILE\n\n%s", importDebeziumUsage())
		return connector.ExitConfig
	}
	path := fs.Arg(0)
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mooncdc import-debezium: %v\n", err)
		return connector.ExitConfig
	}
	props, err := parseConnectorConfig(data)
	if err != nil {
		fmt.Fprintf(stderr, "mooncdc import-debezium: %s: %v\n", path, err)
		return connector.ExitConfig
	}
	out, findings, err := convertDebezium(props, importOptions{Brokers: splitList(*brokers), OffsetsTopic: *offsetsTopic}, loaderSupports)
	if err != nil {
		fmt.Fprintf(stderr, "mooncdc import-debezium: %s: %v\n", path, err)
		return connector.ExitConfig
	}
	_, _ = stdout.Write(out)
	for _, f := range findings {
		kind := "not mapped"
		if f.Mapped {
			kind = "note"
		}
		fmt.Fprintf(stderr, "import-debezium: %s: %s: %s\n", kind, f.Property, f.Reason)
	}
	return connector.ExitOK
}

// convertDebezium converts props to the YAML text and its findings.
func convertDebezium(props map[string]string, opts importOptions, supported func(string) bool) ([]byte, []finding, error) {
	res, err := importDebezium(props, opts, supported)
	if err != nil {
		return nil, nil, err
	}
	var head strings.Builder
	fmt.Fprintf(&head, "mooncdc config converted by 'mooncdc import-debezium' from the Debezium PostgreSQL connector %q.\n", res.Name)
	head.WriteString("Keys marked \"" + notSupported + "\" make 'mooncdc run' refuse\n")
	head.WriteString("this file until they are supported: remove them only if running without them is acceptable.\n")
	head.WriteString("Passwords are not copied: see postgres.password_file and the MOONCDC_* variables.")
	var not, notes []finding
	for _, f := range res.Findings {
		if f.Mapped {
			notes = append(notes, f)
		} else {
			not = append(not, f)
		}
	}
	for _, group := range []struct {
		title string
		fs    []finding
	}{{"Not mapped", not}, {"Mapped with a difference", notes}} {
		if len(group.fs) == 0 {
			continue
		}
		fmt.Fprintf(&head, "\n\n%s (%d):", group.title, len(group.fs))
		for _, f := range group.fs {
			fmt.Fprintf(&head, "\n  %s: %s", f.Property, f.Reason)
		}
	}
	out, err := res.Tree.encode(head.String())
	if err != nil {
		return nil, nil, err
	}
	return out, res.Findings, nil
}

// parseConnectorConfig reads JSON ({"name":…,"config":{…}} or a bare map of
// properties) or Java properties into a map; the connector's name, when the
// JSON gives it beside "config", is under "name".
func parseConnectorConfig(data []byte) (map[string]string, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not UTF-8 text; give the connector config as JSON or .properties")
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("empty; give the connector config as JSON or .properties")
	}
	var props map[string]string
	var err error
	if trimmed[0] == '{' {
		props, err = parseConnectorJSON(trimmed)
	} else {
		props, err = parseProperties(string(data))
	}
	if err != nil {
		return nil, err
	}
	if len(props) == 0 {
		return nil, errors.New("holds no properties")
	}
	if _, ok := props["connector.class"]; !ok {
		if _, ok := props["database.hostname"]; !ok {
			return nil, errors.New("has neither connector.class nor database.hostname: not a Debezium connector config")
		}
	}
	return props, nil
}

func parseConnectorJSON(data []byte) (map[string]string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("JSON: %w", err)
	}
	name := ""
	if raw, ok := top["config"]; ok {
		if n, ok := top["name"]; ok {
			if err := json.Unmarshal(n, &name); err != nil {
				return nil, fmt.Errorf("JSON: \"name\" is not a string")
			}
		}
		top = nil
		if err := json.Unmarshal(raw, &top); err != nil {
			return nil, fmt.Errorf("JSON: \"config\" is not an object of properties: %w", err)
		}
	}
	props := make(map[string]string, len(top))
	for k, raw := range top {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("JSON: %s: %w", k, err)
		}
		switch v := v.(type) {
		case string:
			props[k] = v
		case bool:
			props[k] = strconv.FormatBool(v)
		case float64:
			props[k] = strings.TrimSpace(string(raw))
		case nil:
		default:
			return nil, fmt.Errorf("JSON: %s: Kafka Connect takes strings, numbers and booleans, not %s", k, bytes.TrimSpace(raw))
		}
	}
	if name != "" {
		props["name"] = name
	}
	return props, nil
}

// parseProperties reads the Java .properties format (java.util.Properties.load):
// "key=value", "key: value" or "key value" lines, '#' and '!' comments, a
// trailing backslash continuing a line, and the escapes \t \n \r \f \uXXXX
// and \<char>.
func parseProperties(s string) (map[string]string, error) {
	props := map[string]string{}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for endsWithOddBackslashes(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		line = strings.TrimSuffix(line, `\`)
		// The key ends at the first unescaped '=', ':' or white space.
		end := len(line)
		for j := 0; j < len(line); j++ {
			if line[j] == '\\' {
				j++
				continue
			}
			if strings.IndexByte("=: \t\f", line[j]) >= 0 {
				end = j
				break
			}
		}
		rawKey, rest := line[:end], line[end:]
		rest = strings.TrimLeft(rest, " \t\f")
		if rest != "" && (rest[0] == '=' || rest[0] == ':') {
			rest = strings.TrimLeft(rest[1:], " \t\f")
		}
		key, err := unescapeProperty(rawKey)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		val, err := unescapeProperty(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		props[key] = val
	}
	return props, nil
}

// hex4 reads four hex digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(s[i:i+4], 16, 16)
	return rune(n), err == nil
}

func endsWithOddBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func unescapeProperty(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, ok := hex4(s, i+1)
			if !ok {
				return "", fmt.Errorf("malformed \\u escape in %q", s)
			}
			i += 4
			if utf16.IsSurrogate(r) && strings.HasPrefix(s[i+1:], `\u`) {
				if r2, ok := hex4(s, i+3); ok {
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						r = pair
						i += 6
					}
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}
