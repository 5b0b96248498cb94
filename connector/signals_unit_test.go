package connector

import "testing"

// TestParseSignal: Debezium's signal documents (AbstractSnapshotSignal.java:22-29,
// KafkaSignalChannel.java:119-124 at v3.6.1.Final) and the refusals.
func TestParseSignal(t *testing.T) {
	good := []struct{ in, typ, id string }{
		{`{"id":"d-1","type":"execute-snapshot","data":{"data-collections":["public.orders"],"type":"INCREMENTAL"}}`, signalExecuteSnapshot, "d-1"},
		{`{"type":"Log","data":{"message":"hi"}}`, signalLog, "pos"},
		{`{"type":"pause-snapshot"}`, signalPauseSnapshot, "pos"},
		{`{"type":"stop-snapshot","data":{"data-collections":["public\\..*"],"type":"incremental"}}`, signalStopSnapshot, "pos"},
	}
	for _, g := range good {
		sg, err := parseSignal("pos", []byte(g.in))
		if err != nil || sg.Type != g.typ || sg.ID != g.id {
			t.Errorf("%s: %+v, %v", g.in, sg, err)
		}
	}
	sg, _ := parseSignal("pos", []byte(`{"type":"execute-snapshot","data":{"data-collections":["a.b"],"additional-conditions":[{"data-collection":"a.b","filter":"x > 1"}]}}`))
	if len(sg.Data.AdditionalConditions) != 1 || sg.Data.AdditionalConditions[0].Filter != "x > 1" {
		t.Errorf("additional-conditions: %+v", sg.Data)
	}
	for _, bad := range []string{`nope`, `{"type":"drop-everything"}`, `{"type":"execute-snapshot","data":{}}`,
		`{"type":"execute-snapshot","data":{"data-collections":["("]}}`, `{"type":"log","data":[1]}`} {
		if _, err := parseSignal("pos", []byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if !matches(`public\.ord.*`, "public.orders") || matches("public.o", "public.orders") {
		t.Error("data collections are whole-name regular expressions")
	}
}

// FuzzParseSignal: any bytes on the signal topic give a signal or an
// error, never a panic.
func FuzzParseSignal(f *testing.F) {
	f.Add([]byte(`{"id":"1","type":"execute-snapshot","data":{"data-collections":["public.orders"],"additional-conditions":[{"data-collection":"public.orders","filter":"id > 7"}]}}`))
	f.Add([]byte(`{"type":"log","data":{"message":"x"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		sg, err := parseSignal("pos", b)
		if err == nil && sg.Type == "" {
			t.Fatal("a signal without a type")
		}
	})
}
