package connector_test

// Debezium's time.precision.mode isostring, microseconds and nanoseconds tests:
// PostgresTemporalPrecisionHandlingIT.java at v3.6.1.Final (its table at
// :58-81, its statements and expected values cited per line).

import (
	"fmt"
	"strconv"
	"strings"
)

const dzTemporalTable = "temporaltype.test_data_types"

const dbzTemporalDDL = `
CREATE SCHEMA IF NOT EXISTS temporaltype ;
CREATE TABLE IF NOT EXISTS temporaltype.test_data_types
(
    c_id INTEGER             ,
    c_json JSON              ,
    c_jsonb JSONB            ,
    c_date DATE              ,
    c_timestamp0 TIMESTAMP(0),
    c_timestamp1 TIMESTAMP(1),
    c_timestamp2 TIMESTAMP(2),
    c_timestamp3 TIMESTAMP(3),
    c_timestamp4 TIMESTAMP(4),
    c_timestamp5 TIMESTAMP(5),
    c_timestamp6 TIMESTAMP(6),
    c_timestamptz TIMESTAMPTZ,
    c_time TIME WITH TIME ZONE,
    c_time_whtz TIME WITHOUT TIME ZONE,
    c_interval INTERVAL,
    PRIMARY KEY(c_id)
) ;
ALTER TABLE temporaltype.test_data_types REPLICA IDENTITY FULL;
`

// dzTemporalInsert is one of Debezium's INSERTs (its c_id first), and the
// same with c_id+100 for the streaming run.
func dzTemporalInsert(name string, id int, rest string) dbzStatement {
	sql := func(id int) string {
		return "INSERT INTO temporaltype.test_data_types VALUES (" + itoa(id) + " , " + rest + " );"
	}
	return dbzStatement{name: name, table: dzTemporalTable, sql: sql(id), again: sql(id + 100)}
}

var dbzTemporalStatements = []dbzStatement{
	// :191-192
	dzTemporalInsert("TEMPORAL_NULLS", 1, "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"),
	// :214-217
	dzTemporalInsert("TEMPORAL_VALUES", 2, `'{"jfield": 111}'::json , '{"jfield": 211}'::jsonb , '2017-09-15'::DATE , `+
		`'2019-07-09 02:28:57+01' , '2019-07-09 02:28:57.1+01' , '2019-07-09 02:28:57.12+01' , '2019-07-09 02:28:57.123+01' , `+
		`'2019-07-09 02:28:57.1234+01' , '2019-07-09 02:28:57.12345+01' , '2019-07-09 02:28:57.123456+01', `+
		`'2019-07-09 02:28:10.123456+01', '04:05:11 PST', '04:05:11.789', INTERVAL '1' YEAR`),
	// :358-359, :376-377
	dzTemporalInsert("TEMPORAL_PINF", 10, "NULL, NULL, NULL, 'infinity', 'infinity', 'infinity', 'infinity', 'infinity', 'infinity', 'infinity', NULL, NULL, NULL, NULL"),
	dzTemporalInsert("TEMPORAL_NINF", 11, "NULL, NULL, NULL, '-infinity', '-infinity', '-infinity', '-infinity', '-infinity', '-infinity', '-infinity', NULL, NULL, NULL, NULL"),
}

// dbzTemporal: shouldConvertTemporalsMicroseconds (:178-260),
// shouldConvertTemporalsNanoseconds (:263-344) and
// shouldConvertInfinityTimestampsToLongMinMax (:347-394, nanoseconds).
func dbzTemporal(nanos bool, stmt string) []dbzWant {
	c := func(line string) string { return "PostgresTemporalPrecisionHandlingIT.java:" + line }
	ts := "int64? io.debezium.time.MicroTimestamp"
	tm := "int64? io.debezium.time.MicroTime"
	scale := int64(1)
	lines := map[string]string{"date": "227", "ts": "229", "tz": "239", "time": "241", "whtz": "243", "iv": "245", "nulls": "200-211"}
	if nanos {
		ts, tm, scale = "int64? io.debezium.time.NanoTimestamp", "int64? io.debezium.time.NanoTime", 1000
		lines = map[string]string{"date": "311", "ts": "313", "tz": "323", "time": "325", "whtz": "327", "iv": "329", "nulls": "284-295"}
	}
	cols := strings.Fields("c_timestamp0 c_timestamp1 c_timestamp2 c_timestamp3 c_timestamp4 c_timestamp5 c_timestamp6")
	switch stmt {
	case "TEMPORAL_NULLS":
		var w []dbzWant
		for _, f := range append(append([]string{"c_date"}, cols...), "c_timestamptz", "c_time", "c_time_whtz", "c_interval") {
			w = append(w, dbzWant{field: f, value: nil, cite: c(lines["nulls"])})
		}
		return w
	case "TEMPORAL_VALUES":
		w := []dbzWant{
			{field: "c_date", schema: "int32? io.debezium.time.Date", value: dzN(17424), cite: c(lines["date"])},
			{field: "c_timestamptz", schema: "string? io.debezium.time.ZonedTimestamp", value: "2019-07-09T01:28:10.123456Z", cite: c(lines["tz"])},
			{field: "c_time", schema: "string? io.debezium.time.ZonedTime", value: "12:05:11Z", cite: c(lines["time"])},
			{field: "c_time_whtz", schema: tm, value: dzN(14711789000 * scale), cite: c(lines["whtz"])},
			{field: "c_interval", schema: "int64? io.debezium.time.MicroDuration", value: dzN(31557600000000), cite: c(lines["iv"])},
		}
		// '2019-07-09 02:28:57[.1…6]+01' into TIMESTAMP(0…6): the offset is
		// dropped; µs 1562639337000000 + the fraction.
		fractions := []int64{0, 100000, 120000, 123000, 123400, 123450, 123456}
		first, _ := strconv.Atoi(lines["ts"])
		for i, f := range cols {
			line := first + i + 2 // comment lines precede c_timestamp1 and 2
			switch i {
			case 0:
				line = first
			case 1:
				line = first + 2
			}
			w = append(w, dbzWant{field: f, schema: ts, value: dzN((1562639337000000 + fractions[i]) * scale), cite: c(itoa(line))})
		}
		return w
	case "TEMPORAL_PINF", "TEMPORAL_NINF":
		if !nanos {
			return nil // Debezium's test runs these rows in nanoseconds mode only
		}
		v, first := dzN(9223372036854775807), 367
		if stmt == "TEMPORAL_NINF" {
			v, first = dzN(-9223372036854775808), 385
		}
		var w []dbzWant
		for i, f := range cols {
			w = append(w, dbzWant{field: f, schema: ts, value: v, cite: c(itoa(first + i))})
		}
		return w
	}
	return nil
}

