package connector_test

// Debezium's tables that its tests create themselves rather than in
// postgres_create_tables.ddl: the domain ("alias") table of
// RecordsSnapshotProducerIT.java:825-961, the time arrays of
// RecordsStreamProducerIT.java:3402-3421, and macaddr8 of
// RecordsSnapshotProducerIT.java:619, and money's salary table of
// RecordsStreamProducerIT.java:3739, the numeric defaults of
// RecordsStreamProducerIT.java:1117-1122 and :1156-1161, and the enums of
// RecordsStreamProducerIT.java:3344, :3354-3355 and :3471-3472 (all at
// v3.6.1.Final), the pre-1582 timestamps of
// RecordsSnapshotProducerIT.java:1382-1391 and its nested domain
// (:977-980; its alias_table here in schema nested, public already has
// one), with the
// expectations of AbstractRecordsProducerTest.java for them.

// dbzExtraDDL: the statements of those tests, verbatim.
const dbzExtraDDL = `
CREATE DOMAIN bit2 AS BIT(3);
CREATE DOMAIN smallint2 AS smallint;
CREATE DOMAIN integer2 as integer;
CREATE DOMAIN bigint2 as bigint;
CREATE DOMAIN real2 as real;
CREATE DOMAIN bool2 AS BOOL DEFAULT false;
CREATE DOMAIN float82 as float8;
CREATE DOMAIN numeric2 as numeric(6,2);
CREATE DOMAIN string2 AS varchar(25) DEFAULT NULL;
CREATE DOMAIN date2 AS date;
CREATE DOMAIN time2 as time;
CREATE DOMAIN timetz2 as timetz;
CREATE DOMAIN timestamp2 as timestamp;
CREATE DOMAIN timestamptz2 AS timestamptz;
CREATE DOMAIN timewotz2 as time without time zone;
CREATE DOMAIN box2 as box;
CREATE DOMAIN circle2 as circle;
CREATE DOMAIN interval2 as interval;
CREATE DOMAIN line2 as line;
CREATE DOMAIN lseg2 as lseg;
CREATE DOMAIN path2 as path;
CREATE DOMAIN point2 as point;
CREATE DOMAIN polygon2 as polygon;
CREATE DOMAIN char2 as char;
CREATE DOMAIN text2 as text;
CREATE DOMAIN json2 as json;
CREATE DOMAIN xml2 as xml;
CREATE DOMAIN uuid2 as uuid;
CREATE DOMAIN varbit2 as varbit(3);
CREATE DOMAIN inet2 as inet;
CREATE DOMAIN cidr2 as cidr;
CREATE DOMAIN macaddr2 as macaddr;
CREATE TABLE alias_table (pk SERIAL, bit_base bit(3) NOT NULL, bit_alias bit2 NOT NULL, smallint_base smallint NOT NULL, smallint_alias smallint2 NOT NULL, integer_base integer NOT NULL, integer_alias integer2 NOT NULL, bigint_base bigint NOT NULL, bigint_alias bigint2 NOT NULL, real_base real NOT NULL, real_alias real2 NOT NULL, float8_base float8 NOT NULL, float8_alias float82 NOT NULL, numeric_base numeric(6,2) NOT NULL, numeric_alias numeric2 NOT NULL, bool_base bool NOT NULL, bool_alias bool2 NOT NULL, string_base varchar(25) NOT NULL, string_alias string2 NOT NULL, date_base date NOT NULL, date_alias date2 NOT NULL, time_base time NOT NULL, time_alias time2 NOT NULL, timetz_base timetz NOT NULL, timetz_alias timetz2 NOT NULL, timestamp_base timestamp NOT NULL, timestamp_alias timestamp2 NOT NULL, timestamptz_base timestamptz NOT NULL, timestamptz_alias timestamptz2 NOT NULL, timewottz_base time without time zone NOT NULL, timewottz_alias timewotz2 NOT NULL, box_base box NOT NULL, box_alias box2 NOT NULL, circle_base circle NOT NULL, circle_alias circle2 NOT NULL, interval_base interval NOT NULL, interval_alias interval2 NOT NULL, line_base line NOT NULL, line_alias line2 NOT NULL, lseg_base lseg NOT NULL, lseg_alias lseg2 NOT NULL, path_base path NOT NULL, path_alias path2 NOT NULL, point_base point NOT NULL, point_alias point2 NOT NULL, polygon_base polygon NOT NULL, polygon_alias polygon2 NOT NULL, char_base char NOT NULL, char_alias char2 NOT NULL, text_base text NOT NULL, text_alias text2 NOT NULL, json_base json NOT NULL, json_alias json2 NOT NULL, xml_base xml NOT NULL, xml_alias xml2 NOT NULL, uuid_base UUID NOT NULL, uuid_alias uuid2 NOT NULL, varbit_base varbit(3) NOT NULL, varbit_alias varbit2 NOT NULL, inet_base inet NOT NULL, inet_alias inet2 NOT NULL, cidr_base cidr NOT NULL, cidr_alias cidr2 NOT NULL, macaddr_base macaddr NOT NULL, macaddr_alias macaddr2 NOT NULL, PRIMARY KEY(pk));
CREATE TABLE time_array_table (pk SERIAL, timea time[] NOT NULL, timetza timetz[] NOT NULL, timestampa timestamp[] NOT NULL, timestamptza timestamptz[] NOT NULL, primary key(pk));
CREATE TABLE macaddr8_table(pk SERIAL, m MACADDR8, PRIMARY KEY(pk));
CREATE TABLE salary (pk SERIAL, name VARCHAR(50), salary money, PRIMARY KEY(pk));
CREATE TABLE numeric_table_with_n_defaults (
    r int4 NOT NULL,
    r_numeric numeric(19, 4) NULL DEFAULT NULL,
    r_int int4 NULL DEFAULT NULL);
ALTER TABLE numeric_table_with_n_defaults REPLICA IDENTITY FULL;
CREATE TABLE numeric_table_with_defaults (
    r int4 NOT NULL,
    r_numeric numeric(19, 4) NOT NULL DEFAULT 1,
    r_int int4 NOT NULL DEFAULT 2);
ALTER TABLE numeric_table_with_defaults REPLICA IDENTITY FULL;
CREATE TYPE test_type AS ENUM ('V1','V2');
CREATE TABLE enum_table (pk SERIAL, data varchar(25) NOT NULL, value test_type NOT NULL DEFAULT 'V1', PRIMARY KEY (pk));
CREATE TABLE enum_array_table (pk SERIAL, PRIMARY KEY (pk));
ALTER TABLE enum_array_table ADD COLUMN value test_type[] NOT NULL;
CREATE TABLE pre1582_ts_table (pk SERIAL, ts TIMESTAMP NOT NULL, tstz TIMESTAMPTZ NOT NULL, PRIMARY KEY(pk));
CREATE DOMAIN varbit2b AS varbit2;
CREATE SCHEMA nested;
CREATE TABLE nested.alias_table (pk SERIAL, value varbit2b NOT NULL, PRIMARY KEY (pk));
`

