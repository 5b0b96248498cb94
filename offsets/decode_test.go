package offsets

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

type rec struct {
	key   string
	value *string // nil: tombstone
}

func val(s string) *string { return &s }

func bs(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

func TestDecode(t *testing.T) {
	const (
		pk     = `["shop",{"source":"pipeline"}]`
		orders = `["shop",{"table":"public.orders"}]`
		users  = `["shop",{"table":"public.users"}]`
	)
	pipe := `{"system_id":"7","database":"db","slot":"s","publication":"p","initial_lsn":10,"durable_lsn":20,"ts_ms":5}`
	wantPipe := &Pipeline{SystemID: "7", Database: "db", Slot: "s", Publication: "p", InitialLSN: 10, DurableLSN: 20, UpdatedMs: 5}
	ready := `{"oid":16384,"phase":"ready","lsn":30,"attempts":1,"ts_ms":6}`
	wantReady := Table{Table: "public.orders", OID: 16384, Phase: "ready", LSN: 30, Attempts: 1, UpdatedMs: 6}

	tests := []struct {
		name    string
		recs    []rec
		want    State
		wantErr string // for the last record; earlier ones must succeed
	}{
		{name: "nothing", want: State{}},
		{name: "pipeline", recs: []rec{{pk, val(pipe)}}, want: State{Pipeline: wantPipe}},
		{name: "table", recs: []rec{{orders, val(ready)}}, want: State{Tables: map[string]Table{"public.orders": wantReady}}},
		{name: "last value wins", recs: []rec{
			{orders, val(`{"oid":1,"phase":"copying","lsn":0,"attempts":1,"ts_ms":1}`)},
			{orders, val(ready)},
		}, want: State{Tables: map[string]Table{"public.orders": wantReady}}},
		{name: "spelling of the key does not matter", recs: []rec{
			{orders, val(`{"oid":1,"phase":"copying","lsn":0,"attempts":1,"ts_ms":1}`)},
			{` ["shop", {"table": "public.orders"}]`, val(ready)},
		}, want: State{Tables: map[string]Table{"public.orders": wantReady}}},
		{name: "tombstone deletes table", recs: []rec{{orders, val(ready)}, {users, val(ready)}, {orders, nil}},
			want: State{Tables: map[string]Table{"public.users": {Table: "public.users", OID: 16384, Phase: "ready", LSN: 30, Attempts: 1, UpdatedMs: 6}}}},
		{name: "tombstone of unknown table", recs: []rec{{orders, nil}}, want: State{}},
		{name: "tombstone deletes pipeline", recs: []rec{{pk, val(pipe)}, {pk, nil}}, want: State{}},
		{name: "other connector ignored, even garbage", recs: []rec{
			{`["other",{"source":"pipeline"}]`, val(`{"durable_lsn":99}`)},
			{`["other",{"table":"public.orders"}]`, val(`not json`)},
			{`["other","whatever"]`, nil},
		}, want: State{}},
		{name: "unknown fields ignored", recs: []rec{{pk, val(`{"system_id":"7","future":{"x":[1]}}`)}}, want: State{Pipeline: &Pipeline{SystemID: "7"}}},
		{name: "errored table keeps error and retry", recs: []rec{{orders, val(`{"oid":1,"phase":"errored","attempts":3,"last_error":"boom <&>","retry":"backoff 30s"}`)}},
			want: State{Tables: map[string]Table{"public.orders": {Table: "public.orders", OID: 1, Phase: "errored", Attempts: 3, LastError: "boom <&>", Retry: "backoff 30s"}}}},
		{name: "resnapshot request", recs: []rec{{orders, val(`{"oid":1,"phase":"init","lsn":0,"attempts":0,"ts_ms":9,"resnapshot_ms":1700000000123}`)}},
			want: State{Tables: map[string]Table{"public.orders": {Table: "public.orders", OID: 1, Phase: "init", UpdatedMs: 9, ResnapshotMs: 1700000000123}}}},
		{name: "max LSN", recs: []rec{{pk, val(`{"durable_lsn":18446744073709551615}`)}}, want: State{Pipeline: &Pipeline{DurableLSN: 1<<64 - 1}}},

		{name: "bad key", recs: []rec{{`shop`, val(pipe)}}, wantErr: "not a JSON array"},
		{name: "value not object", recs: []rec{{pk, val(`[1]`)}}, wantErr: "pipeline value: not a JSON object"},
		{name: "value JSON null", recs: []rec{{pk, val(`null`)}}, wantErr: "not a JSON object"},
		{name: "empty value is not a tombstone", recs: []rec{{orders, val(``)}}, wantErr: "not a JSON object"},
		{name: "value truncated", recs: []rec{{pk, val(`{"durable_lsn":1`)}}, wantErr: "pipeline value"},
		{name: "negative LSN", recs: []rec{{pk, val(`{"durable_lsn":-1}`)}}, wantErr: "durable_lsn"},
		{name: "LSN as string", recs: []rec{{orders, val(`{"phase":"ready","lsn":"0/16B3748"}`)}}, wantErr: "lsn"},
		{name: "unknown phase", recs: []rec{{orders, val(`{"phase":"done"}`)}}, wantErr: `unknown phase "done"`},
		{name: "missing phase", recs: []rec{{orders, val(`{"oid":1}`)}}, wantErr: `unknown phase ""`},
		{name: "error leaves state unchanged", recs: []rec{{orders, val(ready)}, {orders, val(`{"phase":"bogus"}`)}},
			want: State{Tables: map[string]Table{"public.orders": wantReady}}, wantErr: "unknown phase"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st State
			for i, r := range tt.recs {
				err := Decode("shop", []byte(r.key), bs(r.value), &st)
				last := i == len(tt.recs)-1
				switch {
				case last && tt.wantErr != "":
					var me *MalformedError
					if !errors.As(err, &me) || !contains(err.Error(), tt.wantErr) {
						t.Fatalf("err = %v, want a *MalformedError containing %q", err, tt.wantErr)
					}
					if me.Offset != -1 || string(me.Key) != r.key {
						t.Errorf("MalformedError{Offset: %d, Key: %q}, want -1 and the key", me.Offset, me.Key)
					}
				case err != nil:
					t.Fatalf("record %d: %v", i, err)
				}
			}
			if tt.wantErr != "" && tt.want.Pipeline == nil && tt.want.Tables == nil {
				return
			}
			if len(st.Tables) == 0 {
				st.Tables = nil
			}
			if !reflect.DeepEqual(st, tt.want) {
				t.Errorf("state\n got %+v %+v\nwant %+v %+v", st.Pipeline, st.Tables, tt.want.Pipeline, tt.want.Tables)
			}
		})
	}
}