// dbzISO: time.precision.mode isostring: shouldConvertTemporalsToIsoString
// (:93-175), and the snapshot of time_table and array_table in
// shouldReceiveDeletesWithInfinityDate and
// shouldReceiveChangesForInsertsWithArrayTypes (:397-445).
func dbzISO(stmt string) []dbzWant {
	c := func(line string) string { return "PostgresTemporalPrecisionHandlingIT.java:" + line }
	const iso = "string? io.debezium.time.IsoTimestamp"
	prefix := func(p string) func(any) error {
		return func(g any) error {
			if s, ok := g.(string); !ok || !strings.HasPrefix(s, p) {
				return fmt.Errorf("%v, want a string starting %q", g, p)
			}
			return nil
		}
	}
	switch stmt {
	case "TEMPORAL_VALUES":
		return []dbzWant{
			{field: "c_date", schema: "string? io.debezium.time.IsoDate", value: "2017-09-15Z", cite: c("142")},
			{field: "c_timestamp0", schema: iso, value: "2019-07-09T02:28:57Z", cite: c("144")},
			{field: "c_timestamp1", schema: iso, value: "2019-07-09T02:28:57.1Z", cite: c("146")},
			{field: "c_timestamp2", schema: iso, value: "2019-07-09T02:28:57.12Z", cite: c("148")},
			{field: "c_timestamp3", schema: iso, value: "2019-07-09T02:28:57.123Z", cite: c("149")},
			{field: "c_timestamp4", schema: iso, value: "2019-07-09T02:28:57.1234Z", cite: c("150")},
			{field: "c_timestamp5", schema: iso, value: "2019-07-09T02:28:57.12345Z", cite: c("151")},
			{field: "c_timestamp6", schema: iso, value: "2019-07-09T02:28:57.123456Z", cite: c("152")},
			{field: "c_timestamptz", schema: "string? io.debezium.time.ZonedTimestamp", value: "2019-07-09T01:28:10.123456Z", cite: c("154")},
			{field: "c_time", schema: "string? io.debezium.time.ZonedTime", value: "12:05:11Z", cite: c("156")},
			{field: "c_time_whtz", schema: "string? io.debezium.time.IsoTime", value: "04:05:11.789Z", cite: c("158")},
			{field: "c_interval", schema: "int64? io.debezium.time.MicroDuration", value: dzN(31557600000000), cite: c("160")},
		}
	case "DATE_TIME_TYPES":
		return []dbzWant{
			{field: "date_pinf", schema: "string? io.debezium.time.IsoDate", match: prefix("+292278994-08-"), cite: c("414")},
			{field: "date_ninf", schema: "string? io.debezium.time.IsoDate", match: prefix("+292269055-12-"), cite: c("416")},
			{field: "tz_max", schema: "string? io.debezium.time.ZonedTimestamp", value: "+294247-01-01T23:59:59.999999Z", cite: c("417")},
			{field: "tz_min", schema: "string? io.debezium.time.ZonedTimestamp", value: "-4713-12-31T23:59:59.999999Z", cite: c("418")},
			{field: "ts_pinf", schema: iso, value: "+294247-01-10T04:00:25.2Z", cite: c("419")},
			{field: "ts_ninf", schema: iso, value: "-290308-12-21T19:59:27.6Z", cite: c("420")},
			{field: "tz_pinf", schema: "string? io.debezium.time.ZonedTimestamp", value: "infinity", cite: c("421")},
			{field: "tz_ninf", schema: "string? io.debezium.time.ZonedTimestamp", value: "-infinity", cite: c("422")},
		}
	case "ARRAY_TYPES":
		return []dbzWant{
			{field: "tsrange_array", schema: "array?|string?", value: dzList(`["2019-03-31 15:30:00",infinity)`, `["2019-03-31 15:30:00","2019-04-30 15:30:00"]`), cite: c("442")},
			{field: "daterange_array", schema: "array?|string?", value: dzList("[2019-03-31,infinity)", "[2019-03-31,2019-04-30)"), cite: c("443")},
		}
	}
	return nil
}

