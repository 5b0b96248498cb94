package connectformat

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// This file holds the .proto files a schema ProtobufData writes may import:
// Confluent's own (confluent/meta.proto for the field_meta option,
// confluent/type/decimal.proto) and Google's (google/type/date.proto,
// google/type/timeofday.proto, google/protobuf/timestamp.proto). Go's
// protobuf module ships descriptor.proto and timestamp.proto; the other
// four are small, and are built here as descriptors with their field
// numbers from the published files (schema-registry
// protobuf-types/src/main/proto/confluent/meta.proto and
// confluent/type/decimal.proto; googleapis google/type/date.proto and
// google/type/timeofday.proto). A test parses the same definitions from
// .proto text with protocompile and compares.

// The files and full names ProtobufData uses
// (protobuf-converter/.../ProtobufData.java:114-123).
const (
	decimalFile   = "confluent/type/decimal.proto"
	decimalType   = "confluent.type.Decimal"
	dateFile      = "google/type/date.proto"
	dateType      = "google.type.Date"
	timeFile      = "google/type/timeofday.proto"
	timeType      = "google.type.TimeOfDay"
	timestampFile = "google/protobuf/timestamp.proto"
	timestampType = "google.protobuf.Timestamp"
	metaFile      = "confluent/meta.proto"
)

// deps resolves the imports; fieldMeta is confluent.field_meta, the
// FieldOptions extension that carries a field's Connect parameters.
var (
	deps      *protoregistry.Files
	fieldMeta protoreflect.ExtensionType
	metaDesc  protoreflect.MessageDescriptor
)

func init() {
	deps = new(protoregistry.Files)
	must := func(err error) {
		if err != nil {
			panic(fmt.Sprintf("connectformat: build the Protobuf dependencies: %v", err))
		}
	}
	must(deps.RegisterFile(descriptorpb.File_google_protobuf_descriptor_proto))
	must(deps.RegisterFile(timestamppb.File_google_protobuf_timestamp_proto))
	for _, fd := range []*descriptorpb.FileDescriptorProto{metaProto(), decimalProto(), dateProto(), timeOfDayProto()} {
		f, err := protodesc.NewFile(fd, deps)
		must(err)
		must(deps.RegisterFile(f))
	}
	f, err := deps.FindFileByPath(metaFile)
	must(err)
	fieldMeta = dynamicpb.NewExtensionType(f.Extensions().ByName("field_meta"))
	metaDesc = f.Messages().ByName("Meta")
}

func scalar(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type) *descriptorpb.FieldDescriptorProto {
	return &descriptorpb.FieldDescriptorProto{
		Name:   &name,
		Number: &num,
		Label:  descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
		Type:   typ.Enum(),
	}
}

func file(path, pkg string, deps []string, msgs ...*descriptorpb.DescriptorProto) *descriptorpb.FileDescriptorProto {
	syntax := "proto3"
	return &descriptorpb.FileDescriptorProto{Name: &path, Package: &pkg, Syntax: &syntax, Dependency: deps, MessageType: msgs}
}

func message(name string, fields ...*descriptorpb.FieldDescriptorProto) *descriptorpb.DescriptorProto {
	return &descriptorpb.DescriptorProto{Name: &name, Field: fields}
}

const (
	tInt32  = descriptorpb.FieldDescriptorProto_TYPE_INT32
	tUint32 = descriptorpb.FieldDescriptorProto_TYPE_UINT32
	tString = descriptorpb.FieldDescriptorProto_TYPE_STRING
	tBytes  = descriptorpb.FieldDescriptorProto_TYPE_BYTES
	tMsg    = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
)

// decimalProto is confluent/type/decimal.proto: bytes value = 1 (the
// unscaled value, two's complement, big-endian), uint32 precision = 2,
// int32 scale = 3.
func decimalProto() *descriptorpb.FileDescriptorProto {
	return file(decimalFile, "confluent.type", nil, message("Decimal",
		scalar("value", 1, tBytes), scalar("precision", 2, tUint32), scalar("scale", 3, tInt32)))
}

