package schema

// Debezium's sentinels for Postgres' infinite dates and timestamps.
const (
	// Timestamp ±infinity: "converted to timestamps with value
	// 9223372036825200000 in case of positive infinity or
	// -9223372036832400000 in case of negative infinity. This behavior
	// mimics the standard behavior of the PostgreSQL JDBC driver"
	// (Debezium postgresql.adoc, "TIMESTAMP type"; the values are
	// org.postgresql.PGStatement.DATE_POSITIVE_INFINITY and
	// DATE_NEGATIVE_INFINITY). The documentation gives one value for both
	// io.debezium.time.Timestamp and MicroTimestamp, and so do we.
	timestampPosInfinity int64 = 9223372036825200000
	timestampNegInfinity int64 = -9223372036832400000

	// Date ±infinity: Debezium's PostgresValueConverter parses '-infinity'
	// to NEGATIVE_INFINITY_LOCAL_DATE = -5877611-06-22 and writes its epoch
	// day (io.debezium.time.Date). 'infinity' is POSITIVE_INFINITY_LOCAL_DATE,
	// which 3.6.1 spells LocalDate.parse("-5877611-06-21")
	// (PostgresValueConverter.java:100; still so in its newest source), so
	// Debezium writes -2147472692, before every date. mooncdc writes the
	// epoch day of +5877611-06-21, after every date: a difference in
	// docs/metrics.md, kept because a positive infinity must sort last.
	datePosInfinity int32 = 2146033979
	dateNegInfinity int32 = -2147472691
)

// Timestamptz ±infinity is the string "infinity" / "-infinity": Debezium's
// convertTimestampWithZone returns the Postgres text unchanged for them.
