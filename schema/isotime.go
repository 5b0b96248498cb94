package schema

// This file writes time.precision.mode isostring's values, as Debezium
// 3.6.1's io.debezium.time.IsoDate, IsoTime and IsoTimestamp do: java.time's
// ISO_OFFSET_DATE, ISO_OFFSET_TIME and ISO_OFFSET_DATE_TIME in UTC
// (IsoDate.java, IsoTime.java, IsoTimestamp.java): "2017-09-15Z",
// "04:05:11.789Z", "2019-07-09T02:28:57.1Z", the fraction cut to the
// digits that matter. timestamptz and timetz keep their Zoned* strings
// (TemporalPrecisionMode.java:50 changes only date, time and timestamp).

var (
	// Debezium's isostring form of ±infinity dates: pgjdbc's
	// java.sql.Date(DATE_POSITIVE_INFINITY / DATE_NEGATIVE_INFINITY) as a
	// LocalDate in a JVM running in UTC (PostgresTemporalPrecisionHandlingIT.java:
	// 413-416 checks the year and month; the day depends on the JVM's zone).
	textISODatePosInfinity = []byte("+292278994-08-16Z")
	textISODateNegInfinity = []byte("+292269055-12-03Z")
)

// appendISOTemporal appends the isostring form of s, a date, time or
// timestamp in Postgres text, for kind (convDateISO, convTimeISO or
// convTimestampISO).
func appendISOTemporal(dst []byte, kind conv, s []byte) ([]byte, error) {
	switch kind {
	case convDateISO:
		days, inf, err := ParseDate(s)
		switch {
		case err != nil:
			return dst, err
		case inf == PosInfinity:
			return append(dst, textISODatePosInfinity...), nil
		case inf == NegInfinity:
			return append(dst, textISODateNegInfinity...), nil
		}
		y, m, d := civilFromDays(int64(days))
		dst = appendYear(dst, y)
		dst = append(dst, '-')
		dst = append2(dst, int(m))
		dst = append(dst, '-')
		dst = append2(dst, int(d))
		return append(dst, 'Z'), nil
	case convTimeISO:
		us, err := ParseTime(s)
		if err != nil {
			return dst, err
		}
		// 24:00:00 is LocalTime.of(0, 0).plus(one day): midnight
		// (IsoTime.java, toIsoString of a Duration).
		return appendZonedTime(dst, us%microsPerDay), nil
	default:
		us, inf, err := ParseTimestamp(s)
		switch {
		case err != nil:
			return dst, err
		case inf == PosInfinity:
			// The LocalDateTime of pgjdbc's infinity in µs
			// (PostgresValueConverter.java:96-97): +294247-01-10T04:00:25.2Z,
			// as PostgresTemporalPrecisionHandlingIT.java:419-420 expects.
			us = timestampPosInfinity
		case inf == NegInfinity:
			us = timestampNegInfinity
		}
		return appendZonedTimestamp(dst, us, 0), nil
	}
}
