package schema

import "strconv"

// This file converts one column value from Postgres text form to JSON,
// following Debezium's PostgreSQL connector defaults:
// time.precision.mode=adaptive; binary.handling.mode=bytes, which Kafka
// Connect's JsonConverter writes as base64. Numeric is its exact decimal
// text in a JSON string for now (like decimal.handling.mode=string; the
// precise Decimal encoding is a later step). Interval and every type
// without a mapping here are their text, as a JSON string.

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

// appendValue appends the JSON for column value v encoded per plan c.
// ValueNull is null; an unchanged TOASTed value is the placeholder (as a
// string, or base64 of its bytes for bytea: UnchangedToastedPlaceholder's
// getToastPlaceholderBinary).
func (e *JSONEncoder) appendValue(dst []byte, c *colPlan, v Value) ([]byte, error) {
	switch v.Kind {
	case ValueNull:
		return append(dst, "null"...), nil
	case ValueUnchangedToast:
		if c.kind == kindBytea {
			return append(dst, e.unavailableB64...), nil
		}
		return append(dst, e.unavailable...), nil
	}
	s := v.Data
	switch c.kind {
	case kindString:
		return appendJSONString(dst, s), nil
	case kindBool:
		b, err := parseBool(s)
		if err != nil {
			return dst, err
		}
		return strconv.AppendBool(dst, b), nil
	case kindInt2, kindInt4, kindInt8, kindOID:
		lo, hi := intRange(c.kind)
		n, err := parseInt(s, lo, hi)
		if err != nil {
			return dst, err
		}
		return strconv.AppendInt(dst, n, 10), nil
	case kindFloat4:
		return appendFloat(dst, s, 32)
	case kindFloat8:
		return appendFloat(dst, s, 64)
	case kindNumeric:
		if !validNumeric(s) {
			return dst, errSyntax
		}
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"'), nil
	case kindBytea:
		var err error
		e.scratch, err = DecodeByteaHex(e.scratch[:0], s)
		if err != nil {
			return dst, err
		}
		return appendBase64String(dst, e.scratch), nil
	case kindDate:
		days, inf, err := ParseDate(s)
		switch {
		case err != nil:
			return dst, err
		case inf == PosInfinity:
			days = datePosInfinity
		case inf == NegInfinity:
			days = dateNegInfinity
		}
		return strconv.AppendInt(dst, int64(days), 10), nil
	case kindTimeMillis, kindTimeMicros:
		us, err := ParseTime(s)
		if err != nil {
			return dst, err
		}
		if c.kind == kindTimeMillis {
			us /= 1000
		}
		return strconv.AppendInt(dst, us, 10), nil
	case kindTimestampMillis, kindTimestampMicros:
		us, inf, err := ParseTimestamp(s)
		switch {
		case err != nil:
			return dst, err
		case inf == PosInfinity:
			return strconv.AppendInt(dst, timestampPosInfinity, 10), nil
		case inf == NegInfinity:
			return strconv.AppendInt(dst, timestampNegInfinity, 10), nil
		}
		if c.kind == kindTimestampMillis {
			us = floorDiv(us, 1000)
		}
		return strconv.AppendInt(dst, us, 10), nil
	case kindTimestamptz:
		us, inf, err := ParseTimestamptz(s)
		switch {
		case err != nil:
			return dst, err
		case inf == PosInfinity:
			return append(dst, `"infinity"`...), nil
		case inf == NegInfinity:
			return append(dst, `"-infinity"`...), nil
		}
		dst = append(dst, '"')
		dst = appendZonedTimestamp(dst, us, int(c.prec))
		return append(dst, '"'), nil
	case kindTimetz:
		us, off, err := ParseTimetz(s)
		if err != nil {
			return dst, err
		}
		dst = append(dst, '"')
		dst = appendZonedTime(dst, timetzToUTC(us, off))
		return append(dst, '"'), nil
	}
	return appendJSONString(dst, s), nil
}

// timetzToUTC shifts a local time of day by its offset into UTC, wrapping
// around midnight like java.time's OffsetTime.withOffsetSameInstant. The
// end-of-day boundary 24:00:00 at UTC stays 24:00:00, as in Debezium.
func timetzToUTC(local int64, offset int32) int64 {
	if offset == 0 {
		return local
	}
	us := (local - int64(offset)*microsPerSecond) % microsPerDay
	if us < 0 {
		us += microsPerDay
	}
	return us
}

func intRange(k colKind) (lo, hi int64) {
	switch k {
	case kindInt2:
		return -1 << 15, 1<<15 - 1
	case kindInt4:
		return -1 << 31, 1<<31 - 1
	case kindOID:
		return 0, 1<<32 - 1
	}
	return -1 << 63, 1<<63 - 1
}
