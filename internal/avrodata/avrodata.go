package avrodata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// This file converts a Connect schema into an Avro schema, as AvroData does.
// AvroData.java line numbers in this package cite
// avro-data/src/main/java/io/confluent/connect/avro/AvroData.java
// of confluentinc/schema-registry (the mirror's HEAD). The options are
// AvroConverter's defaults (AvroDataConfig.java:28-56): connect.meta.data
// true, enhanced.avro.schema.support false, scrub.invalid.names false,
// allow.optional.map.keys false, discard.type.doc.default false,
// generalized sum types off.

// converter is AvroData.fromConnectSchema's FromConnectContext
// (AvroData.java:2815-) with the converter's own caches.
type converter struct {
	schemaMap      map[string]*avroSchema // required Connect schemas already converted (AvroData.java:823-828, 1118-1120)
	cycleRefs      map[string]*avroSchema // records by Connect name (AvroData.java:987-989)
	seenNamedTypes map[string]bool        // AvroData.java:1248-1250
}

// FromConnectJSON returns the Avro schema that Confluent's AvroData, with
// AvroConverter's default options, derives from the Connect schema whose
// JsonConverter JSON is connectJSON, printed as Avro's Schema.toString
// prints it (what the AvroConverter registers).
func FromConnectJSON(connectJSON []byte) (string, error) {
	s, _, err := parseConnect(connectJSON)
	if err != nil {
		return "", fmt.Errorf("read the Connect schema: %w", err)
	}
	c := &converter{schemaMap: map[string]*avroSchema{}, cycleRefs: map[string]*avroSchema{}, seenNamedTypes: map[string]bool{}}
	a, err := c.fromConnect(s, false)
	if err != nil {
		return "", err
	}
	w := &writer{names: map[string]*avroSchema{}}
	if err := w.schema(a); err != nil {
		return "", err
	}
	return w.buf.String(), nil
}

