package pgtest

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// TestClustersFromTheTemplateAreDistinctSystems: every cluster is a copy of
// one initdb template, yet each is a database system of its own, as mooncdc
// tells sources apart by their system identifier (a resume against another
// cluster must stay an unsafe resume).
func TestClustersFromTheTemplateAreDistinctSystems(t *testing.T) {
	t.Parallel()
	SkipIntegrationInShort(t)
	ids := map[string]bool{}
	for range 3 {
		c := New(t)
		conn, err := c.Connect(t.Context(), "postgres")
		if err != nil {
			t.Fatal(err)
		}
		var id string
		if err := conn.QueryRow(t.Context(), `SELECT system_identifier::text FROM pg_control_system()`).Scan(&id); err != nil {
			t.Fatal(err)
		}
		// The server reads its WAL and writes a new checkpoint: the copy's
		// WAL and pg_control agree.
		if _, err := conn.Exec(t.Context(), `CREATE TABLE t (id int); INSERT INTO t VALUES (1); CHECKPOINT`); err != nil {
			t.Fatal(err)
		}
		conn.Close(t.Context())
		if err := c.Restart(t.Context(), "fast"); err != nil {
			t.Fatalf("restart of a cluster copied from the template: %v", err)
		}
		ids[id] = true
	}
	if len(ids) != 3 {
		t.Fatalf("3 clusters have system identifiers %v, want 3 distinct", ids)
	}
}

func TestSetSystemIdentifierKeepsTheCRCValid(t *testing.T) {
	table := crc32.MakeTable(crc32.Castagnoli)
	control := make([]byte, 8192)
	binary.LittleEndian.PutUint64(control, 42)
	for i := 8; i < 200; i++ {
		control[i] = byte(i * 7)
	}
	const crcAt = 200 // where a ControlFileData of 200 bytes keeps its CRC
	binary.LittleEndian.PutUint32(control[crcAt:], crc32.Checksum(control[:crcAt], table))
	if err := setSystemIdentifier(control, 7_000_000_000_123); err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint64(control); got != 7_000_000_000_123 {
		t.Fatalf("identifier %d", got)
	}
	if binary.LittleEndian.Uint32(control[crcAt:]) != crc32.Checksum(control[:crcAt], table) {
		t.Fatal("the CRC no longer matches")
	}
	if err := setSystemIdentifier(make([]byte, 8192), 1); err == nil {
		t.Fatal("an image without a valid CRC was accepted")
	}
}
