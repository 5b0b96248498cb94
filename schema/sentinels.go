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

	// Date ±infinity: Debezium's PostgresValueConverter parses 'infinity'
	// to POSITIVE_INFINITY_LOCAL_DATE = +5877611-06-21 and '-infinity' to
	// NEGATIVE_INFINITY_LOCAL_DATE = -5877611-06-22, then writes their
	// epoch day (io.debezium.time.Date). (Before debezium/dbz#2524 the
	// positive constant had a '-' sign by mistake and +infinity came out
	// as -2147472692; we follow the fixed value.)
	datePosInfinity int32 = 2146033979
	dateNegInfinity int32 = -2147472691
)

// Timestamptz ±infinity is the string "infinity" / "-infinity": Debezium's
// convertTimestampWithZone returns the Postgres text unchanged for them.
