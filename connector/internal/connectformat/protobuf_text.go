package connectformat

import (
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/mooncdc/mooncdc/schema"
)

// This file writes a schema's text as the registry stores what the
// converter registers: ProtobufSchema(Descriptor) turns the descriptor
// into a ProtoFileElement (protobuf-provider/.../ProtobufSchema.java:726-1050,
// 1406-1500) and canonicalString writes it with
// ProtobufSchemaUtils.toString (ProtobufSchemaUtils.java:304-395,
// 538-693, 860-920, 984-1134). Cited below as PSU:n. Only what a
// converter's schema holds is written: messages, fields, imports, and the
// confluent.field_meta option with parameters. The option's file,
// confluent/meta.proto, is not imported, as in Java (DynamicSchema adds no
// dependency for it; the registry knows the file).

func protoText(f *descriptorpb.FileDescriptorProto, params map[*descriptorpb.FieldDescriptorProto][]schema.Param) string {
	var sb strings.Builder
	sb.WriteString("syntax = \"" + f.GetSyntax() + "\";\n") // PSU:306-312
	if f.GetPackage() != "" {
		sb.WriteString("package " + f.GetPackage() + ";\n")
	}
	if len(f.Dependency) > 0 { // PSU:318-337
		sb.WriteByte('\n')
		for _, d := range f.Dependency {
			sb.WriteString("import \"" + d + "\";\n")
		}
	}
	if len(f.MessageType) > 0 { // PSU:345-360
		sb.WriteByte('\n')
		for _, m := range f.MessageType {
			sb.WriteString(messageText(m, params))
		}
	}
	return sb.String()
}

// messageText is PSU:538-693 for a message with fields and nested
// messages: a blank line before the nested ones.
func messageText(m *descriptorpb.DescriptorProto, params map[*descriptorpb.FieldDescriptorProto][]schema.Param) string {
	var sb strings.Builder
	sb.WriteString("message " + m.GetName() + " {")
	if len(m.Field) > 0 {
		sb.WriteByte('\n')
		for _, f := range m.Field {
			appendIndented(&sb, fieldText(f, params[f]))
		}
	}
	if len(m.NestedType) > 0 {
		sb.WriteByte('\n')
		for _, n := range m.NestedType {
			appendIndented(&sb, messageText(n, params))
		}
	}
	sb.WriteString("}\n")
	return sb.String()
}

// fieldText is PSU:860-920: the label (proto3 writes only repeated), the
// type as the descriptor names it, name = number, then the options.
func fieldText(f *descriptorpb.FieldDescriptorProto, params []schema.Param) string {
	var sb strings.Builder
	if f.GetLabel() == descriptorpb.FieldDescriptorProto_LABEL_REPEATED {
		sb.WriteString("repeated ")
	}
	if f.TypeName != nil {
		sb.WriteString(f.GetTypeName())
	} else {
		sb.WriteString(strings.ToLower(strings.TrimPrefix(f.GetType().String(), "TYPE_")))
	}
	sb.WriteString(" " + f.GetName() + " = " + strconv.Itoa(int(f.GetNumber())))
	if len(params) > 0 {
		// One option: "[" + the option + "]" (PSU:1082-1097); the option
		// is a map (ProtobufSchema.toOption, ProtobufSchema.java:1096-1121)
		// whose params list holds one map per parameter, precision and
		// scale written value first "for backward compatibility".
		sb.WriteString(" [(confluent.field_meta) = {\n")
		var list strings.Builder
		list.WriteString("params: [\n")
		for i, p := range params {
			k, v := "key: "+quote(p.Key), "value: "+quote(p.Value)
			first, second := k, v
			if p.Key == "precision" || p.Key == "scale" {
				first, second = v, k
			}
			entry := "{\n  " + first + ",\n  " + second + "\n}"
			if i < len(params)-1 {
				entry += ","
			}
			appendIndented(&list, entry)
		}
		list.WriteString("]")
		appendIndented(&sb, list.String())
		sb.WriteString("}]")
	}
	sb.WriteString(";\n")
	return sb.String()
}

// appendIndented is PSU:1124-1134: two spaces before every line.
func appendIndented(sb *strings.Builder, s string) {
	lines := strings.Split(s, "\n")
	if len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for _, l := range lines {
		sb.WriteString("  " + l + "\n")
	}
}

// quote is a string option value with escapeChars (PSU:1136-1176).
func quote(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, c := range s {
		switch c {
		case '\a':
			sb.WriteString(`\a`)
		case '\b':
			sb.WriteString(`\b`)
		case '\f':
			sb.WriteString(`\f`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		case '\v':
			sb.WriteString(`\v`)
		case '\\':
			sb.WriteString(`\\`)
		case '\'':
			sb.WriteString(`\'`)
		case '"':
			sb.WriteString(`\"`)
		default:
			sb.WriteRune(c)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}
