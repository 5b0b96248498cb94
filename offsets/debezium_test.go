package offsets

import "testing"

// TestDecodeDebeziumKey: Kafka Connect's key of a Debezium PostgreSQL
// source partition, ["<connector>",{"server":"<topic.prefix>"}]
// (PostgresPartition.java:21,31-33 at v3.6.1.Final), in any JSON spelling.
func TestDecodeDebeziumKey(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{`["shop-connector",{"server":"shop"}]`, true},
		{` [ "shop-connector" , { "server" : "shop" } ] `, true},
		{`["shop-connector",{"server":"other"}]`, false},
		{`["other",{"server":"shop"}]`, false},
		{`["shop-connector",{"server":"shop","extra":1}]`, false},
		{`["shop-connector",{"source":"pipeline"}]`, false}, // a mooncdc key
		{`["shop-connector"]`, false},
		{`{"server":"shop"}`, false},
		{`not json`, false},
		{``, false},
	} {
		if got := DecodeDebeziumKey([]byte(tc.key), "shop-connector", "shop"); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.key, got, tc.want)
		}
	}
}

// TestDebeziumOffsetPositions: where a takeover resumes and what it skips,
// from the offsets PostgresOffsetContext.getOffset stores
// (PostgresOffsetContext.java:74-104), as WalPositionLocator.java:80-107
// resumes from them.
func TestDebeziumOffsetPositions(t *testing.T) {
	for _, tc := range []struct {
		name           string
		value          string
		resume, skip   uint64
		snapIncomplete bool
	}{
		{"at a commit", `{"lsn":200,"lsn_proc":200,"lsn_commit":200,"txId":7,"messageType":"COMMIT","ts_usec":1}`, 200, 0, false},
		{"mid-transaction", `{"lsn":260,"lsn_proc":260,"lsn_commit":200,"txId":8,"messageType":"INSERT"}`, 200, 260, false},
		{"after BEGIN", `{"lsn":210,"lsn_commit":200,"messageType":"BEGIN"}`, 200, 0, false},
		{"older version, no message type", `{"lsn":260,"lsn_commit":200}`, 200, 0, false},
		{"change before the last commit (interleaved)", `{"lsn":150,"lsn_commit":200,"messageType":"UPDATE"}`, 200, 0, false},
		{"right after the snapshot", `{"lsn":100,"txId":5,"ts_usec":1,"snapshot":"INITIAL","last_snapshot_record":true,"snapshot_completed":true}`, 100, 0, false},
		{"last snapshot record", `{"lsn":100,"snapshot":"INITIAL","last_snapshot_record":true,"snapshot_completed":false}`, 100, 0, false},
		{"during the snapshot", `{"lsn":100,"snapshot":"INITIAL","last_snapshot_record":false}`, 100, 0, true},
		{"during the snapshot, older version", `{"lsn":100,"snapshot":true,"last_snapshot_record":false}`, 100, 0, true},
		{"snapshot false", `{"lsn":100,"lsn_commit":90,"snapshot":false}`, 90, 0, false},
	} {
		o, err := DecodeDebeziumValue([]byte(tc.value))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if o.ResumeLSN() != tc.resume || o.SkipThrough() != tc.skip || o.SnapshotIncomplete() != tc.snapIncomplete {
			t.Errorf("%s: resume %d skip %d snapshot incomplete %v, want %d %d %v", tc.name,
				o.ResumeLSN(), o.SkipThrough(), o.SnapshotIncomplete(), tc.resume, tc.skip, tc.snapIncomplete)
		}
	}
	for _, bad := range []string{`null`, `[]`, `{"server":"x"}`, `{"lsn":"abc"}`, `{"lsn":-1}`, `nope`} {
		if o, err := DecodeDebeziumValue([]byte(bad)); err == nil {
			t.Errorf("%s accepted as %+v", bad, o)
		}
	}
	p := Pipeline{InitialLSN: 200, DurableLSN: 200, SkipThrough: 260}
	if p.PendingSkip() != 260 {
		t.Error("the skip applies until the transaction is durable")
	}
	p.DurableLSN = 300
	if p.PendingSkip() != 0 {
		t.Error("the skip ends once the durable LSN moved")
	}
}

// FuzzDecodeDebezium: any bytes in Connect's offsets topic give an offset
// or an error, never a panic.
func FuzzDecodeDebezium(f *testing.F) {
	f.Add([]byte(`["c",{"server":"s"}]`), []byte(`{"lsn":260,"lsn_proc":260,"lsn_commit":200,"txId":8,"messageType":"INSERT"}`))
	f.Add([]byte(`["c",{"server":"s"}]`), []byte(`{"lsn":100,"snapshot":"INITIAL","last_snapshot_record":false}`))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		DecodeDebeziumKey(key, "c", "s")
		o, err := DecodeDebeziumValue(value)
		if err == nil && o.SkipThrough() != 0 && o.SkipThrough() <= o.ResumeLSN() {
			t.Fatalf("skip %d not past the resume point %d", o.SkipThrough(), o.ResumeLSN())
		}
	})
}