// dateProto is google/type/date.proto: int32 year = 1, month = 2, day = 3.
func dateProto() *descriptorpb.FileDescriptorProto {
	return file(dateFile, "google.type", nil, message("Date",
		scalar("year", 1, tInt32), scalar("month", 2, tInt32), scalar("day", 3, tInt32)))
}

// timeOfDayProto is google/type/timeofday.proto: int32 hours = 1,
// minutes = 2, seconds = 3, nanos = 4.
func timeOfDayProto() *descriptorpb.FileDescriptorProto {
	return file(timeFile, "google.type", nil, message("TimeOfDay",
		scalar("hours", 1, tInt32), scalar("minutes", 2, tInt32), scalar("seconds", 3, tInt32), scalar("nanos", 4, tInt32)))
}

// metaProto is the part of confluent/meta.proto a converter's schema uses:
// message Meta { string doc = 1; map<string, string> params = 2;
// repeated string tags = 3; } and extend google.protobuf.FieldOptions {
// Meta field_meta = 1088; } (the Rule messages and the other extensions
// are left out: nothing here writes them).
func metaProto() *descriptorpb.FileDescriptorProto {
	entry := message("ParamsEntry", scalar("key", 1, tString), scalar("value", 2, tString))
	entry.Options = &descriptorpb.MessageOptions{MapEntry: new(true)}
	params := scalar("params", 2, tMsg)
	params.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	params.TypeName = new(".confluent.Meta.ParamsEntry")
	tags := scalar("tags", 3, tString)
	tags.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	meta := message("Meta", scalar("doc", 1, tString), params, tags)
	meta.NestedType = []*descriptorpb.DescriptorProto{entry}
	f := file(metaFile, "confluent", []string{"google/protobuf/descriptor.proto"}, meta)
	ext := scalar("field_meta", 1088, tMsg)
	ext.TypeName = new(".confluent.Meta")
	ext.Extendee = new(".google.protobuf.FieldOptions")
	f.Extension = []*descriptorpb.FieldDescriptorProto{ext}
	return f
}

// importTexts are the files a schema ProtobufData writes may import, as
// .proto text with their field names and numbers only (the published
// files' options and comments left out): what is registered under a
// subject named by the path when a schema's imports are registered as
// references (Confluent's serializer with skip.known.types=false,
// AbstractKafkaProtobufSerializer.java:404-426 at schema-registry
// 794611bd86d), which a reader that resolves every import through the
// registry (kafkajs's @kafkajs/confluent-schema-registry) needs.
// confluent/meta.proto is not among them: the text never imports it
// (ProtobufSchema leaves the field_meta option's import implicit).
var importTexts = map[string]string{
	decimalFile:   "syntax = \"proto3\";\npackage confluent.type;\nmessage Decimal {\n  bytes value = 1;\n  uint32 precision = 2;\n  int32 scale = 3;\n}\n",
	dateFile:      "syntax = \"proto3\";\npackage google.type;\nmessage Date {\n  int32 year = 1;\n  int32 month = 2;\n  int32 day = 3;\n}\n",
	timeFile:      "syntax = \"proto3\";\npackage google.type;\nmessage TimeOfDay {\n  int32 hours = 1;\n  int32 minutes = 2;\n  int32 seconds = 3;\n  int32 nanos = 4;\n}\n",
	timestampFile: "syntax = \"proto3\";\npackage google.protobuf;\nmessage Timestamp {\n  int64 seconds = 1;\n  int32 nanos = 2;\n}\n",
}

// ImportText is the .proto text of path, a file in a Protobuf's Imports,
// to register as the reference of that name; false for a path no schema
// of this package imports.
func ImportText(path string) (string, bool) {
	t, ok := importTexts[path]
	return t, ok
}