var dbzExtraStatements = []dbzStatement{
	// RecordsSnapshotProducerIT.java:895-961
	{name: "DOMAIN_ALIAS_TYPES", table: "alias_table", sql: `INSERT INTO alias_table (bit_base, bit_alias, smallint_base, smallint_alias, integer_base, integer_alias, bigint_base, bigint_alias, real_base, real_alias, float8_base, float8_alias, numeric_base, numeric_alias, bool_base, bool_alias, string_base, string_alias, date_base, date_alias, time_base, time_alias, timetz_base, timetz_alias, timestamp_base, timestamp_alias, timestamptz_base, timestamptz_alias, timewottz_base, timewottz_alias, box_base, box_alias, circle_base, circle_alias, interval_base, interval_alias, line_base, line_alias, lseg_base, lseg_alias, path_base, path_alias, point_base, point_alias, polygon_base, polygon_alias, char_base, char_alias, text_base, text_alias, json_base, json_alias, xml_base, xml_alias, uuid_base, uuid_alias, varbit_base, varbit_alias, inet_base, inet_alias, cidr_base, cidr_alias, macaddr_base, macaddr_alias ) VALUES (B'101', B'101', 1, 1, 1, 1, 1000, 1000, 3.14, 3.14, 3.14, 3.14, 1234.12, 1234.12, true, true, 'hello', 'hello', '2019-10-02', '2019-10-02', '01:02:03', '01:02:03', '01:02:03.123789Z', '01:02:03.123789Z', '2019-10-02T01:02:03.123456', '2019-10-02T01:02:03.123456', '2019-10-02T13:51:30.123456+02:00'::TIMESTAMPTZ, '2019-10-02T13:51:30.123456+02:00'::TIMESTAMPTZ, '01:02:03', '01:02:03', '(0,0),(1,1)', '(0,0),(1,1)', '10,4,10', '10,4,10', '1 year 2 months 3 days 4 hours 5 minutes 6 seconds', '1 year 2 months 3 days 4 hours 5 minutes 6 seconds', '(0,0),(0,1)', '(0,0),(0,1)', '((0,0),(0,1))', '((0,0),(0,1))', '((0,0),(0,1),(0,2))', '((0,0),(0,1),(0,2))', '(1,1)', '(1,1)', '((0,0),(0,1),(1,0),(0,0))', '((0,0),(0,1),(1,0),(0,0))', 'a', 'a', 'Hello World', 'Hello World', '{"key": "value"}', '{"key": "value"}', XML('<foo>Hello</foo>'), XML('<foo>Hello</foo>'), '40e6215d-b5c6-4896-987c-f30f3678f608', '40e6215d-b5c6-4896-987c-f30f3678f608', B'101', B'101', '192.168.0.1', '192.168.0.1', '192.168/24', '192.168/24', '08:00:2b:01:02:03', '08:00:2b:01:02:03' );`},
	// RecordsStreamProducerIT.java:3416-3421
	{name: "TIME_ARRAY_TYPES", table: "time_array_table", sql: "INSERT INTO time_array_table (timea, timetza, timestampa, timestamptza) values (" +
		"'{00:01:02,01:02:03}', '{13:51:02+0200,14:51:03+0200}', '{2020-04-01 00:01:02,2020-04-01 01:02:03}', " +
		"'{2020-04-01 13:51:02+02,2020-04-01 14:51:03+02}')"},
	// AbstractRecordsProducerTest.java:141-142
	{name: "MACADDR8_TYPE", table: "macaddr8_table", sql: "INSERT INTO macaddr8_table (m) VALUES ('08:00:2b:01:02:03:04:05');"},
	// RecordsStreamProducerIT.java:3749, :3777, :3805
	{name: "SALARY", table: "salary", sql: "INSERT INTO salary (name, salary) values ('Joe', 123.45);"},
	// RecordsStreamProducerIT.java:1129, :1168
	{name: "NUMERIC_NULL_DEFAULTS", table: "numeric_table_with_n_defaults", sql: "INSERT INTO numeric_table_with_n_defaults (r) VALUES (1);"},
	{name: "NUMERIC_DEFAULTS", table: "numeric_table_with_defaults", sql: "INSERT INTO numeric_table_with_defaults (r) VALUES (1);"},
	// RecordsStreamProducerIT.java:3482, :3360
	{name: "ENUM", table: "enum_table", sql: "INSERT INTO enum_table (data) VALUES ('hello');"},
	// RecordsSnapshotProducerIT.java:1386-1391
	{name: "PRE1582_TS_1", table: "pre1582_ts_table", sql: "INSERT INTO pre1582_ts_table (ts, tstz) VALUES (" +
		"'0001-01-31T00:00:00'::TIMESTAMP, '0001-01-31T00:00:00+00'::TIMESTAMPTZ)"},
	{name: "PRE1582_TS_2", table: "pre1582_ts_table", sql: "INSERT INTO pre1582_ts_table (ts, tstz) VALUES (" +
		"'1000-06-15T12:30:45.123456'::TIMESTAMP, '1000-06-15T12:30:45.123456+00'::TIMESTAMPTZ)"},
	// RecordsSnapshotProducerIT.java:980
	{name: "NESTED_DOMAIN", table: "nested.alias_table", sql: "INSERT INTO nested.alias_table (value) values (B'101');"},
	{name: "ENUM_ARRAY", table: "enum_array_table", sql: "INSERT INTO enum_array_table (value) VALUES ('{V1, V2}');"},
}

