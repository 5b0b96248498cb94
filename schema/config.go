package schema

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Config is what every encoder needs: the source block's identity and
// Debezium's value-mapping options. The zero value of each mode is
// Debezium's default.
type Config struct {
	Name     string // source.name (Debezium's topic.prefix / logical server name)
	Database string // source.db
	Version  string // source.version, e.g. "mooncdc-0.1.0"

	// UnavailableValue is the placeholder for an unchanged TOASTed value
	// (unavailable.value.placeholder); default DefaultUnavailableValue. A
	// value starting with "hex:" gives the placeholder's bytes in hex, as
	// in Debezium.
	UnavailableValue string
	// DecimalMode is decimal.handling.mode: "precise" (default), "double"
	// or "string".
	DecimalMode string
	// BinaryMode is binary.handling.mode: "bytes" (default), "base64",
	// "base64-url-safe" or "hex".
	BinaryMode string
	// TimePrecisionMode is time.precision.mode: "adaptive" (default),
	// "adaptive_time_microseconds", "connect", "microseconds",
	// "nanoseconds" or "isostring".
	TimePrecisionMode string
	// IntervalMode is interval.handling.mode: "numeric" (default) or
	// "string".
	IntervalMode string
	// HstoreMode is hstore.handling.mode: "json" (default) or "map".
	HstoreMode string
	// MoneyFractionDigits is money.fraction.digits: the scale of money in
	// precise mode, 0 to 20; nil is Debezium's default, 2. A pointer
	// because 0 is a setting of its own (whole units, rounded half up).
	MoneyFractionDigits *int
	// IncludeUnknownDatatypes is include.unknown.datatypes: the columns
	// of types Debezium has no schema for are sent (as
	// binary.handling.mode's schema) instead of left out. mooncdc applies
	// it to box, circle, line, lseg, path and polygon; other types without
	// a mapping are always sent as text (see OnUnknownType).
	IncludeUnknownDatatypes bool
	// Route, if set, names a table's records: the name its Connect
	// schemas are derived from (<name>.Key, .Value, .Envelope; Debezium
	// derives them from the topic name, TableSchemaBuilder.java:158-163),
	// and, when keyField is not "", a required string field of that name
	// appended to the key holding keyValue (ByLogicalTableRouter's
	// physical table identifier). It is asked once per relation. Unset,
	// the name is <Name>.<schema>.<table>.
	Route func(schema, table string) (name, keyField, keyValue string)
	// ShapeColumn, if set, says for each column of a table whether it is
	// in record values (Debezium's column.include.list and
	// column.exclude.list; key fields keep every key column) and which
	// mapper rewrites its values (nil for none). It is asked once per
	// column when a relation's plan is built, never per row.
	ShapeColumn func(schema, table, column string) (sent bool, rewrite *ColumnRewrite)
	// KeepNulls writes a NULL as null in a column that has a default.
	// By default (false) a NULL there is written as the column's default,
	// as Kafka Connect's JsonConverter (replace.null.with.default=true)
	// and Confluent's AvroConverter (ignore.default.for.nullables=false)
	// write Debezium's records.
	KeepNulls bool
	// Flat, if set, writes records in the flat envelope, Debezium's
	// ExtractNewRecordState (flat.go); nil writes Debezium's envelope.
	Flat *FlatConfig
	// OnUnknownType, if set, is called once per column of a type mooncdc
	// has no mapping for; the value is sent as its text form.
	OnUnknownType func(table, column, typeName string)
	// PlanFormats, when not zero, are the formats a Plan (NewPlan) serves:
	// it builds their parts only (checking an Avro schema costs a hundred
	// times the rest of a plan). Zero builds every format's parts. An
	// encoder given a plan without its format's parts returns an error.
	PlanFormats PlanFormats
}

// PlanFormats is a set of the formats a Plan serves.
type PlanFormats uint8

// The formats of PlanFormats.
const (
	PlanJSON        PlanFormats = 1 << iota // plain JSON: no part of its own
	PlanJSONSchemas                         // JSON with schemas: the schema heads
	PlanAvro                                // the Avro schemas and their validity
)

// JSONConfig is the former name of Config.
type JSONConfig = Config

// DefaultUnavailableValue is Debezium's default unavailable.value.placeholder.
const DefaultUnavailableValue = "__debezium_unavailable_value"

// The accepted values of each mode, the default first.
var (
	DecimalModes       = []string{"precise", "double", "string"}
	BinaryModes        = []string{"bytes", "base64", "base64-url-safe", "hex"}
	TimePrecisionModes = []string{"adaptive", "adaptive_time_microseconds", "connect", "microseconds", "nanoseconds", "isostring"}
	IntervalModes      = []string{"numeric", "string"}
	HstoreModes        = []string{"json", "map"}
)

// Validate reports every option that is out of its range, naming the
// accepted values.
func (c *Config) Validate() error {
	var errs []error
	check := func(name, v string, ok []string) {
		if v == "" {
			return
		}
		for _, o := range ok {
			if v == o {
				return
			}
		}
		errs = append(errs, fmt.Errorf("%s: %q is not one of %s", name, v, strings.Join(ok, ", ")))
	}
	check("decimal_handling_mode", c.DecimalMode, DecimalModes)
	check("binary_handling_mode", c.BinaryMode, BinaryModes)
	check("time_precision_mode", c.TimePrecisionMode, TimePrecisionModes)
	check("interval_handling_mode", c.IntervalMode, IntervalModes)
	check("hstore_handling_mode", c.HstoreMode, HstoreModes)
	if d := c.MoneyFractionDigits; d != nil && (*d < 0 || *d > 20) {
		errs = append(errs, fmt.Errorf("money_fraction_digits: %d is not within 0..20", *d))
	}
	if _, _, err := placeholder(c.UnavailableValue); err != nil {
		errs = append(errs, fmt.Errorf("unavailable_value_placeholder: %w", err))
	}
	return errors.Join(errs...)
}

// DefaultMoneyFractionDigits is Debezium's money.fraction.digits default
// (PostgresConnectorConfig.java:1151-1158).
const DefaultMoneyFractionDigits = 2

// withDefaults fills in Debezium's defaults.
func (c Config) withDefaults() Config {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&c.UnavailableValue, DefaultUnavailableValue)
	def(&c.DecimalMode, DecimalModes[0])
	def(&c.BinaryMode, BinaryModes[0])
	def(&c.TimePrecisionMode, TimePrecisionModes[0])
	def(&c.IntervalMode, IntervalModes[0])
	def(&c.HstoreMode, HstoreModes[0])
	if c.MoneyFractionDigits == nil {
		d := DefaultMoneyFractionDigits
		c.MoneyFractionDigits = &d
	}
	return c
}

// placeholder returns the TOAST placeholder as bytes and as text: the
// "hex:" prefix gives the bytes in hex (Debezium's
// CommonConnectorConfig.getUnavailableValuePlaceholder); the text is those
// bytes as a string, as Debezium's new String(bytes).
func placeholder(v string) (b []byte, s string, err error) {
	if v == "" {
		v = DefaultUnavailableValue
	}
	if rest, ok := strings.CutPrefix(v, "hex:"); ok {
		b, err = hex.DecodeString(rest)
		if err != nil {
			return nil, "", fmt.Errorf("%q after hex: is not hexadecimal: %w", rest, err)
		}
		if !utf8.Valid(b) {
			return b, strings.ToValidUTF8(string(b), "\uFFFD"), nil
		}
		return b, string(b), nil
	}
	return []byte(v), v, nil
}