// fromConnect is AvroData.fromConnectSchema(schema, ctx, ignoreOptional)
// (AvroData.java:816-1122).
func (c *converter) fromConnect(s *connectSchema, ignoreOptional bool) (*avroSchema, error) {
	// No Connect union (io.confluent.connect.avro.Union) occurs in
	// Debezium's schemas, so isUnionSchema is always false here.
	if !s.Optional {
		if cached := c.schemaMap[s.identity]; cached != nil { // AvroData.java:823-828
			return cached, nil
		}
	}
	var connectType string
	var base *avroSchema
	switch s.Type {
	case "int8": // AvroData.java:835-838
		connectType, base = "int8", &avroSchema{typ: "int"}
	case "int16": // AvroData.java:839-842
		connectType, base = "int16", &avroSchema{typ: "int"}
	case "int32":
		base = &avroSchema{typ: "int"}
	case "int64":
		base = &avroSchema{typ: "long"}
	case "float":
		base = &avroSchema{typ: "float"}
	case "double":
		base = &avroSchema{typ: "double"}
	case "boolean":
		base = &avroSchema{typ: "boolean"}
	case "string": // AvroData.java:858-887: enums only with enhanced/generalized support, off
		base = &avroSchema{typ: "string"}
	case "bytes": // AvroData.java:888-913 (no connect.fixed.size in these schemas)
		base = &avroSchema{typ: "bytes"}
		if strings.EqualFold(s.Name, decimalName) {
			scale, _ := s.param("scale")
			n, err := strconv.Atoi(scale)
			if err != nil {
				return nil, fmt.Errorf("decimal scale %q: %w", scale, err)
			}
			_ = base.addProp("scale", json.RawMessage(strconv.Itoa(n)))
			precision := 64 // CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT, AvroData.java:281
			if p, ok := s.param("connect.decimal.precision"); ok {
				if precision, err = strconv.Atoi(p); err != nil {
					return nil, fmt.Errorf("decimal precision %q: %w", p, err)
				}
			}
			_ = base.addProp("precision", json.RawMessage(strconv.Itoa(precision)))
		}
	case "array": // AvroData.java:914-917
		items, err := c.withCycle(s.Items, false)
		if err != nil {
			return nil, err
		}
		base = &avroSchema{typ: "array", items: items}
	case "map": // AvroData.java:918-958
		if s.Keys.Type == "string" && !s.Keys.Optional {
			values, err := c.withCycle(s.Values, false)
			if err != nil {
				return nil, err
			}
			base = &avroSchema{typ: "map", values: values}
		} else {
			entry := &avroSchema{typ: "record", name: "MapEntry", ns: "io.confluent.connect.avro"}
			if s.Name != "" {
				entry.ns, entry.name = splitName(s.Name)
				_ = entry.addProp("connect.internal.type", jsonString("MapEntry"))
			}
			for _, kv := range []struct {
				name string
				s    *connectSchema
			}{{"key", s.Keys}, {"value", s.Values}} {
				f, err := c.recordField(kv.name, kv.s)
				if err != nil {
					return nil, err
				}
				entry.fields = append(entry.fields, f)
			}
			base = &avroSchema{typ: "array", items: entry}
		}
	case "struct":
		if s.Optional { // AvroData.java:972-977
			inner, err := c.withCycle(s.nonOptional(), false)
			if err != nil {
				return nil, err
			}
			base = &avroSchema{typ: "union", branches: []*avroSchema{{typ: "null"}, inner}}
			break
		}
		// AvroData.java:978-1000. The record's doc is the parameter
		// io.confluent.connect.avro.record.doc, never the Connect doc;
		// a field's doc is io.confluent.connect.avro.field.doc.<name>.
		ns, name := splitName(s.Name)
		if err := validName(name); s.Name != "" && err != nil {
			return nil, fmt.Errorf("record name: %w", err)
		}
		if s.Name == "" {
			ns, name = "io.confluent.connect.avro", "ConnectDefault" // getNameOrDefault, AvroData.java:1124-1132 (first use)
		}
		base = &avroSchema{typ: "record", name: name, ns: ns}
		if d, ok := s.param("io.confluent.connect.avro.record.doc"); ok {
			base.doc = &d
		}
		if s.Name != "" {
			c.cycleRefs[s.Name] = base
		}
		for _, f := range s.Fields {
			af, err := c.recordField(f.name, f.schema)
			if err != nil {
				return nil, err
			}
			if d, ok := s.param("io.confluent.connect.avro.field.doc." + f.name); ok {
				af.doc = &d
			}
			base.fields = append(base.fields, af)
		}
	default:
		return nil, fmt.Errorf("unknown schema type %q", s.Type)
	}
	base.connectID = s.Name

	final := base
	if base.typ != "union" { // AvroData.java:1006-1116
		// connect.meta.data (AvroData.java:1008-1037)
		if s.Doc != nil {
			if err := base.addProp("connect.doc", jsonString(*s.Doc)); err != nil {
				return nil, err
			}
		}
		if s.Version != nil {
			if err := base.addProp("connect.version", json.RawMessage(strconv.FormatInt(*s.Version, 10))); err != nil {
				return nil, err
			}
		}
		if len(s.Params) > 0 { // parametersFromConnect, AvroData.java:1461-1469
			var b bytes.Buffer
			b.WriteByte('{')
			n := 0
			for _, p := range s.Params {
				if p.key == "io.confluent.connect.avro.field.default" {
					continue
				}
				if n > 0 {
					b.WriteByte(',')
				}
				b.Write(jsonString(p.key))
				b.WriteByte(':')
				b.Write(jsonString(p.value))
				n++
			}
			b.WriteByte('}')
			if n > 0 {
				if err := base.addProp("connect.parameters", b.Bytes()); err != nil {
					return nil, err
				}
			}
		}
		if s.Default != nil {
			if _, flag := s.param("io.confluent.connect.avro.field.default"); !flag {
				d, err := avroDefault(s, s.Default)
				if err != nil {
					return nil, err
				}
				if err := base.addProp("connect.default", d); err != nil {
					return nil, err
				}
			}
		}
		if s.Name != "" {
			if err := base.addProp("connect.name", jsonString(s.Name)); err != nil {
				return nil, err
			}
		}
		if connectType != "" {
			if err := base.addProp("connect.type", jsonString(connectType)); err != nil {
				return nil, err
			}
		}
		// Logical types (AvroData.java:1039-1100): LogicalType.addToSchema
		// sets logicalType (Decimal also precision and scale, present
		// already); the legacy property below it has the same value.
		var logical string
		switch {
		case strings.EqualFold(s.Name, decimalName):
			logical = "decimal"
		case strings.EqualFold(s.Name, timeName):
			logical = "time-millis"
		case strings.EqualFold(s.Name, timestampName):
			logical = "timestamp-millis"
		case strings.EqualFold(s.Name, dateName):
			logical = "date"
		}
		if logical != "" {
			if err := base.addProp("logicalType", jsonString(logical)); err != nil {
				return nil, err
			}
		}
		for _, p := range s.Params { // AvroData.java:1102-1108
			if strings.HasPrefix(p.key, "avro") {
				if err := base.addProp(p.key, jsonString(p.value)); err != nil {
					return nil, err
				}
			}
		}
		if !ignoreOptional {
			final = maybeOptional(s, base)
		}
	}
	if !s.Optional {
		c.schemaMap[s.identity] = final
	}
	return final, nil
}

