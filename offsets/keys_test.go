package offsets

import (
	"testing"
)

func TestKeysAreCanonicalConnectKeys(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"pipeline", PipelineKey("shop"), `["shop",{"source":"pipeline"}]`},
		{"table", TableKey("shop", "public.orders"), `["shop",{"table":"public.orders"}]`},
		{"no HTML escaping", TableKey("a<b>&c", `s."we<ird"`), `["a<b>&c",{"table":"s.\"we<ird\""}]`},
		{"unicode kept", TableKey("café", "public.ünï"), `["café",{"table":"public.ünï"}]`},
		{"empty name", PipelineKey(""), `["",{"source":"pipeline"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.got) != tt.want {
				t.Errorf("got %s, want %s", tt.got, tt.want)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	tests := []struct {
		name    string
		key     string
		ours    bool
		want    parsedKey
		wantErr string
	}{
		{name: "pipeline", key: `["shop",{"source":"pipeline"}]`, ours: true, want: parsedKey{kind: keyPipeline}},
		{name: "table", key: `["shop",{"table":"public.orders"}]`, ours: true, want: parsedKey{kind: keyTable, table: "public.orders"}},
		{name: "spaces", key: ` [ "shop" , { "table" : "public.orders" } ] `, ours: true, want: parsedKey{kind: keyTable, table: "public.orders"}},
		{name: "escaped", key: `["sh\u006fp",{"table":"a\"b"}]`, ours: true, want: parsedKey{kind: keyTable, table: `a"b`}},
		{name: "other name", key: `["other",{"table":"x"}]`},
		{name: "other name, any partition", key: `["other",42]`},
		{name: "case matters", key: `["Shop",{"source":"pipeline"}]`},
		{name: "not JSON", key: `shop`, wantErr: "not a JSON array"},
		{name: "empty", key: ``, wantErr: "not a JSON array"},
		{name: "null", key: `null`, wantErr: "not a JSON array"},
		{name: "object", key: `{"shop":{}}`, wantErr: "not a JSON array"},
		{name: "one element", key: `["shop"]`, wantErr: "1 elements"},
		{name: "three elements", key: `["shop",{},{}]`, wantErr: "3 elements"},
		{name: "name not string", key: `[1,{"source":"pipeline"}]`, wantErr: "connector name, is not a string"},
		{name: "name null", key: `[null,{"source":"pipeline"}]`, wantErr: "connector name, is not a string"},
		{name: "partition null", key: `["shop",null]`, ours: true, wantErr: "not a JSON object"},
		{name: "partition array", key: `["shop",["table"]]`, ours: true, wantErr: "not a JSON object"},
		{name: "partition empty", key: `["shop",{}]`, ours: true, wantErr: "0 fields"},
		{name: "partition two fields", key: `["shop",{"source":"pipeline","table":"x"}]`, ours: true, wantErr: "2 fields"},
		{name: "unknown source", key: `["shop",{"source":"other"}]`, ours: true, wantErr: "unknown partition"},
		{name: "unknown field", key: `["shop",{"topic":"x"}]`, ours: true, wantErr: "unknown partition"},
		{name: "table not string", key: `["shop",{"table":5}]`, ours: true, wantErr: `"table" is not a string`},
		{name: "table empty", key: `["shop",{"table":""}]`, ours: true, wantErr: "empty table"},
		{name: "trailing garbage", key: `["shop",{"source":"pipeline"}]x`, wantErr: "not a JSON array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ours, err := parseKey("shop", []byte(tt.key))
			if tt.wantErr != "" {
				if err == nil || !contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if ours != tt.ours || got != tt.want {
				t.Errorf("got %+v ours=%v, want %+v ours=%v", got, ours, tt.want, tt.ours)
			}
		})
	}
}

func TestKeysParseBack(t *testing.T) {
	for _, table := range []string{"public.orders", `we"ird.<t>`, "ü.ß", " "} {
		k, ours, err := parseKey("n", TableKey("n", table))
		if err != nil || !ours || k.kind != keyTable || k.table != table {
			t.Errorf("TableKey(%q) parses as %+v ours=%v err=%v", table, k, ours, err)
		}
	}
	if k, ours, err := parseKey("n", PipelineKey("n")); err != nil || !ours || k.kind != keyPipeline {
		t.Errorf("PipelineKey parses as %+v ours=%v err=%v", k, ours, err)
	}
}
