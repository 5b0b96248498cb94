package connectformat

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// This file turns a Connect schema into a Protobuf schema as Confluent's
// ProtobufData.fromConnectSchema does with its default configuration
// (protobuf-converter/src/main/java/io/confluent/connect/protobuf/ProtobufData.java:693-1123;
// defaults in ProtobufDataConfig.java:26-72: no scrubbing of names, no
// `optional` and no wrapper types for nullable fields, no enum from ints).
// Lines cited as PD:n are ProtobufData.java at schema-registry 794611bd86d.

// Protobuf is the Protobuf schema of one Connect schema: its text as the
// registry stores it, its descriptor, and what Encode needs. It is
// immutable and safe for concurrent use.
type Protobuf struct {
	// Text is the schema as ProtobufSchema.canonicalString writes it
	// (ProtobufSchemaUtils.toString): what is registered under the
	// subject.
	Text string
	// Imports are the files Text imports, in its order; each is one the
	// registry knows without a reference (Confluent's and Google's).
	Imports []string
	// File is the descriptor of Text; Message its message, the first and
	// only one in the file (message index [0]).
	File    protoreflect.FileDescriptor
	Message protoreflect.MessageDescriptor

	proto  *descriptorpb.FileDescriptorProto
	params map[*descriptorpb.FieldDescriptorProto][]schema.Param
	schema *schema.Schema
}

// The names ProtobufData gives (PD:92-105).
const (
	protobufNamespace = "io.confluent.connect.protobuf"
	defaultSchemaName = "ConnectDefault"
	connectTypeProp   = "connect.type"
	precisionParam    = "connect.decimal.precision"
	scaleParam        = "scale"
)

// NewProtobuf builds the Protobuf schema of s, a struct schema (the key
// or the value of a record; ProtobufData turns a primitive root into a
// wrapper type, which mooncdc never writes: refused). A name that is not
// a Protobuf identifier is an error, as ProtobufData's descriptor
// validation makes it when scrub.invalid.names is off (its default).
func NewProtobuf(s *schema.Schema) (*Protobuf, error) {
	if s == nil || s.Type != schema.TypeStruct {
		typ := "null"
		if s != nil {
			typ = s.Type
		}
		return nil, fmt.Errorf("protobuf: the root schema is %s; only a struct is written (PD:712-744 turns primitives into wrapper types, which mooncdc's keys and values never are)", typ)
	}
	b := &pbBuilder{params: make(map[*descriptorpb.FieldDescriptorProto][]schema.Param)}
	full := b.nameOrDefault(s.Name) // PD:700-704
	pkg, name := splitName(full)
	syntax := "proto3"
	fdp := &descriptorpb.FileDescriptorProto{Name: new(fileNameFor(full)), Syntax: &syntax}
	if pkg != "" {
		fdp.Package = &pkg
	}
	b.file = fdp
	msg, err := b.message(name, s)
	if err != nil {
		return nil, err
	}
	fdp.MessageType = []*descriptorpb.DescriptorProto{msg}
	f, err := protodesc.NewFile(fdp, deps)
	if err != nil {
		return nil, fmt.Errorf("protobuf: the schema %q is not a valid Protobuf schema: %w (names must be letters, digits and _, not starting with a digit; Confluent's scrub.invalid.names is not supported)", full, err)
	}
	p := &Protobuf{
		Imports: append([]string(nil), fdp.Dependency...),
		File:    f,
		Message: f.Messages().Get(0),
		proto:   fdp,
		params:  b.params,
		schema:  s,
	}
	p.Text = protoText(fdp, b.params)
	return p, nil
}

// fileNameFor names the descriptor's file; the registry never sees it
// (the text has no name), Java's DynamicSchema leaves it empty.
func fileNameFor(full string) string { return full + ".proto" }