// maybeOptional is AvroData.maybeMakeOptional (AvroData.java:1134-1150):
// an optional schema is a union with null, null first unless the schema
// has a default (a union's default must match its first branch).
func maybeOptional(s *connectSchema, base *avroSchema) *avroSchema {
	if !s.Optional {
		return base
	}
	if s.Default != nil {
		return &avroSchema{typ: "union", branches: []*avroSchema{base, {typ: "null"}}}
	}
	return &avroSchema{typ: "union", branches: []*avroSchema{{typ: "null"}, base}}
}

// withCycle is AvroData.fromConnectSchemaWithCycle (AvroData.java:1219-1232).
func (c *converter) withCycle(s *connectSchema, ignoreOptional bool) (*avroSchema, error) {
	if r, ok := c.cycleRefs[s.Name]; ok && s.Name != "" {
		if !ignoreOptional {
			return maybeOptional(s, r), nil
		}
		return r, nil
	}
	return c.fromConnect(s, ignoreOptional)
}

// recordField is AvroData.addAvroRecordField (AvroData.java:1234-1274).
func (c *converter) recordField(name string, s *connectSchema) (*avroField, error) {
	if err := validName(name); err != nil {
		return nil, fmt.Errorf("field %q: %w", name, err)
	}
	var def json.RawMessage
	if s.Default != nil {
		d, err := avroDefault(s, s.Default)
		if err != nil {
			return nil, err
		}
		def = d
	} else if s.Optional {
		def = json.RawMessage("null")
	}
	alreadySeen := false
	if s.Name != "" {
		alreadySeen = c.seenNamedTypes[s.Name]
		c.seenNamedTypes[s.Name] = true
	}
	a, err := c.fromConnect(s, false)
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", name, err)
	}
	f := &avroField{name: name, typ: a}
	// new Schema.Field(..., defaultVal) validates the default against the
	// schema; AvroData drops an invalid one (AvroData.java:1252-1264).
	if def != nil && validDefault(a, def) {
		f.def = def
	}
	if alreadySeen && len(s.Params) > 0 && namedType(a) { // AvroData.java:1265-1272
		var b bytes.Buffer
		b.WriteByte('{')
		for i, p := range s.Params {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(jsonString(p.key))
			b.WriteByte(':')
			b.Write(jsonString(p.value))
		}
		b.WriteByte('}')
		f.props = append(f.props, prop{"connect.parameters", b.Bytes()})
	}
	return f, nil
}

func namedType(a *avroSchema) bool {
	if a.typ == "record" {
		return true
	}
	for _, b := range a.branches {
		if b.typ == "record" {
			return true
		}
	}
	return false
}

// splitName is AvroData.splitName (AvroData.java:2517-2536) without
// scrubbing: the namespace is everything before the last dot.
func splitName(full string) (ns, name string) {
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "", full
}

// validName is the check Avro 1.12.1 makes of a record's or a field's
// name (Schema.java:724-740, :576, :1691-1697; NameValidator.UTF_VALIDATOR,
// NameValidator.java:47-69): a letter or '_', then letters, digits or
// '_', letters and digits in Unicode's sense. A namespace is not checked.
// AvroData does not scrub names by default, so a name Avro refuses fails
// the conversion.
func validName(n string) error {
	if n == "" {
		return fmt.Errorf("empty name")
	}
	for i, r := range n {
		if !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return fmt.Errorf("illegal character in %q", n)
		}
	}
	return nil
}
