package notify

import (
	"maps"
	"regexp"
	"testing"
)

// The expectations are Debezium's IncrementalSnapshotNotificationServiceTest
// (debezium-connector-common/src/test/java/io/debezium/pipeline/notification/,
// v3.6.1.Final, lines 71-169): connector "connector-test", correlation id
// "12345", collections db.inventory.product and db.inventory.customer,
// the current one db.inventory.product.
func TestNotificationsCarryDebeziumsFields(t *testing.T) {
	src := Source{Connector: "connector-test", ID: "12345"}
	colls := []string{"db.inventory.product", "db.inventory.customer"}
	const now = 1700000000123
	for _, c := range []struct {
		name string
		got  Notification
		typ  string
		data map[string]string
	}{
		{"notifyStarted :71-80", src.StartedOf(colls, now), "STARTED",
			map[string]string{"connector_name": "connector-test", "data_collections": "db.inventory.product,db.inventory.customer"}},
		{"notifyPaused :83-92", src.PausedOf(colls, now), "PAUSED",
			map[string]string{"connector_name": "connector-test", "data_collections": "db.inventory.product,db.inventory.customer"}},
		{"notifyResumed :95-104", src.ResumedOf(colls, now), "RESUMED",
			map[string]string{"connector_name": "connector-test", "data_collections": "db.inventory.product,db.inventory.customer"}},
		{"testNotifyAborted :118-127", src.AbortedOf([]string{"db.inventory.product"}, now), "ABORTED",
			map[string]string{"connector_name": "connector-test", "data_collections": "db.inventory.product"}},
		{"notifyTableScanCompleted :130-142", src.ScanCompletedOf(colls, "db.inventory.product", 100, ScanSucceeded, now), "TABLE_SCAN_COMPLETED",
			map[string]string{"connector_name": "connector-test", "data_collections": "db.inventory.product,db.inventory.customer",
				"scanned_collection": "db.inventory.product", "total_rows_scanned": "100", "status": "SUCCEEDED"}},
		// Debezium's maximum_key "100,0,0" and last_processed_key "50,0,0"
		// are keys; mooncdc's are pages (InProgressOf): the field names and
		// the other values are Debezium's.
		{"notifyInProgress :145-157", src.InProgressOf(colls, "db.inventory.product", 100, 50, now), "IN_PROGRESS",
			map[string]string{"connector_name": "connector-test", "data_collections": "db.inventory.product,db.inventory.customer",
				"current_collection_in_progress": "db.inventory.product", "maximum_key": "100", "last_processed_key": "50"}},
		{"notifyCompleted :160-169", src.CompletedOf(now), "COMPLETED", map[string]string{"connector_name": "connector-test"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := c.got
			if n.ID != "12345" || n.AggregateType != "Incremental Snapshot" || n.Type != c.typ || n.Timestamp != now {
				t.Errorf("got id %q aggregate_type %q type %q timestamp %d, want 12345, Incremental Snapshot, %s, %d",
					n.ID, n.AggregateType, n.Type, n.Timestamp, c.typ, int64(now))
			}
			if !maps.Equal(n.AdditionalData, c.data) {
				t.Errorf("additional_data %v, want %v", n.AdditionalData, c.data)
			}
		})
	}
}

// Without a correlation id Debezium gives each notification a new
// UUID.randomUUID() (IncrementalSnapshotNotificationService.java:158): a
// version 4 UUID, different each time.
func TestNotificationWithoutIDGetsARandomUUIDEachTime(t *testing.T) {
	src := Source{Connector: "c"}
	v4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a, b := src.CompletedOf(1), src.CompletedOf(1)
	for _, id := range []string{a.ID, b.ID} {
		if !v4.MatchString(id) {
			t.Errorf("id %q is not a version 4 UUID", id)
		}
	}
	if a.ID == b.ID {
		t.Errorf("two notifications share the id %q", a.ID)
	}
}
