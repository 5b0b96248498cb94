package connecttest

import (
	"strings"
	"testing"
)

// The cases follow JsonConverter.java (apache/kafka at 1eb7644349c,
// connect/json/src/main/java/org/apache/kafka/connect/json/): the type
// names of JsonSchema.java:41-58 ("float" and "double", not "float32" and
// "float64"), asConnectSchema's errors (:450-561) and convertToConnect's
// (:697-746).
func TestValidateFollowsJsonConverter(t *testing.T) {
	for _, tc := range []struct {
		name, record, err string
	}{
		{"tombstone", ``, ""},
		{"int32", `{"schema":{"type":"int32","optional":false},"payload":7}`, ""},
		{"float and double", `{"schema":{"type":"struct","fields":[{"type":"float","optional":false,"field":"f"},{"type":"double","optional":false,"field":"d"}],"optional":false},"payload":{"f":1.5,"d":"NaN"}}`, ""},
		{"float max rounds to a float", `{"schema":{"type":"float","optional":false},"payload":3.4028235e+38}`, ""},
		{"float overflow", `{"schema":{"type":"float","optional":false},"payload":1e39}`, "overflows a float"},
		{"float32 is not a JsonConverter type", `{"schema":{"type":"float32","optional":false},"payload":1.5}`, "unknown schema type: float32"},
		{"float64 is not a JsonConverter type", `{"schema":{"type":"float64","optional":true},"payload":null}`, "unknown schema type: float64"},
		{"extra envelope field", `{"schema":{"type":"int32"},"payload":1,"x":1}`, `requires "schema" and "payload"`},
		{"no type", `{"schema":{"optional":false},"payload":1}`, "must contain 'type'"},
		{"required null", `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"s"}],"optional":false},"payload":{"s":null}}`, "invalid null value for required string field"},
		{"required missing", `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"s"}],"optional":false},"payload":{}}`, "invalid null value for required string field"},
		{"required null with a default", `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"default":"x","field":"s"}],"optional":false},"payload":{"s":null}}`, ""},
		{"optional is only JSON true", `{"schema":{"type":"int32","optional":"true"},"payload":null}`, "invalid null value for required int32"},
		{"extra payload field", `{"schema":{"type":"struct","fields":[],"optional":false},"payload":{"a":1}}`, `field "a" is not in the struct's schema`},
		{"string for int", `{"schema":{"type":"int64","optional":false},"payload":"1"}`, `"1" for a int64 field`},
		{"int8 overflow", `{"schema":{"type":"int8","optional":false},"payload":300}`, "the number 300 for a int8 field"},
		{"fraction for int", `{"schema":{"type":"int32","optional":false},"payload":1.5}`, "for a int32 field"},
		{"number for string", `{"schema":{"type":"string","optional":true},"payload":1}`, "for a string field"},
		{"bytes not base64", `{"schema":{"type":"bytes","optional":false},"payload":"%%"}`, "invalid bytes field"},
		{"decimal without scale", `{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","optional":false},"payload":"AQ=="}`, "scale parameter not found"},
		{"decimal", `{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"},"optional":false},"payload":"AQ=="}`, ""},
		{"parameters are strings", `{"schema":{"type":"bytes","parameters":{"scale":2},"optional":false},"payload":"AQ=="}`, "parameters must have string values"},
		{"date is int32", `{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Date","optional":false},"payload":19000}`, ""},
		{"timestamp needs an integer", `{"schema":{"type":"int64","name":"org.apache.kafka.connect.data.Timestamp","optional":false},"payload":"x"}`, "underlying representation should be integral"},
		{"array without items", `{"schema":{"type":"array","optional":false},"payload":[]}`, "did not specify the element type"},
		{"array items checked", `{"schema":{"type":"array","items":{"type":"int32","optional":false},"optional":false},"payload":[1,null]}`, "payload[1]: invalid null value"},
		{"map with string keys is an object", `{"schema":{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"string","optional":true},"optional":false},"payload":{"a":"b","c":null}}`, ""},
		{"map with int keys is pairs", `{"schema":{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":false},"optional":false},"payload":[[1,"a"]]}`, ""},
		{"map with int keys as an object", `{"schema":{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":false},"optional":false},"payload":{"1":"a"}}`, "should be encoded as JSON array of tuples"},
		{"struct field without a name", `{"schema":{"type":"struct","fields":[{"type":"int32"}],"optional":false},"payload":{}}`, "field name not specified properly"},
		{"duplicate field", `{"schema":{"type":"struct","fields":[{"type":"int32","optional":true,"field":"a"},{"type":"int32","optional":true,"field":"a"}],"optional":false},"payload":{}}`, "duplication"},
		{"default of the wrong type", `{"schema":{"type":"string","optional":false,"default":1},"payload":"x"}`, "default: the number 1 for a string field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate([]byte(tc.record))
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("Validate: %v, want nil", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("Validate: %v, want an error containing %q", err, tc.err)
			}
		})
	}
}

func FuzzValidate(f *testing.F) {
	f.Add([]byte(`{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false},"payload":{"id":1}}`))
	f.Add([]byte(`{"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"array","items":{"type":"bytes"}}},"payload":[[1,["AA=="]]]}`))
	f.Add([]byte(`{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":"AQ=="}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = Validate(b) // must not panic
	})
}
