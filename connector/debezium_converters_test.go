package connector_test

// Types and values that TestEveryType has and no Debezium test does
// (and that only the deleted golden testdata/types/plain.json had): a
// name, a bare bpchar, a bool[], a tsvector and a domain over text with a
// CHECK; the bounds of int2, int4, int8, oid, numeric(10,2) and
// numeric(5). No Debezium test states these values, so the expectations
// follow the
// converters Debezium 3.6.1 picks for them (PostgresValueConverter.java,
// JdbcValueConverters.java at v3.6.1.Final), cited per field: they are
// derived from Debezium's code, not from mooncdc's output.

const dbzConverterDDL = `
CREATE DOMAIN conv_label AS text CHECK (VALUE <> 'forbidden');
CREATE TABLE converter_table (pk SERIAL, nm name, bpc bpchar, a_b bool[], tsv tsvector, lbl conv_label, PRIMARY KEY(pk));
CREATE TABLE bounds_table (pk SERIAL, i2 int2, i4 int4, i8 int8, o oid, n10_2 numeric(10,2), n5 numeric(5), PRIMARY KEY(pk));
`

var dbzConverterStatements = []dbzStatement{
	{name: "CONVERTER_TYPES", table: "converter_table",
		sql: "INSERT INTO converter_table (nm, bpc, a_b, tsv, lbl) VALUES ('a_name', 'bp', '{t,f,NULL}', 'a fat cat', 'domain text')"},
	{name: "BOUNDS_MAX", table: "bounds_table",
		sql: "INSERT INTO bounds_table (i2, i4, i8, o, n10_2, n5) VALUES (32767, 2147483647, 9223372036854775807, 4294967295, 99999999.99, 99999)"},
	{name: "BOUNDS_MIN", table: "bounds_table",
		sql: "INSERT INTO bounds_table (i2, i4, i8, o, n10_2, n5) VALUES (-32768, -2147483648, -9223372036854775808, 0, -99999999.99, -99999)"},
}

// dbzBounds: the expectations of BOUNDS_MAX and BOUNDS_MIN in the
// default modes. The schemas are the ones AbstractRecordsProducerTest.java
// asserts for these types (:239-241, :249, :269-270); the values are the
// column's own: the integer converters pass a Short, Integer or Long
// through (JdbcValueConverters.java:985-1065), oid is an int64
// (PostgresValueConverter.java:213, :447), and a numeric(p,s) is a
// Decimal of scale s (JdbcValueConverters.java:1145), printed by
// JsonConverter as base64 of its unscaled two's complement.
func dbzBounds(max bool) []dbzWant {
	const arpt = "AbstractRecordsProducerTest.java:"
	const dec = "bytes? org.apache.kafka.connect.data.Decimal"
	sign := int64(1)
	i2, i4, i8, o := int64(32767), int64(2147483647), int64(9223372036854775807), int64(4294967295)
	if !max {
		sign, i2, i4, i8, o = -1, -32768, -2147483648, -9223372036854775808, 0
	}
	return []dbzWant{
		{field: "i2", schema: "int16?", value: dzN(i2), cite: arpt + "239, JdbcValueConverters.java:985-1010"},
		{field: "i4", schema: "int32?", value: dzN(i4), cite: arpt + "240, JdbcValueConverters.java:1012-1037"},
		{field: "i8", schema: "int64?", value: dzN(i8), cite: arpt + "241, JdbcValueConverters.java:1039-1065"},
		{field: "o", schema: "int64?", value: dzN(o), cite: arpt + "249, PostgresValueConverter.java:213, :447"},
		{field: "n10_2", schema: dec + " scale=2 connect.decimal.precision=10", value: dzDec(sign * 9999999999), cite: arpt + "269, JdbcValueConverters.java:1145"},
		{field: "n5", schema: dec + " scale=0 connect.decimal.precision=5", value: dzDec(sign * 99999), cite: arpt + "270, JdbcValueConverters.java:1145"},
	}
}

// dbzConverterTypes: the expectations of CONVERTER_TYPES in the default
// modes.
func dbzConverterTypes() []dbzWant {
	const pvc = "PostgresValueConverter.java:"
	return []dbzWant{
		// pgjdbc reports name as VARCHAR: a string, converted as text
		// (JdbcValueConverters.java:214-218, :293-302).
		{field: "nm", schema: "string?", value: "a_name", cite: "JdbcValueConverters.java:214-218, :293-302"},
		// bpchar without a length: a string, the text as sent (no padding
		// to add: its length is the value's).
		{field: "bpc", schema: "string?", value: "bp", cite: pvc + "228-229, :463-464"},
		{field: "a_b", schema: "array?|boolean?", value: dzList(true, false, nil), cite: pvc + "270-271, :483"},
		// Postgres' text of the vector: lexemes sorted, quoted.
		{field: "tsv", schema: "string? io.debezium.data.Tsvector", value: "'a' 'cat' 'fat'", cite: pvc + "240-241, :462-464 (convertString of the text)"},
		// A domain is its base type's schema and value
		// (RecordsStreamProducerIT.java:3144, text2; the CHECK changes neither).
		{field: "lbl", schema: "string?", value: "domain text", cite: "RecordsStreamProducerIT.java:3144"},
	}
}