// dbzDomainAlias: schemasAndValuesForDomainAliasTypes (:1007-1083), with
// decimal.handling.mode double and include.unknown.datatypes
// (RecordsSnapshotProducerIT.java:963-966, RecordsStreamProducerIT.java:3110-3114).
// Each type is expected alike for the base column and the domain column;
// the pk field (:1016) is left out: it differs between the two rows.
func dbzDomainAlias() []dbzWant {
	line := 1017
	var w []dbzWant
	add := func(base, schema string, v any) {
		for _, col := range []string{base + "_base", base + "_alias"} {
			w = append(w, dbzWant{field: col, schema: schema, value: v, cite: "AbstractRecordsProducerTest.java:" + itoa(line)})
			line++
			if base == "interval" {
				line++ // the expected value spans two lines
			}
		}
	}
	wkb := dzPointWKB11()
	add("bit", "bytes "+dzBits+" length=3", dzB64(5))
	add("smallint", "int16", dzN(1))
	add("integer", "int32", dzN(1))
	add("bigint", "int64", dzN(1000))
	add("real", "float", dzF(3.14))
	add("float8", "double", dzF(3.14))
	add("numeric", "double", dzF(1234.12))
	add("bool", "boolean", true)
	add("string", "string", "hello")
	add("date", "int32 io.debezium.time.Date", dzN(dzAt(2019, 10, 2, 0, 0, 0, 0).Unix()/86400))
	add("time", "int64 io.debezium.time.MicroTime", dzN((1*3600+2*60+3)*1_000_000))
	add("timetz", "string io.debezium.time.ZonedTime", "01:02:03.123789Z")
	add("timestamp", "int64 io.debezium.time.MicroTimestamp", dzMicros("2019-10-02T01:02:03.123456"))
	add("timestamptz", "string io.debezium.time.ZonedTimestamp", "2019-10-02T11:51:30.123456Z")
	add("timewottz", "int64 io.debezium.time.MicroTime", dzN((1*3600+2*60+3)*1_000_000))
	add("interval", "int64 io.debezium.time.MicroDuration", dzDurationMicros(1, 2, 3, 4, 5, 6, 0))
	add("box", "bytes", dzB64s("(1.0,1.0),(0.0,0.0)"))
	add("circle", "bytes", dzB64s("<(10.0,4.0),10.0>"))
	add("line", "bytes", dzB64s("{-1.0,0.0,0.0}"))
	add("lseg", "bytes", dzB64s("[(0.0,0.0),(0.0,1.0)]"))
	add("path", "bytes", dzB64s("((0.0,0.0),(0.0,1.0),(0.0,2.0))"))
	add("point", "struct io.debezium.data.geometry.Point", dzMap("x", dzF(1), "y", dzF(1), "wkb", wkb, "srid", nil))
	add("polygon", "bytes", dzB64s("((0.0,0.0),(0.0,1.0),(1.0,0.0),(0.0,0.0))"))
	add("char", "string", "a")
	add("text", "string", "Hello World")
	add("json", "string io.debezium.data.Json", `{"key": "value"}`)
	add("xml", "string io.debezium.data.Xml", "<foo>Hello</foo>")
	add("uuid", "string io.debezium.data.Uuid", "40e6215d-b5c6-4896-987c-f30f3678f608")
	add("varbit", "bytes "+dzBits+" length=3", dzB64(5))
	add("inet", "string", "192.168.0.1")
	add("cidr", "string", "192.168.0.0/24")
	add("macaddr", "string", "08:00:2b:01:02:03")
	return w
}

