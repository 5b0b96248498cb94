package connector_test

// Types that TestEveryType has and no Debezium test does (types_test.go's
// list of what plain.json covers beyond this suite): a name, a bare
// bpchar, a bool[], a tsvector and a domain over text with a CHECK. No
// Debezium test states their values, so the expectations follow the
// converters Debezium 3.6.1 picks for them (PostgresValueConverter.java,
// JdbcValueConverters.java at v3.6.1.Final), cited per field: they are
// derived from Debezium's code, not from mooncdc's output.

const dbzConverterDDL = `
CREATE DOMAIN conv_label AS text CHECK (VALUE <> 'forbidden');
CREATE TABLE converter_table (pk SERIAL, nm name, bpc bpchar, a_b bool[], tsv tsvector, lbl conv_label, PRIMARY KEY(pk));
`

var dbzConverterStatements = []dbzStatement{
	{name: "CONVERTER_TYPES", table: "converter_table",
		sql: "INSERT INTO converter_table (nm, bpc, a_b, tsv, lbl) VALUES ('a_name', 'bp', '{t,f,NULL}', 'a fat cat', 'domain text')"},
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
