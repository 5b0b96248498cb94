package avrodata

import "testing"

// TestFromConnectJSONMatchesConfluentsText: the text of an Avro schema
// that AvroData wrote for a Connect Timestamp with a doc, as Confluent's
// own test quotes it (avro-data/src/test/java/io/confluent/connect/avro/
// AvroDataTest.java:3075, the field type of "createdat"), and the shapes
// AvroData.java gives optional schemas and repeated records.
func TestFromConnectJSONMatchesConfluentsText(t *testing.T) {
	for _, tt := range []struct{ name, connect, want string }{
		{"timestamp with doc (AvroDataTest.java:3075)",
			`{"type":"struct","fields":[{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"doc":"When this message was received.","field":"createdat"}],"optional":false,"name":"org.cmatta.kafka.connect.irc.Message"}`,
			`{"type":"record","name":"Message","namespace":"org.cmatta.kafka.connect.irc","fields":[{"name":"createdat","type":{"type":"long","connect.doc":"When this message was received.","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp","logicalType":"timestamp-millis"}}],"connect.name":"org.cmatta.kafka.connect.irc.Message"}`},
		{"optional with and without default (AvroData.java:1134-1150, 1240-1246)",
			`{"type":"struct","fields":[{"type":"int16","optional":true,"default":5,"field":"a"},{"type":"string","optional":true,"field":"b"}],"optional":false,"name":"n.R"}`,
			`{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":[{"type":"int","connect.default":5,"connect.type":"int16"},"null"],"default":5},{"name":"b","type":["null","string"],"default":null}],"connect.name":"n.R"}`},
		{"a record used twice is referred to by name (AvroData.java:823-828, 1219-1232)",
			`{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"x"}],"optional":true,"name":"n.V","field":"before"},{"type":"struct","fields":[{"type":"int32","optional":false,"field":"x"}],"optional":true,"name":"n.V","field":"after"},{"type":"struct","fields":[],"optional":false,"name":"m.S","field":"s"}],"optional":false,"name":"n.E"}`,
			`{"type":"record","name":"E","namespace":"n","fields":[{"name":"before","type":["null",{"type":"record","name":"V","fields":[{"name":"x","type":"int"}],"connect.name":"n.V"}],"default":null},{"name":"after","type":["null","V"],"default":null},{"name":"s","type":{"type":"record","name":"S","namespace":"m","fields":[],"connect.name":"m.S"}}],"connect.name":"n.E"}`},
		{"bytes default as ISO-8859-1 (AvroData.java:1399-1406)",
			`{"type":"struct","fields":[{"type":"bytes","optional":false,"default":"AP8=","field":"b"}],"optional":false,"name":"n.B"}`,
			`{"type":"record","name":"B","namespace":"n","fields":[{"name":"b","type":{"type":"bytes","connect.default":"\u0000ÿ"},"default":"\u0000ÿ"}],"connect.name":"n.B"}`},
	} {
		got, err := FromConnectJSON([]byte(tt.connect))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got != tt.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tt.name, got, tt.want)
		}
	}
	if _, err := FromConnectJSON([]byte(`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"a-b"}],"optional":false,"name":"n.R"}`)); err == nil {
		t.Error("a field name Avro refuses was accepted (scrub.invalid.names is off by default)")
	}
}
