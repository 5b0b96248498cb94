package jsclients

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

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

// TestReadWithoutNodeInPathFetchesNodeJS: on a machine with only Go
// (PATH holds no node, npm or anything else) the harness fetches the
// pinned Node.js and npm from the npm registry and reads with that node.
// It uses the cache every other run uses (cacheDir): on a machine without
// node, as CI's, that is the one fetch and the one npm ci (with the
// fetched npm) of the whole make test, not a second of each; on a machine
// with node the modules installed by its npm are read by the fetched node.
func TestReadWithoutNodeInPathFetchesNodeJS(t *testing.T) {
	SkipInShort(t)
	if fetchable(runtime.GOOS, runtime.GOARCH) != nil {
		t.Skip("the pinned Node.js is linux/amd64 only (TestFetchElsewhereNamesTheFix covers the rest)")
	}
	cache, err := cacheDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	if reason := machineNode(t.Context()); reason != "node is not in PATH" {
		t.Fatalf("PATH still offers node: %q", reason)
	}
	b := kafkatest.New(t, kfake.SeedTopics(1, "n"))
	cl := b.Client(t)
	if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: "n", Key: []byte("k"), Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := ReadT(t, Request{Broker: b.Addr(), Registry: "http://127.0.0.1:1",
		Topics: []Topic{{Name: "n", Count: 1, Key: String, Value: String}}})
	t.Logf("fetch and npm ci (when not cached), then read: %v", time.Since(start))
	if len(got) != 1 || string(got[0].Key.Decoded) != `"k"` || string(got[0].Value.Decoded) != `"v"` {
		t.Errorf("read %+v", got)
	}
	tc, _, err := install(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "node-"+nodeVersion+"-npm-"+npmVersion, "node", "bin", "node"); tc.node != want {
		t.Errorf("node %s, want the fetched %s", tc.node, want)
	}
	out, err := exec.Command(tc.node, "--version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "v"+nodeVersion {
		t.Errorf("fetched node --version: %q, %v", out, err)
	}
}

// TestMachineNodeUsedOnlyWhenCompleteAndRecent: the machine's node is
// used only with npm beside it and at least Node.js 18 (the oldest the
// pinned clients run on, minNodeMajor); otherwise the harness fetches its
// own, and the reason is what its message says.
func TestMachineNodeUsedOnlyWhenCompleteAndRecent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version string // what the fake node prints; "" for no node
		npm     bool
		want    string
	}{
		{"no node", "", true, "node is not in PATH"},
		{"no npm", "v20.1.0", false, "npm is not in PATH"},
		{"node 16", "v16.20.2", true, "node 16.20.2 is older than 18"},
		{"node 18", "v18.19.0", true, ""},
		{"node 22", "v22.3.0", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.version != "" {
				if err := os.WriteFile(filepath.Join(dir, "node"), []byte("#!/bin/sh\necho "+tc.version+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.npm {
				if err := os.WriteFile(filepath.Join(dir, "npm"), []byte("#!/bin/sh\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("PATH", dir)
			if got := machineNode(t.Context()); got != tc.want {
				t.Errorf("machineNode: %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFetchElsewhereNamesTheFix: the pinned Node.js is built for Linux
// x86-64; elsewhere a machine without node gets an error naming what to
// install.
func TestFetchElsewhereNamesTheFix(t *testing.T) {
	for _, p := range [][2]string{{"darwin", "arm64"}, {"linux", "arm64"}, {"windows", "amd64"}} {
		err := fetchable(p[0], p[1])
		if err == nil || !strings.Contains(err.Error(), "install Node.js 18 or later with npm") || !strings.Contains(err.Error(), p[0]+"/"+p[1]) {
			t.Errorf("%s/%s: %v", p[0], p[1], err)
		}
	}
	if err := fetchable("linux", "amd64"); err != nil {
		t.Errorf("linux/amd64: %v", err)
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
	_, err := Read(t.Context(), Request{Broker: b.Addr(), Registry: "http://127.0.0.1:1", Timeout: time.Second,
		Topics: []Topic{{Name: "c", Count: 2, Value: String}}})
	if err == nil || !strings.Contains(err.Error(), "c: 1 more") {
		t.Fatalf("Read: %v", err)
	}
}

// TestKafkajsReadsNoneAndGzipOnly: kafkajs decompresses gzip itself and
// needs a codec package for the other codecs mooncdc's kafka.compression
// offers (kafkajs src/protocol/message/compression/index.js): a
// deployment with kafkajs consumers keeps none (the default) or gzip, or
// those consumers register kafkajs-snappy, kafkajs-lz4 or
// @kafkajs/zstd. The consumer crashes at the first batch, which ends the
// run at once with the reason.
func TestKafkajsReadsNoneAndGzipOnly(t *testing.T) {
	SkipInShort(t)
	codecs := []struct {
		topic string
		codec kgo.CompressionCodec
		fails string
	}{
		{"none", kgo.NoCompression(), ""},
		{"gzip", kgo.GzipCompression(), ""},
		{"snappy", kgo.SnappyCompression(), "Snappy compression not implemented"},
		{"lz4", kgo.Lz4Compression(), "LZ4 compression not implemented"},
		{"zstd", kgo.ZstdCompression(), "ZSTD compression not implemented"},
	}
	var names []string
	for _, c := range codecs {
		names = append(names, c.topic)
	}
	b := kafkatest.New(t, kfake.SeedTopics(1, names...))
	// Compressible: franz-go sends a batch uncompressed when the codec
	// would not make it smaller.
	pad := strings.Repeat("x", 1000)
	for _, c := range codecs {
		cl := b.Client(t, kgo.ProducerBatchCompression(c.codec))
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: c.topic, Value: []byte(c.topic + pad)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	got := ReadT(t, Request{Broker: b.Addr(), Registry: "http://127.0.0.1:1", Topics: []Topic{
		{Name: "none", Count: 1, Value: String}, {Name: "gzip", Count: 1, Value: String}}})
	for _, r := range got {
		if string(r.Value.Decoded) != `"`+r.Topic+pad+`"` {
			t.Errorf("%s: %.40s", r.Topic, r.Value.Decoded)
		}
	}
	for _, c := range codecs[2:] {
		_, err := Read(t.Context(), Request{Broker: b.Addr(), Registry: "http://127.0.0.1:1",
			Topics: []Topic{{Name: c.topic, Count: 1, Value: String}}})
		if err == nil || !strings.Contains(err.Error(), "kafkajs consumer crashed: "+c.fails) {
			t.Errorf("%s: %v, want %q", c.topic, err, c.fails)
		}
	}
}
