package connector_test

// The extreme and empty values of TestEveryType's rows "max", "min",
// "edge", "limits" and "unicode" that no Debezium test states (issue 12:
// they were only in the golden testdata/types/plain.json, mooncdc's own
// output, deleted since). As in debezium_converters_test.go, each expectation follows the
// converter Debezium 3.6.1 picks for the column (PostgresValueConverter.java,
// JdbcValueConverters.java and io.debezium.time/data at v3.6.1.Final), cited
// per field; the schemas are those the Debezium suite already asserts for
// the same types (debezium_issue12_schemas_test.go).

import (
	"encoding/base64"
	"math/big"
)

const dbzLimitsDDL = `
CREATE TYPE lim_mood AS ENUM ('sad', 'happy');
CREATE DOMAIN lim_price AS numeric(8,2);
CREATE TABLE limits_table (pk SERIAL, m money, tm time, ttz timetz, ts3 timestamp(3), d date, iv interval,
	bit1 bit(1), bit4 bit(4), vb8 varbit(8), r_i4 int4range, r_d daterange, a_n numeric[], f4 float4, f8 float8,
	tm3 time(3), price lim_price, a_i4 int4[], n numeric, n10_2 numeric(10,2), ts timestamp, tstz timestamptz, PRIMARY KEY(pk));
CREATE TABLE unicode_table (pk SERIAL, t text, vc10 varchar(10), c3 char(3), bpc bpchar, nm name, ci citext, lbl conv_label,
	ba bytea, j json, jb jsonb, x xml, a_i4 int4[], a_t text[], a_vc varchar[], a_n numeric[], a_u uuid[], a_d date[],
	a_b bool[], a_e lim_mood[], hs hstore, tsv tsvector, lt ltree, PRIMARY KEY(pk));
`

// dzUnicodeText is the "unicode" row's text: a non-BMP character, a
// combining accent, both quotes, a backslash, tab, newline and CR.
const dzUnicodeText = "emoji \U0001F600 combining e\u0301 quotes \"double\" 'single' backslash \\ tab \t newline \n cr \r nul-free \u00e9\u4e2d"

var dbzLimitsStatements = []dbzStatement{
	{name: "LIMITS_MAX", table: "limits_table",
		sql: "INSERT INTO limits_table (m, tm, ttz, ts3, d, iv, bit1, bit4, vb8, r_i4, r_d, f4, f8) VALUES (" +
			"92233720368547758.07, '24:00:00', '23:59:59.999999-12', '4713-01-01 00:00:00 BC', '5874897-12-31', '178000000 years', " +
			"'1', '1111', '11111111', 'empty', '[2024-01-01,infinity)', '3.4028235e+38', '-4.9e-324')"},
	{name: "LIMITS_MIN", table: "limits_table",
		sql: "INSERT INTO limits_table (m, tm, ttz, iv, bit1, bit4, vb8, r_i4, r_d, a_n) VALUES (" +
			"0, '00:00:00', '00:00:00+14', '-178000000 years', '0', '0000', '0', '[1,)', '(,)', '{0.000,1500,-0.0001}')"},
	{name: "LIMITS_EDGE", table: "limits_table",
		sql: "INSERT INTO limits_table (tm, iv, a_n, d) VALUES ('00:00:00.000001', '-1 mons +1 day -00:00:00.000001', '{NaN}', 'infinity')"},
	// The rest of TestEveryType's "max", "min", "edge" and "limits" values
	// that no Debezium statement has.
	{name: "LIMITS_MORE_MAX", table: "limits_table",
		sql: "INSERT INTO limits_table (tm3, price, a_i4, n, n10_2, ts, tstz) VALUES ('23:59:59.999', 999999.99, '{2147483647,-2147483648}', " +
			"-123456789012345678901234567890.123456789, -0.01, '1969-12-31 23:59:59.999999', '1900-01-01 00:00:00+00')"},
	{name: "LIMITS_MORE_MIN", table: "limits_table",
		sql: "INSERT INTO limits_table (tm3, price, n, ts3, d) VALUES ('00:00:00', -999999.99, 1.500, '1969-12-31 23:59:59.999', '0001-01-01')"},
	{name: "LIMITS_MORE_SMALL", table: "limits_table",
		sql: "INSERT INTO limits_table (n, d) VALUES (0.00000000000000000001, '-infinity')"},
	{name: "UNICODE_EMPTY", table: "unicode_table",
		sql: `INSERT INTO unicode_table (t, vc10, c3, bpc, nm, ci, lbl, ba, j, jb, x, a_i4, a_t, a_vc, a_n, a_u, a_d, a_b, a_e, hs, tsv, lt) VALUES (` +
			`E'emoji \U0001F600 combining e\u0301 quotes "double" ''single'' backslash \\ tab \t newline \n cr \r nul-free \u00e9\u4e2d', ` +
			`'', '', '', '', E'\u00c9T\u00c9', '', '\x', '""', '[]', '', ` +
			`'{}', '{"","\"quoted\"","back\\slash",NULL}', '{NULL,NULL}', '{}', '{}', '{}', '{}', '{}', '', '', '')`},
}

