package avrodata

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Line numbers below cite avro-data/src/main/java/io/confluent/connect/avro/AvroData.java
// of confluentinc/schema-registry (the mirror's HEAD). The options are
// AvroConverter's defaults (AvroDataConfig.java:28-56): connect.meta.data
// true, enhanced.avro.schema.support false, scrub.invalid.names false,
// allow.optional.map.keys false, discard.type.doc.default false,
// generalized sum types off.

// connectSchema is a Kafka Connect schema read from JsonConverter's JSON
// (JsonConverter.asJsonSchema): the fields ConnectSchema.equals compares.
type connectSchema struct {
	Type     string
	Optional bool
	Name     string // "" for none
	Version  *int64
	Doc      *string
	Params   []param // in order: Connect keeps parameters in a LinkedHashMap
	Default  json.RawMessage
	Fields   []connectField
	Items    *connectSchema // JsonConverter's "items", Connect's valueSchema of an array
	Keys     *connectSchema
	Values   *connectSchema
	identity string // the schema's JSON without field names: ConnectSchema.equals
}

type param struct{ key, value string }

type connectField struct {
	name   string
	schema *connectSchema
}

// parseConnect reads JsonConverter's JSON of a schema.
func parseConnect(raw json.RawMessage) (*connectSchema, string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "", err
	}
	s := &connectSchema{}
	if err := json.Unmarshal(m["type"], &s.Type); err != nil {
		return nil, "", fmt.Errorf("type: %w", err)
	}
	if v, ok := m["optional"]; ok {
		if err := json.Unmarshal(v, &s.Optional); err != nil {
			return nil, "", err
		}
	}
	if v, ok := m["name"]; ok {
		if err := json.Unmarshal(v, &s.Name); err != nil {
			return nil, "", err
		}
	}
	if v, ok := m["version"]; ok {
		s.Version = new(int64)
		if err := json.Unmarshal(v, s.Version); err != nil {
			return nil, "", err
		}
	}
	if v, ok := m["doc"]; ok {
		s.Doc = new(string)
		if err := json.Unmarshal(v, s.Doc); err != nil {
			return nil, "", err
		}
	}
	if v, ok := m["parameters"]; ok {
		ps, err := orderedStrings(v)
		if err != nil {
			return nil, "", fmt.Errorf("parameters: %w", err)
		}
		s.Params = ps
	}
	if v, ok := m["default"]; ok && string(v) != "null" {
		s.Default = v
	}
	var field string
	if v, ok := m["field"]; ok {
		if err := json.Unmarshal(v, &field); err != nil {
			return nil, "", err
		}
	}
	id := map[string]any{"type": s.Type, "optional": s.Optional, "name": s.Name, "version": s.Version, "doc": s.Doc, "params": s.Params, "default": string(s.Default)}
	switch s.Type {
	case "struct":
		var fields []json.RawMessage
		if err := json.Unmarshal(m["fields"], &fields); err != nil {
			return nil, "", fmt.Errorf("fields: %w", err)
		}
		var ids []string
		for _, f := range fields {
			fs, name, err := parseConnect(f)
			if err != nil {
				return nil, "", fmt.Errorf("field %s: %w", f, err)
			}
			s.Fields = append(s.Fields, connectField{name, fs})
			ids = append(ids, name+"="+fs.identity)
		}
		id["fields"] = ids
	case "array":
		items, _, err := parseConnect(m["items"])
		if err != nil {
			return nil, "", fmt.Errorf("items: %w", err)
		}
		s.Items = items
		id["items"] = items.identity
	case "map":
		var err error
		if s.Keys, _, err = parseConnect(m["keys"]); err != nil {
			return nil, "", fmt.Errorf("keys: %w", err)
		}
		if s.Values, _, err = parseConnect(m["values"]); err != nil {
			return nil, "", fmt.Errorf("values: %w", err)
		}
		id["keys"], id["values"] = s.Keys.identity, s.Values.identity
	}
	b, err := json.Marshal(id)
	if err != nil {
		return nil, "", err
	}
	s.identity = string(b)
	return s, field, nil
}

// orderedStrings reads a JSON object of strings keeping its key order.
func orderedStrings(raw json.RawMessage) ([]param, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not an object: %s", raw)
	}
	var out []param
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return nil, err
		}
		var v string
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, param{k.(string), v})
	}
	return out, nil
}

// nonOptional is AvroData.nonOptional (AvroData.java:2543-2550): the same
// schema, required.
func (s *connectSchema) nonOptional() *connectSchema {
	if !s.Optional {
		return s
	}
	c := *s
	c.Optional = false
	c.identity = strings.Replace(s.identity, `"optional":true`, `"optional":false`, 1)
	return &c
}