// dbzTimeArrays: schemaAndValuesForTimeArrayTypes (:718-740).
func dbzTimeArrays() []dbzWant {
	c := func(line string) string { return "AbstractRecordsProducerTest.java:" + line }
	return []dbzWant{
		{field: "timea", schema: "array|int64? io.debezium.time.MicroTime", value: dzList(dzN(62_000_000), dzN(3_723_000_000)), cite: c("719-720, :728-730")},
		{field: "timetza", schema: "array|string? io.debezium.time.ZonedTime", value: dzList("11:51:02Z", "12:51:03Z"), cite: c("721-722, :731-733")},
		{field: "timestampa", schema: "array|int64? io.debezium.time.MicroTimestamp", value: dzList(dzN(dzAt(2020, 4, 1, 0, 1, 2, 0).UnixMilli()*1000),
			dzN(dzAt(2020, 4, 1, 1, 2, 3, 0).UnixMilli()*1000)), cite: c("723-724, :734-736")},
		{field: "timestamptza", schema: "array|string? io.debezium.time.ZonedTimestamp", value: dzList("2020-04-01T11:51:02.000000Z", "2020-04-01T12:51:03.000000Z"),
			cite: c("725-726, :737-739")},
	}
}

// dbzNumericDefaults: DBZ-4137, decimal.handling.mode double
// (RecordsStreamProducerIT.java:1131-1149, :1170-1186): the column
// defaults are in the schema.
func dbzNumericDefaults(stmt string) []dbzWant {
	c := func(line string) string { return "RecordsStreamProducerIT.java:" + line }
	switch stmt {
	case "NUMERIC_NULL_DEFAULTS":
		return []dbzWant{
			{field: "r", schema: "int32", value: dzN(1), cite: c("1133")},
			{field: "r_numeric", schema: "double?", value: nil, cite: c("1134-1141")},
			{field: "r_int", schema: "int32?", value: nil, cite: c("1142-1149")},
		}
	case "NUMERIC_DEFAULTS":
		return []dbzWant{
			{field: "r", schema: "int32", value: dzN(1), cite: c("1172")},
			{field: "r_numeric", schema: "double default=1.0", value: dzF(1), cite: c("1173-1179")},
			{field: "r_int", schema: "int32 default=2", value: dzN(2), cite: c("1180-1186")},
		}
	}
	return nil
}