// PostgresMoneyIT.java (v3.6.1.Final; its table at :247): money's extremes, null and zero in
// each decimal.handling.mode. Its statements insert two rows each
// (:258, :136); here each row is its own statement, ids +100 for the
// streaming run.
const dbzMoneyDDL = `
CREATE SCHEMA post_money;
CREATE TABLE post_money.debezium_test (id int4 NOT NULL, m money, CONSTRAINT dbz_test_pkey PRIMARY KEY (id));
`

const dzMoneyTable = "post_money.debezium_test"

func dzMoneyInsert(name string, id int, m string) dbzStatement {
	sql := func(id int) string {
		return "insert into post_money.debezium_test(id, m) values(" + itoa(id) + ", " + m + ");"
	}
	return dbzStatement{name: name, table: dzMoneyTable, sql: sql(id), again: sql(id + 100)}
}

var dbzMoneyStatements = []dbzStatement{
	dzMoneyInsert("MONEY_MIN", 8, "-92233720368547758.08"),
	dzMoneyInsert("MONEY_MAX", 9, "92233720368547758.07"),
	dzMoneyInsert("MONEY_NULL", 10, "null"),
	dzMoneyInsert("MONEY_ZERO", 11, "'0.00'::money"),
}

// dbzMoney: shouldReceiveChangesForInsertsWith{Precise,String,Double}Mode
// (:47-122) and shouldReceiveChangesForInsertNullAndZeroMoney (:124-146).
func dbzMoney(mode, stmt string) []dbzWant {
	c := func(line string) string { return "PostgresMoneyIT.java:" + line }
	type exp struct {
		v    any
		line string
	}
	var table map[string]exp
	schema := "bytes? " + dzDecimal + " scale=2"
	switch mode {
	case "precise":
		table = map[string]exp{"MONEY_MIN": {dzDec(-9223372036854775808), "67"}, "MONEY_MAX": {dzDec(9223372036854775807), "69"},
			"MONEY_NULL": {nil, "143"}, "MONEY_ZERO": {dzDec(0), "145"}}
	case "string":
		schema = "string?"
		table = map[string]exp{"MONEY_MIN": {"-92233720368547758.08", "93"}, "MONEY_MAX": {"92233720368547758.07", "95"}}
	case "double":
		schema = "double?"
		table = map[string]exp{"MONEY_MIN": {dzF(-92233720368547758.00), "119"}, "MONEY_MAX": {dzF(92233720368547758.00), "121"}}
	}
	e, ok := table[stmt]
	if !ok {
		return nil
	}
	return []dbzWant{{field: "m", schema: schema, value: e.v, cite: c(e.line)}}
}

// DomainTypesIT.java (v3.6.1.Final): an array of a domain over text
// (:37-41). Without include.unknown.datatypes Debezium leaves the column
// out (:60); with it, the elements are bytes of their text (:80). mooncdc
// writes the array as its base type's array, strings, in both cases: a
// documented difference (docs/types.md "Differences from Debezium 3.6.1", row
// "array of a domain type"), asserted as such.
const dbzDomainArrayDDL = `
CREATE SCHEMA domaintypes;
CREATE DOMAIN nmtoken AS text CHECK (VALUE ~* '^[A-Z0-9\.\_\-\:]+$');
CREATE TABLE domaintypes.t1 (id serial primary key, token nmtoken, tokens nmtoken[]);
`

const dzDomainArrayTable = "domaintypes.t1"

var dbzDomainArrayStatements = []dbzStatement{
	// :53, :75
	{name: "DOMAIN_ARRAY", table: dzDomainArrayTable, sql: `INSERT INTO domaintypes.t1 (id, token, tokens) values (default, 'foo', '{"bar","baz"}')`},
}

func dbzDomainArray(includeUnknown bool) []dbzWant {
	c := func(line string) string { return "DomainTypesIT.java:" + line }
	const diff = "docs/types.md \"Differences from Debezium 3.6.1\", row array of a domain type"
	ours := dbzWant{field: "tokens", schema: "array?|string?", value: dzList("bar", "baz"), diff: diff}
	if !includeUnknown {
		ours.cite = c("60") + " (Debezium: the column left out)"
		return []dbzWant{{field: "token", schema: "string?", value: "foo", cite: c("59")}, ours}
	}
	ours.cite = c("80") + ` (Debezium: ["YmFy","YmF6"], the bytes of the text)`
	return []dbzWant{ours}
}
