package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// This file loads a Config from a YAML file and the environment.

// LoadConfig builds a Config from DefaultConfig, then the YAML file at path
// ("" means no file), then the MOONCDC_* variables in environ. Unknown keys
// in the file and unknown MOONCDC_* variables are errors. It neither applies
// the derived defaults nor validates: the caller does both, after applying
// flags. Errors are *ConfigError, naming the file and line or the variable.
func LoadConfig(path string, environ []string) (Config, error) {
	cfg := DefaultConfig()
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return Config{}, &ConfigError{Err: fmt.Errorf("config file: %w", err)}
		}
		if err := decodeYAML(path, data, &cfg); err != nil {
			return Config{}, &ConfigError{Err: err}
		}
	}
	if err := cfg.applyEnv(environ); err != nil {
		return Config{}, &ConfigError{Err: err}
	}
	return cfg, nil
}

// decodeYAML decodes data over cfg key by key, so that every error names the
// key path and line, unknown keys are rejected (like yaml.v3's KnownFields,
// but with the full path and a suggestion) and duplicate keys are caught.
func decodeYAML(file string, data []byte, cfg *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // empty file
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: holds more than one YAML document; keep one", file)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	var errs []error
	decodeMapping(file, root, "", reflect.ValueOf(cfg).Elem(), &errs)
	return errors.Join(errs...)
}

func decodeMapping(file string, n *yaml.Node, prefix string, v reflect.Value, errs *[]error) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if isNull(n) {
		return
	}
	where := prefix
	if where == "" {
		where = "top level"
	}
	if n.Kind != yaml.MappingNode {
		*errs = append(*errs, fmt.Errorf("%s:%d: %s: expected a mapping of keys, found %s", file, n.Line, where, describeNode(n)))
		return
	}
	fields := map[string]reflect.StructField{}
	var names []string
	for i := range v.NumField() {
		if name := yamlName(v.Type().Field(i)); name != "" {
			fields[name] = v.Type().Field(i)
			names = append(names, name)
		}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		key := kn.Value
		path := key
		if prefix != "" {
			path = prefix + "." + key
		}
		if first, dup := seen[key]; dup {
			*errs = append(*errs, fmt.Errorf("%s:%d: %s: duplicate key (first set on line %d)", file, kn.Line, path, first))
			continue
		}
		seen[key] = kn.Line
		f, ok := fields[key]
		if !ok {
			msg := fmt.Sprintf("%s:%d: unknown key %s", file, kn.Line, path)
			if s := suggest(key, names); s != "" {
				if prefix != "" {
					s = prefix + "." + s
				}
				msg += "; did you mean " + s + "?"
			} else {
				msg += fmt.Sprintf("; known keys under %s: %s", where, strings.Join(names, ", "))
			}
			*errs = append(*errs, errors.New(msg))
			continue
		}
		fv := v.FieldByIndex(f.Index)
		if f.Type.Kind() == reflect.Struct && f.Type != durationType {
			decodeMapping(file, vn, path, fv, errs)
			continue
		}
		if isNull(vn) {
			// "listen:" with no value means empty, as the comments in the
			// reference config promise ("empty disables").
			fv.Set(reflect.Zero(fv.Type()))
			continue
		}
		if path == "postgres.tables" {
			decodeTables(file, vn, v.Addr().Interface().(*PostgresConfig), errs)
			continue
		}
		if f.Type == durationType {
			// Parsed like the environment and flags do, so "10s" means the
			// same everywhere and a bare number (no unit) is refused.
			sn := vn
			for sn.Kind == yaml.AliasNode && sn.Alias != nil {
				sn = sn.Alias
			}
			if sn.Kind != yaml.ScalarNode {
				*errs = append(*errs, fmt.Errorf("%s:%d: %s: expected a duration such as 10s or 1m30s, found %s", file, vn.Line, path, describeNode(sn)))
			} else if err := setFromString(fv, sn.Value); err != nil {
				*errs = append(*errs, fmt.Errorf("%s:%d: %s: %v", file, vn.Line, path, err))
			}
			continue
		}
		if err := vn.Decode(fv.Addr().Interface()); err != nil {
			*errs = append(*errs, fmt.Errorf("%s:%d: %s: %s", file, vn.Line, path, yamlErrorText(err)))
		}
	}
}

func isNull(n *yaml.Node) bool {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	default:
		return "something else"
	}
}

var yamlLineRE = regexp.MustCompile(`^line \d+: `)

// yamlErrorText drops yaml.v3's "yaml: unmarshal errors:\n  line N:" framing:
// the caller names the file, line and key itself.
func yamlErrorText(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var parts []string
		for _, e := range te.Errors {
			parts = append(parts, yamlLineRE.ReplaceAllString(e, ""))
		}
		return strings.Join(parts, "; ")
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// decodeTables reads postgres.tables: a list of table patterns, each either
// a string or a mapping {table, where, columns} that adds a row filter and
// a column list (TableFilters).
func decodeTables(file string, n *yaml.Node, pc *PostgresConfig, errs *[]error) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.SequenceNode {
		if err := n.Decode(&pc.Tables); err != nil {
			*errs = append(*errs, fmt.Errorf("%s:%d: postgres.tables: %s", file, n.Line, yamlErrorText(err)))
		}
		return
	}
	pc.Tables = nil
	for _, item := range n.Content {
		if item.Kind != yaml.MappingNode {
			var s string
			if err := item.Decode(&s); err != nil {
				*errs = append(*errs, fmt.Errorf("%s:%d: postgres.tables: %s", file, item.Line, yamlErrorText(err)))
				continue
			}
			pc.Tables = append(pc.Tables, s)
			continue
		}
		var tf TableFilter
		for i := 0; i+1 < len(item.Content); i += 2 {
			switch k := item.Content[i].Value; k {
			case "table", "where", "columns":
			default:
				*errs = append(*errs, fmt.Errorf("%s:%d: unknown key postgres.tables[].%s; an entry is a table pattern or {table, where, columns}", file, item.Content[i].Line, k))
			}
		}
		if err := item.Decode(&tf); err != nil {
			*errs = append(*errs, fmt.Errorf("%s:%d: postgres.tables: %s", file, item.Line, yamlErrorText(err)))
			continue
		}
		if tf.Table == "" {
			*errs = append(*errs, fmt.Errorf("%s:%d: postgres.tables: an entry with where or columns needs table: schema.table", file, item.Line))
			continue
		}
		pc.Tables = append(pc.Tables, tf.Table)
		if pc.TableFilters == nil {
			pc.TableFilters = map[string]TableFilter{}
		}
		pc.TableFilters[tf.Table] = tf
	}
}
