package snapshot

import (
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

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
	// An execute-snapshot's type: incremental by default, any case;
	// another value skips the signal (AbstractSnapshotSignal.java:36-46).
	for in, want := range map[string]string{``: "incremental", `,"type":"INCREMENTAL"`: "incremental", `,"type":"Blocking"`: "blocking"} {
		sg, err := parseSignal("pos", []byte(`{"type":"execute-snapshot","data":{"data-collections":["a.b"]`+in+`}}`))
		if err != nil || sg.Data.Type != want {
			t.Errorf("execute-snapshot with %q: type %q, %v; want %q", in, sg.Data.Type, err, want)
		}
	}
	if _, err := parseSignal("pos", []byte(`{"type":"execute-snapshot","data":{"data-collections":["a.b"],"type":"chunked"}}`)); err == nil {
		t.Error("an execute-snapshot of an unknown type accepted")
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

// TestParseSignalRow: a signal table row's three columns are the id, the
// type and the data, by position whatever their names
// (CommonConnectorConfig.java:2221-2236, v3.6.1.Final); any other shape
// is refused, as Debezium logs and drops it there.
func TestParseSignalRow(t *testing.T) {
	text := func(s string) schema.Value { return schema.Value{Kind: schema.ValueText, Data: []byte(s)} }
	sg, err := parseSignalRow(schema.Tuple{text("ad-hoc-1"), text("execute-snapshot"),
		text(`{"data-collections":["public.orders"],"type":"incremental","additional-conditions":[{"data-collection":"public.orders","filter":"id > 7"}]}`)})
	if err != nil || sg.ID != "ad-hoc-1" || sg.Type != signalExecuteSnapshot || sg.Data.AdditionalConditions[0].Filter != "id > 7" {
		t.Errorf("execute-snapshot row: %+v, %v", sg, err)
	}
	// A NULL data is no data (pause-snapshot needs none).
	if sg, err := parseSignalRow(schema.Tuple{text("p"), text("pause-snapshot"), {Kind: schema.ValueNull}}); err != nil || sg.Type != signalPauseSnapshot {
		t.Errorf("pause-snapshot row with NULL data: %+v, %v", sg, err)
	}
	for name, row := range map[string]schema.Tuple{
		"two columns":       {text("x"), text("log")},
		"four columns":      {text("x"), text("log"), text(`{"message":"m"}`), text("extra")},
		"unknown type":      {text("x"), text("drop-everything"), text("{}")},
		"data not JSON":     {text("x"), text("log"), text("message")},
		"no collections":    {text("x"), text("execute-snapshot"), text(`{}`)},
		"unchanged TOAST":   {text("x"), text("log"), {Kind: schema.ValueUnchangedToast}},
		"NULL type":         {text("x"), {Kind: schema.ValueNull}, text("{}")},
		"bad collection re": {text("x"), text("execute-snapshot"), text(`{"data-collections":["("]}`)},
	} {
		if sg, err := parseSignalRow(row); err == nil {
			t.Errorf("%s: accepted as %+v", name, sg)
		}
	}
}
