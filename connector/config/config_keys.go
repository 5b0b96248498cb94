package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// This file holds the config keys, found by reflection over the yaml tags:
// their environment variables, Set (the flags), and the MOONCDC_* variables.

// configKey is one leaf of Config, found by reflection over yaml tags.
type configKey struct {
	path   string // dotted yaml path, e.g. kafka.topic_partitions
	env    string // MOONCDC_KAFKA_TOPIC_PARTITIONS
	index  []int
	typ    reflect.Type
	secret string
}

var durationType = reflect.TypeFor[time.Duration]()

var configKeys = sync.OnceValue(func() []configKey {
	var keys []configKey
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			name := yamlName(f)
			if name == "" {
				continue
			}
			path := name
			if prefix != "" {
				path = prefix + "." + name
			}
			idx := append(slices.Clone(index), i)
			if f.Type.Kind() == reflect.Struct && f.Type != durationType {
				walk(f.Type, path, idx)
				continue
			}
			keys = append(keys, configKey{
				path:   path,
				env:    EnvVar(path),
				index:  idx,
				typ:    f.Type,
				secret: f.Tag.Get("secret"),
			})
		}
	}
	walk(reflect.TypeFor[Config](), "", nil)
	return keys
})

func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

func lookupKey(path string) (configKey, bool) {
	for _, k := range configKeys() {
		if k.path == path {
			return k, true
		}
	}
	return configKey{}, false
}

// ConfigKeys returns every configuration key as a dotted path
// (name, postgres.url, kafka.topic_partitions, …) in declaration order.
func ConfigKeys() []string {
	var out []string
	for _, k := range configKeys() {
		out = append(out, k.path)
	}
	return out
}

// EnvVar returns the environment variable for a dotted key path:
// MOONCDC_ followed by the path upper-cased with dots turned into '_'
// (kafka.topic_partitions → MOONCDC_KAFKA_TOPIC_PARTITIONS).
func EnvVar(path string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

// Set sets one key, given as a dotted path, from its text form, the way an
// environment variable or flag does: lists are comma-separated (commas inside
// double quotes do not split, so "a,b".t is one table), and an empty value
// makes an empty list or string. The error says what the value should be.
func (c *Config) Set(path, value string) error {
	k, ok := lookupKey(path)
	if !ok {
		return fmt.Errorf("unknown key %q", path)
	}
	fv := reflect.ValueOf(c).Elem().FieldByIndex(k.index)
	return setFromString(fv, value)
}

func setFromString(fv reflect.Value, value string) error {
	if fv.Type() == durationType {
		d, err := time.ParseDuration(strings.TrimSpace(value))
		if err != nil {
			return fmt.Errorf("%q is not a duration; write a number with a unit, e.g. 10s, 1m30s or 500ms", value)
		}
		fv.SetInt(int64(d))
		return nil
	}
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(value)
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return fmt.Errorf("%q is not a boolean; use true or false", value)
		}
		fv.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, fv.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not an integer in the range of %s", value, fv.Type().Kind())
		}
		fv.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(strings.TrimSpace(value), 10, fv.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a non-negative integer in the range of %s", value, fv.Type().Kind())
		}
		fv.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(value), fv.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a number", value)
		}
		fv.SetFloat(f)
	case reflect.Slice:
		if fv.Type().Elem().Kind() == reflect.Struct {
			// A list of rules: YAML's flow form, e.g.
			// [{columns: [public.users.ssn], chars: 8}].
			ptr := reflect.New(fv.Type())
			if err := yaml.Unmarshal([]byte(value), ptr.Interface()); err != nil {
				return fmt.Errorf("%q is not a YAML list of rules, e.g. [{columns: [public.users.ssn], chars: 8}]: %v", value, err)
			}
			fv.Set(ptr.Elem())
			return nil
		}
		if fv.Type().Elem().Kind() != reflect.String {
			panic("connector: unsupported config list type " + fv.Type().String())
		}
		items := SplitList(value)
		s := reflect.MakeSlice(fv.Type(), len(items), len(items))
		for i, it := range items {
			s.Index(i).SetString(it)
		}
		fv.Set(s)
	case reflect.Map:
		if fv.Type() == reflect.TypeFor[map[string]string]() {
			// Properties (transforms): a JSON object of strings.
			var m map[string]string
			if err := json.Unmarshal([]byte(value), &m); err != nil {
				return fmt.Errorf("%q is not a JSON object of strings, e.g. {\"transforms\":\"addRegion\",\"transforms.addRegion.type\":\"…\"}: %v", value, err)
			}
			if m == nil {
				m = map[string]string{}
			}
			fv.Set(reflect.ValueOf(m))
			return nil
		}
		if fv.Type() != reflect.TypeFor[map[string][]string]() {
			panic("connector: unsupported config map type " + fv.Type().String())
		}
		m, err := parseKeyColumns(value)
		if err != nil {
			return err
		}
		fv.Set(reflect.ValueOf(m))
	default:
		panic("connector: unsupported config field type " + fv.Type().String())
	}
	return nil
}

// parseKeyColumns reads a table → columns map in Debezium's
// message.key.columns form, "<table>:<column>,<column>;<table>:<column>"
// (CustomKeyMapper, Key.java:74-81); empty gives an empty map.
func parseKeyColumns(value string) (map[string][]string, error) {
	m := map[string][]string{}
	for _, entry := range strings.Split(value, ";") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		table, cols, ok := strings.Cut(entry, ":")
		if !ok || strings.TrimSpace(table) == "" || len(SplitList(cols)) == 0 {
			return nil, fmt.Errorf("%q is not <table>:<column>,<column>; separate tables with ';', e.g. public.events:tenant_id,event_id;public.logs:id", entry)
		}
		m[strings.TrimSpace(table)] = SplitList(cols)
	}
	return m, nil
}

// SplitList splits a comma-separated list, trimming spaces and dropping empty
// items. A comma inside double quotes does not split, so quoted identifiers
// such as "a,b".orders survive.
func SplitList(s string) []string {
	var out []string
	start, quoted := 0, false
	add := func(item string) {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				add(s[start:i])
				start = i + 1
			}
		}
	}
	add(s[start:])
	return out
}

// applyEnv sets every key that has a MOONCDC_* variable in environ
// ("KEY=value" entries, as os.Environ returns). Unknown MOONCDC_* variables
// are errors, to catch typos. The first entry of a duplicated variable wins,
// as with os.Getenv.
func (c *Config) applyEnv(environ []string) error {
	vals := map[string]string{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		if _, dup := vals[name]; !dup {
			vals[name] = value
		}
	}
	byEnv := map[string]configKey{}
	for _, k := range configKeys() {
		byEnv[k.env] = k
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		k, ok := byEnv[name]
		if !ok {
			msg := fmt.Sprintf("%s: unknown variable (all %s* variables are reserved for configuration)", name, EnvPrefix)
			if s := suggest(name, slices.Collect(maps.Keys(byEnv))); s != "" {
				msg += "; did you mean " + s + "?"
			}
			errs = append(errs, errors.New(msg))
			continue
		}
		fv := reflect.ValueOf(c).Elem().FieldByIndex(k.index)
		if err := setFromString(fv, vals[name]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w (sets %s)", name, err, k.path))
		}
	}
	return errors.Join(errs...)
}

// suggest returns the candidate closest to s by edit distance, if close.
func suggest(s string, candidates []string) string {
	best, bestD := "", 4
	for _, c := range slices.Sorted(slices.Values(candidates)) {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