func TestMalformedErrorSaysWhereAndHowToFix(t *testing.T) {
	err := &MalformedError{Offset: 12, Key: []byte(`["shop",{"table":5}]`), Err: errors.New(`partition field "table" is not a string`)}
	msg := err.Error()
	for _, want := range []string{"offset 12", `key ["shop",{"table":5}]:`, "is not a string", "tombstone"} {
		if !contains(msg, want) {
			t.Errorf("%q does not contain %q", msg, want)
		}
	}
	long := &MalformedError{Offset: -1, Key: []byte(strings.Repeat("k", 1000)), Err: errors.New("x")}
	if msg := long.Error(); len(msg) > 500 || contains(msg, "offset") && contains(msg, "at offset") {
		t.Errorf("long key not shortened or offset -1 printed: %d bytes: %.80s", len(msg), msg)
	}
}

func TestRecordsDecodeBack(t *testing.T) {
	p := Pipeline{SystemID: "7301", Database: "shop", Slot: "mooncdc_shop", Publication: "mooncdc", InitialLSN: 1 << 40, DurableLSN: 1<<64 - 1, UpdatedMs: 1700000000000}
	tables := []Table{
		{Table: "public.orders", OID: 16384, Phase: PhaseReady, LSN: 99, Attempts: 1, UpdatedMs: 1},
		{Table: `odd."name"<&>`, OID: 1<<32 - 1, Phase: PhaseErrored, Attempts: 7, LastError: "copy: \"boom\"\n", Retry: "next 2024-01-01T00:00:00Z"},
		{Table: "public.new", Phase: PhaseInit},
		{Table: "public.again", OID: 42, Phase: PhaseInit, UpdatedMs: 5, ResnapshotMs: 1700000000999},
	}
	var st State
	recs := []struct{ key, value []byte }{}
	r := PipelineRecord("offsets", "shop", p)
	if r.Topic != "offsets" || r.Partition != 0 {
		t.Errorf("PipelineRecord topic %q partition %d", r.Topic, r.Partition)
	}
	recs = append(recs, struct{ key, value []byte }{r.Key, r.Value})
	for _, tb := range tables {
		r := TableRecord("offsets", "shop", tb)
		recs = append(recs, struct{ key, value []byte }{r.Key, r.Value})
	}
	del := DeleteTableRecord("offsets", "shop", "public.new")
	if del.Value != nil || string(del.Key) != string(TableKey("shop", "public.new")) {
		t.Errorf("DeleteTableRecord = key %s value %v", del.Key, del.Value)
	}
	for _, r := range recs {
		if err := Decode("shop", r.key, r.value, &st); err != nil {
			t.Fatal(err)
		}
	}
	if st.Pipeline == nil || *st.Pipeline != p {
		t.Errorf("pipeline %+v, want %+v", st.Pipeline, p)
	}
	for _, tb := range tables {
		if st.Tables[tb.Table] != tb {
			t.Errorf("table %+v, want %+v", st.Tables[tb.Table], tb)
		}
	}
	if err := Decode("shop", del.Key, del.Value, &st); err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Tables["public.new"]; ok || len(st.Tables) != 3 {
		t.Errorf("tombstone did not delete: %v", st.Tables)
	}
}