type pbBuilder struct {
	file     *descriptorpb.FileDescriptorProto
	params   map[*descriptorpb.FieldDescriptorProto][]schema.Param
	defaults int
	// nested holds, per message, the struct messages already nested in
	// it by name, with their schema (FromConnectContext, PD:1997-2027);
	// own is each message's own schema.
	nested map[*descriptorpb.DescriptorProto]map[string]*schema.Schema
	own    map[*descriptorpb.DescriptorProto]*schema.Schema
}

// nameOrDefault is getNameOrDefault (PD:1822-1826): an unnamed schema is
// ConnectDefault1, 2 … in the order they are met.
func (b *pbBuilder) nameOrDefault(name string) string {
	if name != "" {
		return name
	}
	b.defaults++
	return defaultSchemaName + strconv.Itoa(b.defaults)
}

// splitName is PD:1735-1754: the package is all before the last dot.
func splitName(full string) (pkg, name string) {
	i := strings.LastIndexByte(full, '.')
	if i < 0 {
		return "", full
	}
	return full[:i], full[i+1:]
}

// unqualified is getUnqualifiedName (PD:1759-1769).
func (b *pbBuilder) unqualified(name string) string {
	_, n := splitName(b.nameOrDefault(name))
	return n
}

// message is messageDefinitionFromConnectSchema (PD:766-799): fields
// numbered 1, 2 … in the struct's order.
func (b *pbBuilder) message(name string, s *schema.Schema) (*descriptorpb.DescriptorProto, error) {
	msg := &descriptorpb.DescriptorProto{Name: &name}
	if b.own == nil {
		b.own = make(map[*descriptorpb.DescriptorProto]*schema.Schema)
	}
	b.own[msg] = s
	for i, f := range s.Fields {
		fd, err := b.field(msg, f.Schema, f.Name, int32(i+1))
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		msg.Field = append(msg.Field, fd)
	}
	return msg, nil
}

// field is fieldDefinitionFromConnectSchema (PD:830-894) with the label of
// getLabel (PD:896-906): repeated for arrays and maps, none otherwise.
func (b *pbBuilder) field(msg *descriptorpb.DescriptorProto, s *schema.Schema, name string, tag int32) (*descriptorpb.FieldDescriptorProto, error) {
	if err := refuseProtobufParams(s); err != nil {
		return nil, err
	}
	label := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	if s.Type == schema.TypeArray || s.Type == schema.TypeMap {
		label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	}
	if s.Type == schema.TypeArray {
		s = s.Items
		if s.Type == schema.TypeArray {
			return nil, fmt.Errorf("an array of arrays has no Protobuf form (PD:1110: \"Array cannot be nested\")")
		}
		if err := refuseProtobufParams(s); err != nil {
			return nil, err
		}
	}
	fd := &descriptorpb.FieldDescriptorProto{Name: &name, Number: &tag, Label: label.Enum()}
	var params []schema.Param
	typ, kind := b.dataType(s, name, &params)
	if kind != descriptorpb.FieldDescriptorProto_TYPE_MESSAGE {
		fd.Type = kind.Enum()
	} else {
		fd.Type = kind.Enum()
		fd.TypeName = &typ
	}
	switch {
	case s.Type == schema.TypeStruct && !isLogical(s):
		if prev, ok := b.nestedSchema(msg, typ); ok {
			// Java reuses the message of that name whatever its fields
			// (PD:852-860): a second struct of the same name and another
			// shape would be written with the first one's fields.
			if !sameShape(prev, s) {
				return nil, fmt.Errorf("two different structs are named %q in message %s; Protobuf would need two messages, and the converter would silently reuse the first", typ, msg.GetName())
			}
		} else {
			b.add(msg, typ, s)
			nested, err := b.message(typ, s)
			if err != nil {
				return nil, err
			}
			msg.NestedType = append(msg.NestedType, nested)
		}
	case s.Type == schema.TypeMap:
		entry, err := b.mapEntry(typ, s)
		if err != nil {
			return nil, err
		}
		msg.NestedType = append(msg.NestedType, entry)
	case kind == descriptorpb.FieldDescriptorProto_TYPE_MESSAGE:
		b.depend(typ)
	}
	// A field's default is not carried: ProtobufData sets it on a proto3
	// descriptor (PD:884-888), whose text never shows it
	// (ProtobufSchema.toField writes defaults for proto2 only).
	if len(params) > 0 {
		b.params[fd] = params
		meta := dynamicpb.NewMessage(metaDesc)
		m := meta.Mutable(metaDesc.Fields().ByName("params")).Map()
		for _, p := range params {
			m.Set(protoreflect.ValueOfString(p.Key).MapKey(), protoreflect.ValueOfString(p.Value))
		}
		opts := &descriptorpb.FieldOptions{}
		proto.SetExtension(opts, fieldMeta, meta)
		fd.Options = opts
	}
	return fd, nil
}

