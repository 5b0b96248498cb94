package jsclients

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/srtest"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func frame(id int, payload string) []byte {
	b := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(id))
	return append(b, payload...)
}

// TestReadDecodesWithTheRegistryClientInOneRun: one node process reads
// two topics, decodes a JSON Schema value through the registry (the
// schema fetched by id from srtest), passes a string key through, reports
// a null value as null and a client's refusal as data, not as a failure.
func TestReadDecodesWithTheRegistryClientInOneRun(t *testing.T) {
	SkipInShort(t)
	b := kafkatest.New(t, kfake.SeedTopics(1, "a", "b"))
	reg := srtest.New(t)
	id, err := reg.RegisterSchema("a-value", "JSON", `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	if err != nil {
		t.Fatal(err)
	}
	cl := b.Client(t)
	recs := []*kgo.Record{
		{Topic: "a", Key: []byte("k1"), Value: frame(id, `{"n":7}`)},
		{Topic: "a", Key: []byte("k2"), Value: frame(id, `{"m":7}`)},
		{Topic: "b", Key: []byte("k3")},
	}
	if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got := ReadT(t, Request{Broker: b.Addr(), Registry: reg.URL(), Topics: []Topic{
		{Name: "a", Count: 2, Key: String, Value: Registry},
		{Name: "b", Count: 1, Key: String, Value: Registry},
	}})
	byKey := map[string]Record{}
	for _, r := range got {
		byKey[strings.Trim(string(r.Key.Decoded), `"`)] = r
	}
	if r := byKey["k1"]; r.Value.Error != "" || string(r.Value.Decoded) != `{"n":7}` || r.Value.SchemaID == nil || *r.Value.SchemaID != id {
		t.Errorf("k1: %+v", r.Value)
	}
	if r := byKey["k2"]; !strings.Contains(r.Value.Error, "invalid payload") {
		t.Errorf("k2: want the client's validation error, got %+v", r.Value)
	}
	if r := byKey["k3"]; !r.Value.Null {
		t.Errorf("k3: want a null value, got %+v", r.Value)
	}
}

// TestInstallWithoutNodeNamesTheFix: without node in PATH the harness
// fails (it never skips) and says what to install.
func TestInstallWithoutNodeNamesTheFix(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Install(context.Background())
	if err == nil || !strings.Contains(err.Error(), "install Node.js 20 or later with npm") {
		t.Fatalf("Install without node: %v", err)
	}
}

// TestReadTimesOutNamingWhatIsMissing: a topic that never gets its
// records ends the run at the deadline with the count still missing.
func TestReadTimesOutNamingWhatIsMissing(t *testing.T) {
	SkipInShort(t)
	b := kafkatest.New(t, kfake.SeedTopics(1, "c"))
	cl := b.Client(t)
	if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: "c", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	_, err := Read(t.Context(), Request{Broker: b.Addr(), Registry: "http://127.0.0.1:1", Timeout: 3e9,
		Topics: []Topic{{Name: "c", Count: 2, Value: String}}})
	if err == nil || !strings.Contains(err.Error(), "c: 1 more") {
		t.Fatalf("Read: %v", err)
	}
}