// dbzLimits: the expectations of LIMITS_* in the default modes (decimal
// precise, time adaptive, interval numeric, binary bytes).
func dbzLimits(stmt string) []dbzWant {
	const (
		pvc    = "PostgresValueConverter.java:"
		jvc    = "JdbcValueConverters.java:"
		arpt   = "AbstractRecordsProducerTest.java:"
		micro  = "int64? io.debezium.time.MicroTime"
		zoned  = "string? io.debezium.time.ZonedTime"
		dur    = "int64? io.debezium.time.MicroDuration"
		money  = "bytes? " + dzDecimal + " scale=2"
		vsdArr = "array?|" + dzVarScale
	)
	// The bits of a bit(n)/varbit(n) string, n > 1, are set little-endian in
	// a BitSet and the bytes sized by the highest bit set
	// (PostgresValueConverter.java:867-885, JdbcValueConverters.java:1309-1311):
	// no bit set is no byte, as Debezium's own bv '00' (:639).
	const bitsCite = pvc + "867-885, " + jvc + "1309-1311"
	switch stmt {
	case "LIMITS_MAX":
		return []dbzWant{
			// Parsed as a BigDecimal (PostgresMoney.parse, AbstractColumnValue.java:139-141,
			// PostgresConnection.java:762-764), setScale(2) HALF_UP (:906-908): money's
			// maximum, unscaled 2^63-1.
			{field: "m", schema: money, value: dzDec(9223372036854775807), cite: pvc + "890-908"},
			// Strings.asDuration then Duration.toNanos()/1000
			// (PostgresValueConverter.java:605-611, MicroTime.java:65-73):
			// 24:00:00 is a whole day, as Debezium's ttf (:663, :699).
			{field: "tm", schema: micro, value: dzN(86_400_000_000), cite: pvc + "605-611, MicroTime.java:65-73, " + arpt + "663"},
			// OffsetTime shifted to UTC (:1010-1020), ISO_OFFSET_TIME
			// (ZonedTime.java:36, :112-116): -12 hours past midnight.
			{field: "ttz", schema: zoned, value: "11:59:59.999999Z", cite: pvc + "1010-1020, ZonedTime.java:36, :112-116"},
			// Epoch ms of the proleptic Gregorian instant: 4713 BC is year
			// -4712, as Debezium's ts_min (:676-684).
			{field: "ts3", schema: "int64? io.debezium.time.Timestamp", value: dzN(dzAt(-4712, 1, 1, 0, 0, 0, 0).UnixMilli()),
				cite: arpt + "676-684, Timestamp.java:68, " + jvc + "468"},
			// LocalDate.toEpochDay (Date.java:66-71): Postgres' last date.
			{field: "d", schema: "int32? io.debezium.time.Date", value: dzN(dzAt(5874897, 12, 31, 0, 0, 0, 0).Unix() / 86400),
				cite: "Date.java:66-71, " + jvc + "680"},
			// PGInterval's years through durationMicros (:932-968): 1.78e8
			// years of 365.25 days is 5.6e21 µs, past a long; Java's (long)
			// cast of the double (MicroDuration.java:82) saturates to
			// Long.MAX_VALUE.
			{field: "iv", schema: dur, value: dzDurationMicros(178000000, 0, 0, 0, 0, 0, 0), cite: pvc + "932-968, MicroDuration.java:75-83"},
			// bit(1) is a BOOLEAN (:201-204), Integer.valueOf(s, 2) != 0 (:830-834).
			{field: "bit1", schema: "boolean?", value: true, cite: pvc + "201-204, :830-834"},
			{field: "bit4", schema: "bytes? " + dzBits + " length=4", value: dzB64(0x0f), cite: bitsCite},
			{field: "vb8", schema: "bytes? " + dzBits + " length=8", value: dzB64(0xff), cite: bitsCite},
			// Ranges are their Postgres text (:225-227, :459-464, convertString).
			{field: "r_i4", schema: "string?", value: "empty", cite: pvc + "225-227, :459-464"},
			{field: "r_d", schema: "string?", value: "[2024-01-01,infinity)", cite: pvc + "218-221, :451-464, " + arpt + "626"},
			// Float.MAX_VALUE and -Double.MIN_VALUE as the Float and Double
			// they are (:81-87 of ReplicationMessageColumnValueResolver.java);
			// JsonConverter prints 3.4028235E38 and -4.9E-324, the same numbers.
			{field: "f4", schema: "float?", value: dzF(3.4028235e38), cite: "ReplicationMessageColumnValueResolver.java:81-83, " + arpt + "242"},
			{field: "f8", schema: "double?", value: dzF(-4.9e-324), cite: "ReplicationMessageColumnValueResolver.java:85-87, " + arpt + "243"},
		}
	case "LIMITS_MIN":
		return []dbzWant{
			{field: "m", schema: money, value: dzDec(0), cite: pvc + "890-908"},
			{field: "tm", schema: micro, value: dzN(0), cite: pvc + "605-611, MicroTime.java:65-73"},
			// +14 hours before midnight: the previous day's 10:00 in UTC; a
			// zero fraction prints no digits (ISO_LOCAL_TIME).
			{field: "ttz", schema: zoned, value: "10:00:00Z", cite: pvc + "1010-1020, ZonedTime.java:36, :112-116"},
			// The negative cast saturates to Long.MIN_VALUE.
			{field: "iv", schema: dur, value: dzDurationMicros(-178000000, 0, 0, 0, 0, 0, 0), cite: pvc + "932-968, MicroDuration.java:75-83"},
			{field: "bit1", schema: "boolean?", value: false, cite: pvc + "201-204, :830-834"},
			{field: "bit4", schema: "bytes? " + dzBits + " length=4", value: dzB64(), cite: bitsCite + ", " + arpt + "639"},
			{field: "vb8", schema: "bytes? " + dzBits + " length=8", value: dzB64(), cite: bitsCite + ", " + arpt + "639"},
			{field: "r_i4", schema: "string?", value: "[1,)", cite: pvc + "225-227, :459-464"},
			{field: "r_d", schema: "string?", value: "(,)", cite: pvc + "218-221, :451-464"},
			// Each element a VariableScaleDecimal, trailing zeros stripped and
			// a negative scale set to 0 (:1131-1152, :613-645): 0.000 is 0
			// scale 0, 1500 scale 0, -0.0001 unscaled -1 scale 4.
			{field: "a_n", schema: vsdArr, value: dzList(dzVSD(0, 0), dzVSD(0, 1500), dzVSD(4, -1)), cite: pvc + "1131-1152, :613-645, " + arpt + "866"},
		}
	case "LIMITS_MORE_MAX":
		big, _ := new(big.Int).SetString("-123456789012345678901234567890123456789", 10)
		return []dbzWant{
			// time(3): Time, the Duration's milliseconds (JdbcValueConverters.java:573-577, Time.java:65-73).
			{field: "tm3", schema: "int32? io.debezium.time.Time", value: dzN(86_399_999), cite: jvc + "573-577, Time.java:65-73, " + arpt + "662"},
			// A numeric(8,2) domain is a Decimal of its typmod (RecordsStreamProducerIT.java:3074-3094).
			{field: "price", schema: "bytes? " + dzDecimal + " scale=2 connect.decimal.precision=8", value: dzDec(99999999), cite: "RecordsStreamProducerIT.java:3074-3094, " + pvc + "613-645"},
			{field: "a_i4", schema: "array?|int32?", value: dzList(dzN(2147483647), dzN(-2147483648)), cite: pvc + "1131-1152, " + arpt + "845"},
			// 39 digits, scale 9: past a long, the unscaled BigInteger's bytes.
			{field: "n", schema: dzVarScale, value: map[string]any{"scale": dzN(9), "value": base64.StdEncoding.EncodeToString(tyTwosComplement(big))},
				cite: pvc + "613-645, VariableScaleDecimal.java:84-92"},
			{field: "n10_2", schema: "bytes? " + dzDecimal + " scale=2 connect.decimal.precision=10", value: dzDec(-1), cite: jvc + "1145, " + arpt + "269"},
			// One µs before the epoch (MicroTimestamp.toEpochMicros, JdbcValueConverters.java:494-498).
			{field: "ts", schema: "int64? io.debezium.time.MicroTimestamp", value: dzN(-1), cite: jvc + "494-498, " + arpt + "656"},
			// ZonedTimestamp in UTC with the column's 6 fraction digits, zeros
			// kept, as Debezium's tz_zero (:673, :715).
			{field: "tstz", schema: "string? io.debezium.time.ZonedTimestamp", value: "1900-01-01T00:00:00.000000Z", cite: pvc + "972-1004, " + arpt + "673, :715"},
		}
	case "LIMITS_MORE_MIN":
		return []dbzWant{
			{field: "tm3", schema: "int32? io.debezium.time.Time", value: dzN(0), cite: jvc + "573-577, Time.java:65-73"},
			{field: "price", schema: "bytes? " + dzDecimal + " scale=2 connect.decimal.precision=8", value: dzDec(-99999999), cite: "RecordsStreamProducerIT.java:3074-3094"},
			// Trailing zeros stripped (:636-640): 1.500 is 1.5.
			{field: "n", schema: dzVarScale, value: dzVSD(1, 15), cite: pvc + "636-640, " + arpt + "792-803"},
			{field: "ts3", schema: "int64? io.debezium.time.Timestamp", value: dzN(-1), cite: jvc + "468-472, " + arpt + "657"},
			{field: "d", schema: "int32? io.debezium.time.Date", value: dzN(dzAt(1, 1, 1, 0, 0, 0, 0).Unix() / 86400), cite: "Date.java:66-71, " + jvc + "680"},
		}
	case "LIMITS_MORE_SMALL":
		return []dbzWant{
			{field: "n", schema: dzVarScale, value: dzVSD(20, 1), cite: pvc + "613-645"},
			// '-infinity' is NEGATIVE_INFINITY_LOCAL_DATE, -5877611-06-22
			// (DateTimeFormat.java:136-147, PostgresValueConverter.java:109),
			// then its epoch day (Date.java:66-71).
			{field: "d", schema: "int32? io.debezium.time.Date", value: dzN(dzAt(-5877611, 6, 22, 0, 0, 0, 0).Unix() / 86400),
				cite: "DateTimeFormat.java:136-147, " + pvc + "109, Date.java:66-71"},
		}
	case "LIMITS_EDGE":
		return []dbzWant{
			{field: "tm", schema: micro, value: dzN(1), cite: pvc + "605-611, MicroTime.java:65-73"},
			// PGInterval: months -1, days 1, seconds -0.000001; the double
			// arithmetic of MicroDuration.java:80-82, truncated.
			{field: "iv", schema: dur, value: dzDurationMicros(0, -1, 1, 0, 0, -0.000001, 0), cite: pvc + "932-968, MicroDuration.java:75-83"},
			// NaN has no BigDecimal: BigDecimal.valueOf(NaN) throws
			// (JdbcValueConverters.java:1180-1181), so Debezium stops, as on a
			// numeric column's NaN; mooncdc writes a null element.
			// 'infinity' is POSITIVE_INFINITY_LOCAL_DATE, which 3.6.1 spells
			// LocalDate.parse("-5877611-06-21") (PostgresValueConverter.java:100):
			// its epoch day is -2147472692, one before -infinity's. mooncdc
			// writes the epoch day of +5877611-06-21 (schema/sentinels.go), so
			// that +infinity sorts after every date; a documented difference.
			{field: "d", schema: "int32? io.debezium.time.Date", value: dzN(dzAt(5877611, 6, 21, 0, 0, 0, 0).Unix() / 86400),
				cite: "DateTimeFormat.java:136-147, " + pvc + "100, Date.java:66-71 (Debezium: -2147472692)",
				diff: "docs/types.md \"Differences from Debezium 3.6.1\", row `date` 'infinity'"},
			{field: "a_n", schema: vsdArr, value: dzList(nil), cite: pvc + "1131-1152, " + jvc + "1180-1181",
				diff: "docs/types.md \"Differences from Debezium 3.6.1\", row `numeric` NaN or ±Infinity, precise: a NaN element of a numeric[] is null"},
		}
	}
	return nil
}