// nestedSchema and add are FromConnectContext's contains and add
// (PD:2005-2022): a name equal to the message's own refers to it.
func (b *pbBuilder) nestedSchema(msg *descriptorpb.DescriptorProto, name string) (*schema.Schema, bool) {
	if msg.GetName() == name {
		return b.own[msg], true
	}
	s, ok := b.nested[msg][name]
	return s, ok
}

func (b *pbBuilder) add(msg *descriptorpb.DescriptorProto, name string, s *schema.Schema) {
	if b.nested == nil {
		b.nested = make(map[*descriptorpb.DescriptorProto]map[string]*schema.Schema)
	}
	if b.nested[msg] == nil {
		b.nested[msg] = make(map[string]*schema.Schema)
	}
	b.nested[msg][name] = s
}

// sameShape reports whether two struct schemas have the same fields, as
// a message of one can hold values of the other (optionality aside).
func sameShape(a, b *schema.Schema) bool {
	if a == nil || b == nil || len(a.Fields) != len(b.Fields) {
		return false
	}
	for i := range a.Fields {
		fa, fb := a.Fields[i], b.Fields[i]
		if fa.Name != fb.Name || fa.Schema.Type != fb.Schema.Type || fa.Schema.Name != fb.Schema.Name {
			return false
		}
		switch fa.Schema.Type {
		case schema.TypeStruct:
			if !sameShape(fa.Schema, fb.Schema) {
				return false
			}
		case schema.TypeArray, schema.TypeMap:
			if !reflect.DeepEqual(withoutOptional(fa.Schema), withoutOptional(fb.Schema)) {
				return false
			}
		}
	}
	return true
}

func withoutOptional(s *schema.Schema) *schema.Schema {
	c := *s
	c.Optional = false
	return &c
}

// depend imports the file of a well-known type once, in first-use order
// (PD:873-877).
func (b *pbBuilder) depend(typ string) {
	var path string
	switch typ {
	case decimalType:
		path = decimalFile
	case dateType:
		path = dateFile
	case timeType:
		path = timeFile
	case timestampType:
		path = timestampFile
	default:
		return
	}
	for _, d := range b.file.Dependency {
		if d == path {
			return
		}
	}
	b.file.Dependency = append(b.file.Dependency, path)
}

// mapEntry is mapDefinitionFromConnectSchema (PD:968-993): a message with
// key = 1 and value = 2, not a Protobuf map (no map_entry option), so the
// field is a repeated message and any key type works.
func (b *pbBuilder) mapEntry(name string, s *schema.Schema) (*descriptorpb.DescriptorProto, error) {
	msg := &descriptorpb.DescriptorProto{Name: &name}
	k, err := b.field(msg, s.Keys, "key", 1)
	if err != nil {
		return nil, fmt.Errorf("map key: %w", err)
	}
	v, err := b.field(msg, s.Values, "value", 2)
	if err != nil {
		return nil, fmt.Errorf("map value: %w", err)
	}
	msg.Field = []*descriptorpb.FieldDescriptorProto{k, v}
	return msg, nil
}