// dbzEnums: DBZ-1680 and the enum array test (RecordsStreamProducerIT.java:
// 3488-3496, :3366-3373), io.debezium.data.Enum with its allowed labels.
func dbzEnums(stmt string) []dbzWant {
	c := func(line string) string { return "RecordsStreamProducerIT.java:" + line }
	switch stmt {
	case "ENUM":
		return []dbzWant{
			{field: "data", schema: "string", value: "hello", cite: c("3489")},
			{field: "value", schema: "string io.debezium.data.Enum allowed=V1,V2 default=V1", value: "V1", cite: c("3490-3496")},
		}
	case "ENUM_ARRAY":
		return []dbzWant{{field: "value", schema: "array|string io.debezium.data.Enum allowed=V1,V2", value: dzList("V1", "V2"), cite: c("3367-3373")}}
	}
	return nil
}

// dbzPre1582: shouldSnapshotPre1582TimestampCorrectly
// (RecordsSnapshotProducerIT.java:1398-1421): proleptic Gregorian µs.
func dbzPre1582(stmt string) []dbzWant {
	c := func(line string) string { return "RecordsSnapshotProducerIT.java:" + line }
	switch stmt {
	case "PRE1582_TS_1":
		return []dbzWant{
			{field: "ts", schema: "int64 io.debezium.time.MicroTimestamp", value: dzN(dzAt(1, 1, 31, 0, 0, 0, 0).Unix() * 1_000_000), cite: c("1398-1399, :1407")},
			{field: "tstz", schema: "string io.debezium.time.ZonedTimestamp", value: "0001-01-31T00:00:00.000000Z", cite: c("1400, :1408")},
		}
	case "PRE1582_TS_2":
		return []dbzWant{
			{field: "ts", schema: "int64 io.debezium.time.MicroTimestamp", value: dzN(dzAt(1000, 6, 15, 12, 30, 45, 0).Unix()*1_000_000 + 123456), cite: c("1402-1403, :1411")},
			{field: "tstz", schema: "string io.debezium.time.ZonedTimestamp", value: "1000-06-15T12:30:45.123456Z", cite: c("1404, :1412")},
		}
	}
	return nil
}
