// Package notify builds Debezium's incremental snapshot notifications
// (IncrementalSnapshotNotificationService.java, v3.6.1.Final), the
// records its sink channel writes to notification.sink.topic.name. It is
// pure: the snapshotter decides when one is due, the main worker writes it
// through the one record writer (emit), the record package encodes it in
// the configured format.
package notify
