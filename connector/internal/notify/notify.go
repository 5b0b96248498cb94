package notify

import (
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"
)

// The names are Debezium's, at v3.6.1.Final, in
// debezium-connector-common/src/main/java/io/debezium/pipeline/notification/
// IncrementalSnapshotNotificationService.java (ISNS below).
const (
	AggregateIncremental = "Incremental Snapshot" // ISNS:28

	// additional_data keys (ISNS:29-37).
	DataCollections             = "data_collections"
	ScannedCollection           = "scanned_collection"
	CurrentCollectionInProgress = "current_collection_in_progress"
	MaximumKey                  = "maximum_key"
	LastProcessedKey            = "last_processed_key"
	ConnectorName               = "connector_name"
	TotalRowsScanned            = "total_rows_scanned"
	Status                      = "status"
	listDelimiter               = "," // ISNS:38
)

// The notification types (SnapshotStatus.java: the names ISNS passes as
// type).
const (
	Started            = "STARTED"
	InProgress         = "IN_PROGRESS"
	TableScanCompleted = "TABLE_SCAN_COMPLETED"
	Paused             = "PAUSED"
	Resumed            = "RESUMED"
	Aborted            = "ABORTED"
	Completed          = "COMPLETED"
)

// ScanStatus is a TABLE_SCAN_COMPLETED's status
// (ISNS:46-53, TableScanCompletionStatus).
type ScanStatus string

// The statuses mooncdc writes. SKIPPED and UNKNOWN_SCHEMA (ISNS:49, 52)
// are Debezium's for a collection it cannot find or was told to skip;
// mooncdc writes SKIPPED for a table it refuses for another reason than
// its key (watermark.Eligible: a partitioned root, the outbox table, a
// publication that does not publish every operation).
const (
	ScanSucceeded    ScanStatus = "SUCCEEDED"
	ScanEmpty        ScanStatus = "EMPTY"
	ScanNoPrimaryKey ScanStatus = "NO_PRIMARY_KEY"
	ScanSkipped      ScanStatus = "SKIPPED"
	ScanSQLException ScanStatus = "SQL_EXCEPTION"
)

// Notification is Debezium's Notification (Notification.java:32-37):
// the record's key is {id}, its value these five fields
// (SinkNotificationChannel.java:92-98).
type Notification struct {
	ID             string
	AggregateType  string
	Type           string
	AdditionalData map[string]string
	Timestamp      int64 // ms since the epoch
}

// Source fills what every notification of one snapshot shares: the
// connector's name (ISNS:156, the logical name: mooncdc's
// kafka.topic_prefix) and the id (ISNS:158: the execute-snapshot
// signal's id when there is one, else a random UUID per notification).
type Source struct {
	Connector string
	ID        string // "": a random UUID for each notification, as Debezium without a correlation id
}

func (s Source) build(typ string, data map[string]string, nowMs int64) Notification {
	full := make(map[string]string, len(data)+1)
	for k, v := range data {
		full[k] = v
	}
	full[ConnectorName] = s.Connector // ISNS:156
	id := s.ID
	if id == "" {
		id = randomUUID()
	}
	return Notification{ID: id, AggregateType: AggregateIncremental, Type: typ, AdditionalData: full, Timestamp: nowMs}
}

func join(collections []string) string { return strings.Join(collections, listDelimiter) }

// StartedOf is STARTED with the data collections (ISNS:61-69).
func (s Source) StartedOf(collections []string, nowMs int64) Notification {
	return s.build(Started, map[string]string{DataCollections: join(collections)}, nowMs)
}

// PausedOf is PAUSED with the data collections (ISNS:71-80).
func (s Source) PausedOf(collections []string, nowMs int64) Notification {
	return s.build(Paused, map[string]string{DataCollections: join(collections)}, nowMs)
}

// ResumedOf is RESUMED with the data collections (ISNS:82-91).
func (s Source) ResumedOf(collections []string, nowMs int64) Notification {
	return s.build(Resumed, map[string]string{DataCollections: join(collections)}, nowMs)
}

// AbortedOf is ABORTED with the stopped collections (ISNS:99-105, the
// form stop-snapshot uses: AbstractIncrementalSnapshotChangeEventSource.java:622).
func (s Source) AbortedOf(stopped []string, nowMs int64) Notification {
	return s.build(Aborted, map[string]string{DataCollections: join(stopped)}, nowMs)
}

// ScanCompletedOf is TABLE_SCAN_COMPLETED of table, one of collections,
// with the rows it wrote and its status (ISNS:107-123).
func (s Source) ScanCompletedOf(collections []string, table string, rows int64, status ScanStatus, nowMs int64) Notification {
	return s.build(TableScanCompleted, map[string]string{
		DataCollections:   join(collections),
		ScannedCollection: table,
		TotalRowsScanned:  strconv.FormatInt(rows, 10),
		Status:            string(status),
	}, nowMs)
}

// InProgressOf is IN_PROGRESS for a chunk of table written (ISNS:125-142).
// Debezium's maximum_key is the table's largest key read at the start and
// last_processed_key the chunk's last key: mooncdc chunks by heap pages,
// not keys, so maximum_key holds the number of pages planned and
// last_processed_key the chunk's end page (exclusive), both as decimal
// text; chunks are read in parallel, so last_processed_key does not grow
// monotonically (docs/incremental-snapshots.md, "The surface").
func (s Source) InProgressOf(collections []string, table string, pages, chunkEnd uint32, nowMs int64) Notification {
	return s.build(InProgress, map[string]string{
		DataCollections:             join(collections),
		CurrentCollectionInProgress: table,
		MaximumKey:                  strconv.FormatUint(uint64(pages), 10),
		LastProcessedKey:            strconv.FormatUint(uint64(chunkEnd), 10),
	}, nowMs)
}

// CompletedOf is COMPLETED: connector_name alone (ISNS:144-149).
func (s Source) CompletedOf(nowMs int64) Notification {
	return s.build(Completed, nil, nowMs)
}

// randomUUID is a version 4 UUID, as java.util.UUID.randomUUID (ISNS:158).
func randomUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
