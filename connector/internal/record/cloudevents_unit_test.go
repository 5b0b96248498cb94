package record

import "testing"

// TestCloudEventsMarkSnapshotRewritesTheAttribute: a copy's last event
// gets its snapshot marker in the iodebeziumsnapshot attribute, which
// comes before data; a column of the same name in data is left alone.
func TestCloudEventsMarkSnapshotRewritesTheAttribute(t *testing.T) {
	c := &cloudEventsValue{}
	in := `{"id":"x","iodebeziumsnapshot":"true","iodebeziumdb":"d","data":{"after":{"iodebeziumsnapshot":"true"}}}`
	out, ok := c.MarkSnapshot([]byte(in), "true", "last")
	want := `{"id":"x","iodebeziumsnapshot":"last","iodebeziumdb":"d","data":{"after":{"iodebeziumsnapshot":"true"}}}`
	if !ok || string(out) != want {
		t.Fatalf("got %s, %v\nwant %s", out, ok, want)
	}
	if _, ok := c.MarkSnapshot([]byte(`{"iodebeziumsnapshot":"false"}`), "true", "last"); ok {
		t.Fatal("rewrote an event without the marker")
	}
}
