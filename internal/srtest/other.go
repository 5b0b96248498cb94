package srtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/bufbuild/protocompile/parser"
	"github.com/bufbuild/protocompile/reporter"
)

// This file holds the PROTOBUF and JSON schema types, and schema
// references, as the Protobuf and JSON Schema serializers and the
// clients that read their records (Confluent's, kafkajs's
// @kafkajs/confluent-schema-registry) use them: the type and the
// references are stored and served back in the register, get-version and
// get-by-id answers; the schema is checked for syntax only.

// prepareOther validates a PROTOBUF or JSON schema: a .proto file that
// parses (imports are not resolved: the registry knows Google's and
// Confluent's files, and the others come as references), or a JSON
// document that is an object or a boolean.
func prepareOther(schemaType string, req schemaRequest) (prepared, *apiError) {
	switch schemaType {
	case "PROTOBUF":
		if _, err := parser.Parse("schema.proto", strings.NewReader(req.Schema), reporter.NewHandler(nil)); err != nil {
			return prepared{}, errInvalidSchema(fmt.Sprintf("Invalid schema %s of type PROTOBUF, details: %v", req.Schema, err))
		}
	case "JSON":
		var doc any
		if err := json.Unmarshal([]byte(req.Schema), &doc); err != nil {
			return prepared{}, errInvalidSchema(fmt.Sprintf("Invalid schema %s of type JSON, details: %v", req.Schema, err))
		}
		switch doc.(type) {
		case map[string]any, bool:
		default:
			return prepared{}, errInvalidSchema(fmt.Sprintf("Invalid schema %s of type JSON, details: a JSON Schema is an object or a boolean", req.Schema))
		}
	}
	key := schemaType + "\x00" + strings.TrimSpace(req.Schema)
	if schemaType == "JSON" {
		key = schemaType + "\x00" + identityKey(req.Schema)
	}
	for i, ref := range req.References {
		if ref.Name == "" || ref.Subject == "" || ref.Version == 0 {
			return prepared{}, errInvalidSchema(fmt.Sprintf("Invalid schema: reference %d needs a name, a subject and a version: %+v", i, ref))
		}
		key += "\x00" + ref.Name + "\x00" + ref.Subject + "\x00" + strconv.Itoa(ref.Version)
	}
	return prepared{text: req.Schema, key: key, schemaType: schemaType, refs: req.References}, nil
}

// checkRefsLocked makes sure every reference names a live subject
// version, as the registry does before it registers a schema.
func (r *Registry) checkRefsLocked(refs []Reference) *apiError {
	for _, ref := range refs {
		if _, aerr := r.findVersionLocked(ref.Subject, ref.Version, false); aerr != nil {
			return errInvalidSchema(fmt.Sprintf("Invalid schema: reference %q to subject %q version %d: %s",
				ref.Name, ref.Subject, ref.Version, aerr.msg))
		}
	}
	return nil
}

// unchecked refuses a new version of a subject whose compatibility srtest
// cannot judge: it checks AVRO against AVRO only. Rather than accept a
// PROTOBUF or JSON change a real registry might refuse, it names the fix.
func unchecked(level Level, schemaType string, live []*versionRec) *apiError {
	if level == None || len(live) == 0 {
		return nil
	}
	other := schemaType != ""
	for _, v := range live {
		other = other || v.rec.schemaType != ""
	}
	if !other {
		return nil
	}
	return &apiError{http.StatusUnprocessableEntity, 42201, fmt.Sprintf(
		"srtest checks compatibility between AVRO schemas only; a new %s version under compatibility %s needs the subject's compatibility set to NONE",
		typeName(schemaType), level)}
}

func typeName(schemaType string) string {
	if schemaType == "" {
		return "AVRO"
	}
	return schemaType
}