// dataType is dataTypeFromConnectSchema (PD:1013-1123) without the
// wrapper and enum branches (their options are off by default): the type
// name, and the parameters the field's confluent.field_meta carries.
func (b *pbBuilder) dataType(s *schema.Schema, fieldName string, params *[]schema.Param) (string, descriptorpb.FieldDescriptorProto_Type) {
	msgType := descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
	switch s.Name {
	case transform.DecimalName:
		// precision first, then scale: the order Java's HashMap gives
		// these two keys, and the one ProtobufSchemaTest.java:1628-1639
		// shows.
		if v, ok := param(s, precisionParam); ok {
			*params = append(*params, schema.Param{Key: "precision", Value: v})
		}
		if v, ok := param(s, scaleParam); ok {
			*params = append(*params, schema.Param{Key: "scale", Value: v})
		}
		return decimalType, msgType
	case transform.DateName:
		return dateType, msgType
	case transform.TimeName:
		return timeType, msgType
	case transform.TimestampName:
		return timestampType, msgType
	}
	switch s.Type {
	case schema.TypeInt8, schema.TypeInt16:
		*params = append(*params, schema.Param{Key: connectTypeProp, Value: s.Type})
		return "int32", descriptorpb.FieldDescriptorProto_TYPE_INT32
	case schema.TypeInt32:
		return "int32", descriptorpb.FieldDescriptorProto_TYPE_INT32
	case schema.TypeInt64:
		return "int64", descriptorpb.FieldDescriptorProto_TYPE_INT64
	case schema.TypeFloat32:
		return "float", descriptorpb.FieldDescriptorProto_TYPE_FLOAT
	case schema.TypeFloat64:
		return "double", descriptorpb.FieldDescriptorProto_TYPE_DOUBLE
	case schema.TypeBoolean:
		return "bool", descriptorpb.FieldDescriptorProto_TYPE_BOOL
	case schema.TypeString:
		return "string", descriptorpb.FieldDescriptorProto_TYPE_STRING
	case schema.TypeBytes:
		return "bytes", descriptorpb.FieldDescriptorProto_TYPE_BYTES
	case schema.TypeMap:
		return mapEntryName(b.unqualified(s.Name)), msgType
	}
	// struct (PD:1113-1119)
	name := b.unqualified(s.Name)
	if name == fieldName {
		name += "Message"
	}
	return name, msgType
}

// mapEntryName is ProtobufSchema.toMapEntry
// (protobuf-provider/.../ProtobufSchema.java:2878-2883): lower_underscore
// to UpperCamel when the name has an underscore, then "Entry".
func mapEntryName(s string) string {
	if strings.Contains(s, "_") {
		var sb strings.Builder
		for _, w := range strings.Split(s, "_") {
			if w == "" {
				continue
			}
			sb.WriteString(strings.ToUpper(w[:1]))
			sb.WriteString(strings.ToLower(w[1:]))
		}
		s = sb.String()
	}
	return s + "Entry"
}

func isLogical(s *schema.Schema) bool {
	switch s.Name {
	case transform.DecimalName, transform.DateName, transform.TimeName, transform.TimestampName:
		return true
	}
	return false
}

func param(s *schema.Schema, key string) (string, bool) {
	for _, p := range s.Params {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// refuseProtobufParams refuses the parameters ProtobufData reads back from
// a schema that came from Protobuf (io.confluent.connect.protobuf.Tag,
// .Enum, .Type, .Union …, and Connect's generalized enum and union):
// mooncdc's schemas never carry them, and writing them half-honoured
// would be silently wrong.
func refuseProtobufParams(s *schema.Schema) error {
	if strings.HasPrefix(s.Name, protobufNamespace+".") {
		return fmt.Errorf("the schema name %q is a Protobuf converter's own type, which mooncdc does not write", s.Name)
	}
	for _, p := range s.Params {
		if strings.HasPrefix(p.Key, protobufNamespace+".") || strings.HasPrefix(p.Key, "org.apache.kafka.connect.data.") {
			return fmt.Errorf("the schema parameter %q (a Protobuf enum, union, tag or type) is not supported", p.Key)
		}
	}
	return nil
}