func (s *connectSchema) param(k string) (string, bool) {
	for _, p := range s.Params {
		if p.key == k {
			return p.value, true
		}
	}
	return "", false
}

// The names AvroData gives Connect's logical types (Decimal.LOGICAL_NAME ...).
const (
	decimalName   = "org.apache.kafka.connect.data.Decimal"
	dateName      = "org.apache.kafka.connect.data.Date"
	timeName      = "org.apache.kafka.connect.data.Time"
	timestampName = "org.apache.kafka.connect.data.Timestamp"
)

// avroSchema is org.apache.avro.Schema as far as these schemas need it.
type avroSchema struct {
	typ       string // "int", ..., "record", "array", "map", "union"
	props     []prop // JsonProperties, in insertion order
	name, ns  string // record; ns "" is Avro's null namespace
	doc       *string
	fields    []*avroField
	items     *avroSchema // array
	values    *avroSchema // map
	branches  []*avroSchema
	connectID string // the Connect schema it came from, for error messages
}

type prop struct {
	key   string
	value json.RawMessage
}

type avroField struct {
	name  string
	typ   *avroSchema
	doc   *string
	def   json.RawMessage // nil: no default
	props []prop
}

// addProp is JsonProperties.addProp: a key keeps its first value (a
// different second value throws there; here it is an error).
func (a *avroSchema) addProp(k string, v json.RawMessage) error {
	for _, p := range a.props {
		if p.key == k {
			if !bytes.Equal(p.value, v) {
				return fmt.Errorf("can't overwrite property %s", k)
			}
			return nil
		}
	}
	a.props = append(a.props, prop{k, v})
	return nil
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

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

// avroDefault is AvroData.defaultValueFromConnect (AvroData.java:1372-1458)
// applied to JsonConverter's JSON of the default: bytes (base64 there,
// decimal.format=BASE64 for Decimal) become an ISO-8859-1 string, other
// values keep their JSON. The Avro field constructor turns it into an
// object and back (JacksonUtils.toObject then toJsonNode,
// AvroData.java:1242-1243, Schema.java:614-618); with Avro 1.12.1, the
// version of confluentinc/common's pom.xml:49 that schema-registry builds
// with, a float stays a float (JacksonUtils.java:151-162 at
// release-1.12.1), so that is the identity here. (Avro 1.11 made it a
// double: 1.1 became 1.100000023841858.)
func avroDefault(s *connectSchema, v json.RawMessage) (json.RawMessage, error) {
	if string(v) == "null" {
		return v, nil
	}
	switch s.Type {
	case "bytes":
		var b64 string
		if err := json.Unmarshal(v, &b64); err != nil {
			return nil, err
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, err
		}
		r := make([]rune, len(raw))
		for i, c := range raw {
			r[i] = rune(c)
		}
		return jsonString(string(r)), nil
	case "array":
		var elems []json.RawMessage
		if err := json.Unmarshal(v, &elems); err != nil {
			return nil, err
		}
		out := []byte{'['}
		for i, e := range elems {
			d, err := avroDefault(s.Items, e)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, d...)
		}
		return append(out, ']'), nil
	case "map", "struct":
		return nil, fmt.Errorf("a %s default is not needed by these schemas", s.Type)
	}
	return v, nil
}

// validDefault is Avro's Schema.isValidDefault for these schemas.
func validDefault(a *avroSchema, v json.RawMessage) bool {
	var x any
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if err := d.Decode(&x); err != nil {
		return false
	}
	return validValue(a, x)
}

func validValue(a *avroSchema, x any) bool {
	switch a.typ {
	case "union":
		return validValue(a.branches[0], x)
	case "null":
		return x == nil
	case "string", "bytes":
		_, ok := x.(string)
		return ok
	case "boolean":
		_, ok := x.(bool)
		return ok
	case "int":
		n, ok := x.(json.Number)
		if !ok {
			return false
		}
		_, err := strconv.ParseInt(string(n), 10, 32)
		return err == nil
	case "long":
		n, ok := x.(json.Number)
		if !ok {
			return false
		}
		_, err := strconv.ParseInt(string(n), 10, 64)
		return err == nil
	case "float", "double":
		_, ok := x.(json.Number)
		return ok
	case "array":
		l, ok := x.([]any)
		if !ok {
			return false
		}
		for _, e := range l {
			if !validValue(a.items, e) {
				return false
			}
		}
		return true
	case "map":
		m, ok := x.(map[string]any)
		if !ok {
			return false
		}
		for _, e := range m {
			if !validValue(a.values, e) {
				return false
			}
		}
		return true
	case "record":
		m, ok := x.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range a.fields {
			e, has := m[f.name]
			if !has {
				if f.def == nil {
					return false
				}
				continue
			}
			if !validValue(f.typ, e) {
				return false
			}
		}
		return true
	}
	return false
}