func TestTableValueShape(t *testing.T) {
	r := TableRecord("o", "shop", Table{Table: "public.orders", OID: 5, Phase: PhaseCatchup, LSN: 7, UpdatedMs: 3})
	want := `{"oid":5,"phase":"catchup","lsn":7,"attempts":0,"ts_ms":3}`
	if string(r.Value) != want {
		t.Errorf("value %s, want %s", r.Value, want)
	}
	// A resnapshot request is written only when set, after ts_ms.
	r = TableRecord("o", "shop", Table{Table: "public.orders", OID: 5, Phase: PhaseInit, UpdatedMs: 3, ResnapshotMs: 4})
	want = `{"oid":5,"phase":"init","lsn":0,"attempts":0,"ts_ms":3,"resnapshot_ms":4}`
	if string(r.Value) != want {
		t.Errorf("value %s, want %s", r.Value, want)
	}
}

func TestRecordsRefuseWhatLoadWouldNotReadBack(t *testing.T) {
	tests := []struct {
		name string
		fn   func()
	}{
		{"empty table", func() { TableRecord("o", "n", Table{Table: "", Phase: PhaseReady}) }},
		{"unknown phase", func() { TableRecord("o", "n", Table{Table: "public.t", Phase: "done"}) }},
		{"table not UTF-8", func() { TableRecord("o", "n", Table{Table: "public.\xff", Phase: PhaseReady}) }},
		{"name not UTF-8", func() { TableRecord("o", "\xff", Table{Table: "public.t", Phase: PhaseReady}) }},
		{"pipeline name not UTF-8", func() { PipelineRecord("o", "\xc3", Pipeline{}) }},
		{"delete table not UTF-8", func() { DeleteTableRecord("o", "n", "\xc3") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("did not panic")
				}
			}()
			tt.fn()
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add("shop", []byte(`["shop",{"source":"pipeline"}]`), []byte(`{"system_id":"7","durable_lsn":20}`), false)
	f.Add("shop", []byte(`["shop",{"table":"public.orders"}]`), []byte(`{"oid":1,"phase":"ready","lsn":3}`), false)
	f.Add("shop", []byte(`["shop",{"table":"public.orders"}]`), []byte(`{"oid":1,"phase":"init","resnapshot_ms":1700000000123}`), false)
	f.Add("shop", []byte(`["shop",{"table":"public.orders"}]`), []byte(nil), true)
	f.Add("shop", []byte(`["other",{"table":"x"}]`), []byte(`garbage`), false)
	f.Add("", []byte(`["",{"source":"pipeline"}]`), []byte(`{}`), false)
	f.Add("shop", []byte(`[`), []byte(`{`), false)
	f.Add("shop", []byte(`["shop",{"table":"\u0000"}]`), []byte(`{"phase":"errored","last_error":"\ud800"}`), false)
	f.Fuzz(func(t *testing.T, name string, key, value []byte, tombstone bool) {
		if tombstone {
			value = nil
		} else if value == nil {
			value = []byte{}
		}
		st := State{Tables: map[string]Table{"keep.me": {Table: "keep.me", Phase: PhaseReady}}}
		before := snapshot(st)
		err := Decode(name, key, value, &st)
		if err != nil {
			var me *MalformedError
			if !errors.As(err, &me) {
				t.Fatalf("error is not a *MalformedError: %v", err)
			}
			if snapshot(st) != before {
				t.Fatalf("failed Decode changed the state")
			}
			return
		}
		for name, tb := range st.Tables {
			if tb.Table != name || !validPhase(tb.Phase) {
				t.Fatalf("decoded an invalid table %q: %+v", name, tb)
			}
		}
		if !utf8.ValidString(name) {
			return // the record constructors refuse such names
		}
		// What decodes re-encodes and decodes to the same state.
		var again State
		if st.Pipeline != nil {
			r := PipelineRecord("o", name, *st.Pipeline)
			if err := Decode(name, r.Key, r.Value, &again); err != nil {
				t.Fatalf("re-decode pipeline: %v", err)
			}
		}
		for _, tb := range st.Tables {
			r := TableRecord("o", name, tb)
			if err := Decode(name, r.Key, r.Value, &again); err != nil {
				t.Fatalf("re-decode table: %v", err)
			}
		}
		if snapshot(again) != snapshot(st) {
			t.Fatalf("re-encoding changed the state:\n%s\n%s", snapshot(st), snapshot(again))
		}
	})
}

func snapshot(st State) string {
	var b strings.Builder
	if st.Pipeline != nil {
		b.WriteString(string(PipelineRecord("o", "n", *st.Pipeline).Value))
	}
	for _, k := range slices.Sorted(maps.Keys(st.Tables)) {
		b.WriteString(k + "=" + string(marshal(st.Tables[k])))
	}
	return b.String()
}