// dbzUnicode: the expectations of UNICODE_EMPTY in the default modes:
// every value is the text Postgres sends, unchanged (no trimming, no
// escaping beyond JSON's), and an empty array is an empty list.
func dbzUnicode() []dbzWant {
	const (
		pvc  = "PostgresValueConverter.java:"
		jvc  = "JdbcValueConverters.java:"
		arpt = "AbstractRecordsProducerTest.java:"
		str  = jvc + "1208-1222 (convertString)"
		arr  = pvc + "1131-1152 (convertArray: the elements converted, none for '{}')"
	)
	return []dbzWant{
		{field: "t", schema: "string?", value: dzUnicodeText, cite: str + ", " + arpt + "428"},
		{field: "vc10", schema: "string?", value: "", cite: str},
		// char(3): Postgres pads the empty string to the length, and sends it so.
		{field: "c3", schema: "string?", value: "   ", cite: str + ", " + arpt + "427"},
		{field: "bpc", schema: "string?", value: "", cite: pvc + "228-229, " + str},
		{field: "nm", schema: "string?", value: "", cite: jvc + "214-218, " + str},
		{field: "ci", schema: "string?", value: "\u00c9T\u00c9", cite: str + ", " + arpt + "431"},
		{field: "lbl", schema: "string?", value: "", cite: "RecordsStreamProducerIT.java:3144, " + str},
		// An empty byte[], base64 of nothing (:849-866).
		{field: "ba", schema: "bytes?", value: "", cite: pvc + "471-472, " + jvc + "849-866"},
		// json/jsonb/xml: the text (:215-216, :449-456).
		{field: "j", schema: "string? io.debezium.data.Json", value: `""`, cite: pvc + "449-456, " + arpt + "538"},
		{field: "jb", schema: "string? io.debezium.data.Json", value: "[]", cite: pvc + "449-456, " + arpt + "539"},
		{field: "x", schema: "string? io.debezium.data.Xml", value: "", cite: str + ", " + arpt + "540"},
		{field: "a_i4", schema: "array?|int32?", value: dzList(), cite: arr},
		{field: "a_t", schema: "array?|string?", value: dzList("", `"quoted"`, `back\slash`, nil), cite: arr + ", " + arpt + "849"},
		{field: "a_vc", schema: "array?|string?", value: dzList(nil, nil), cite: arr},
		{field: "a_n", schema: "array?|" + dzVarScale, value: dzList(), cite: arr},
		{field: "a_u", schema: "array?|string? io.debezium.data.Uuid", value: dzList(), cite: arr + ", " + arpt + "891"},
		{field: "a_d", schema: "array?|int32? io.debezium.time.Date", value: dzList(), cite: arr + ", " + arpt + "855"},
		{field: "a_b", schema: "array?|boolean?", value: dzList(), cite: arr},
		{field: "a_e", schema: "array?|string io.debezium.data.Enum allowed=sad,happy", value: dzList(), cite: arr + ", RecordsStreamProducerIT.java:3367"},
		// An empty hstore: HStoreConverter.fromString("") is an empty map,
		// written by Jackson as {} (:783-822).
		{field: "hs", schema: "string? io.debezium.data.Json", value: "{}", cite: pvc + "783-822"},
		{field: "tsv", schema: "string? io.debezium.data.Tsvector", value: "", cite: pvc + "240-241, :462-464"},
		{field: "lt", schema: "string? io.debezium.data.Ltree", value: "", cite: pvc + "530-531, :667, " + arpt + "992"},
	}
}
