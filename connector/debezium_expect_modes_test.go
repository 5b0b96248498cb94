package connector_test

// Debezium's expectations for time and arrays in the default modes, and
// for the other modes (AbstractRecordsProducerTest.java at v3.6.1.Final).

import (
	"fmt"
	"strings"
	"time"
)

func dzAt(year int, month time.Month, day, h, m, s, nanos int) time.Time {
	return time.Date(year, month, day, h, m, s, nanos, time.UTC)
}

// dbzDateTimeAdaptive: schemaAndValuesForDateTimeTypes (:655-716),
// time.precision.mode adaptive.
func dbzDateTimeAdaptive() []dbzWant {
	c := func(line string) string { return "AbstractRecordsProducerTest.java:" + line }
	const (
		microTS = "int64? io.debezium.time.MicroTimestamp"
		zonedTS = "string? io.debezium.time.ZonedTimestamp"
	)
	tsLarge := dzAt(21016, 11, 4, 13, 51, 30, 0).UnixMilli() * 1000
	return []dbzWant{
		{field: "ts", schema: microTS, value: dzMicros("2016-11-04T13:51:30.123456"), cite: c("656, :691")},
		{field: "tsneg", schema: microTS, value: dzMicros("1936-10-25T22:10:12.608"), cite: c("658, :692")},
		{field: "ts_ms", schema: "int64? io.debezium.time.Timestamp", value: dzMillis("2016-11-04T13:51:30.123456"), cite: c("657, :693")},
		{field: "ts_us", schema: microTS, value: dzMicros("2016-11-04T13:51:30.123456"), cite: c("694")},
		{field: "tz", schema: zonedTS, value: "2016-11-04T11:51:30.123456Z", cite: c("659, :695")},
		{field: "date", schema: "int32? io.debezium.time.Date", value: dzN(dzAt(2016, 11, 4, 0, 0, 0, 0).Unix() / 86400), cite: c("660, :696")},
		{field: "ti", schema: "int64? io.debezium.time.MicroTime", value: dzN((13*3600 + 51*60 + 30) * 1_000_000), cite: c("661, :697")},
		{field: "tip", schema: "int32? io.debezium.time.Time", value: dzN((13*3600+51*60+30)*1000 + 123), cite: c("662, :698")},
		{field: "ttf", schema: "int64? io.debezium.time.MicroTime", value: dzN(86400 * 1_000_000), cite: c("663, :699")},
		{field: "ttz", schema: "string? io.debezium.time.ZonedTime", value: "11:51:30.123789Z", cite: c("664, :700")},
		{field: "tptz", schema: "string? io.debezium.time.ZonedTime", value: "11:51:30.123Z", cite: c("665, :701")},
		{field: "it", schema: "int64? io.debezium.time.MicroDuration", value: dzDurationMicros(1, 2, 3, 4, 5, 6, 780000), cite: c("666, :702")},
		{field: "ts_large", schema: microTS, value: dzN(tsLarge + 123456), cite: c("668, :703")},
		{field: "ts_large_us", schema: microTS, value: dzN(tsLarge + 123457), cite: c("669, :704")},
		{field: "ts_large_ms", schema: "int64? io.debezium.time.Timestamp", value: dzN(dzAt(21016, 11, 4, 13, 51, 30, 124000000).UnixMilli()), cite: c("670, :705")},
		{field: "tz_large", schema: zonedTS, value: "+21016-11-04T06:51:30.123456Z", cite: c("672, :706")},
		{field: "ts_max", schema: microTS, value: dzN(9223371331200000000 - 1), cite: c("707")},
		{field: "ts_min", schema: microTS, value: dzN(-210831897600000001), cite: c("680-684, :708")},
		{field: "tz_max", schema: zonedTS, value: "+294247-01-01T23:59:59.999999Z", cite: c("709")},
		{field: "tz_min", schema: zonedTS, value: "-4713-12-31T23:59:59.999999Z", cite: c("685-690, :710")},
		// PgStatement.DATE_POSITIVE_INFINITY / DATE_NEGATIVE_INFINITY (pgjdbc).
		{field: "ts_pinf", schema: microTS, value: dzN(9223372036825200000), cite: c("711")},
		{field: "ts_ninf", schema: microTS, value: dzN(-9223372036832400000), cite: c("712")},
		{field: "tz_pinf", schema: zonedTS, value: "infinity", cite: c("713")},
		{field: "tz_ninf", schema: zonedTS, value: "-infinity", cite: c("714")},
		{field: "tz_zero", schema: zonedTS, value: "+21016-11-04T06:51:30.000000Z", cite: c("673, :715")},
	}
}

// dbzArrays: schemasAndValuesForArrayTypes (:791-899).
func dbzArrays() []dbzWant {
	c := func(line string) string { return "AbstractRecordsProducerTest.java:" + line }
	day := func(d int) any { return dzN(dzAt(2016, 11, d, 0, 0, 0, 0).Unix() / 86400) }
	return []dbzWant{
		{field: "int_array", schema: "array?|int32?", value: dzList(dzN(1), dzN(2), dzN(3)), cite: c("845")},
		{field: "bigint_array", schema: "array?|int64?", value: dzList(dzN(1550166368505037572)), cite: c("847")},
		{field: "text_array", schema: "array?|string?", value: dzList("one", "two", "three"), cite: c("849")},
		{field: "char_array", schema: "array?|string?", value: dzList("cone      ", "ctwo      ", "cthree    "), cite: c("851")},
		{field: "varchar_array", schema: "array?|string?", value: dzList("vcone", "vctwo", "vcthree"), cite: c("853")},
		{field: "date_array", schema: "array?|int32? io.debezium.time.Date", value: dzList(day(4), day(5), day(6)), cite: c("855")},
		{field: "numeric_array", schema: "array?|bytes? org.apache.kafka.connect.data.Decimal scale=2 connect.decimal.precision=10", value: dzList(dzDec(120), dzDec(340), dzDec(560)), cite: c("860")},
		{field: "varnumeric_array", schema: "array?|struct? io.debezium.data.VariableScaleDecimal", value: dzList(dzVSD(1, 11), dzVSD(2, 222), dzVSD(3, 3333)), cite: c("792-803, :866")},
		{field: "citext_array", schema: "array?|string?", value: dzList("four", "five", "six"), cite: c("868")},
		{field: "inet_array", schema: "array?|string?", value: dzList("192.168.2.0/12", "192.168.1.1", "192.168.0.2/1"), cite: c("870")},
		{field: "cidr_array", schema: "array?|string?", value: dzList("192.168.100.128/25", "192.168.0.0/25", "192.168.1.0/24"), cite: c("872")},
		{field: "macaddr_array", schema: "array?|string?", value: dzList("08:00:2b:01:02:03", "08:00:2b:01:02:03", "08:00:2b:01:02:03"), cite: c("874")},
		{field: "tsrange_array", schema: "array?|string?", value: dzList(`["2019-03-31 15:30:00",infinity)`, `["2019-03-31 15:30:00","2019-04-30 15:30:00"]`), cite: c("876")},
		{field: "tstzrange_array", schema: "array?|string?", cite: c("880-881, condition :818-842"), match: func(g any) error {
			l, ok := g.([]any)
			if !ok || len(l) != 2 {
				return fmt.Errorf("%v, want 2 ranges", g)
			}
			if err := dzInstantsIn(l[0], "2017-06-05 11:29:12.549426+00:00"); err != nil {
				return err
			}
			return dzInstantsIn(l[1], "2017-06-05 11:29:12.549426+00:00", "2017-06-05 12:34:56.789012+00:00")
		}},
		{field: "daterange_array", schema: "array?|string?", value: dzList("[2019-03-31,infinity)", "[2019-03-31,2019-04-30)"), cite: c("883")},
		{field: "int4range_array", schema: "array?|string?", value: dzList("[1,6)", "[1,4)"), cite: c("885")},
		{field: "numerange_array", schema: "array?|string?", value: dzList("[5.3,6.3)", "[10.0,20.0)"), cite: c("887")},
		{field: "int8range_array", schema: "array?|string?", value: dzList("[1000000,6000000)", "[5000,9000)"), cite: c("889")},
		{field: "uuid_array", schema: "array?|string? io.debezium.data.Uuid", value: dzList("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "f0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), cite: c("891")},
		{field: "json_array", schema: "array?|string? io.debezium.data.Json", value: dzList(`{"bar": "baz"}`, `{"foo": "qux"}`), cite: c("893")},
		{field: "jsonb_array", schema: "array?|string? io.debezium.data.Json", value: dzList(`{"bar": "baz"}`, `{"foo": "qux"}`), cite: c("895")},
		{field: "oid_array", schema: "array?|int64?", value: dzList(dzN(3), dzN(4_000_000_000)), cite: c("897")},
	}
}

// dbzAlt: the "dzalt" pipeline's modes (see dbzPipes).
func dbzAlt(stmt string) []dbzWant {
	c := func(line string) string { return "AbstractRecordsProducerTest.java:" + line }
	str := func(field, v, line string) dbzWant {
		return dbzWant{field: field, schema: "string?", value: v, cite: c(line)}
	}
	hsMap := "map?"
	if strings.HasPrefix(stmt, "MONEY_") {
		return dbzMoney("string", stmt)
	}
	switch stmt {
	case "DATE_TIME_TYPES":
		// schemaAndValuesForDateTimeTypesAdaptiveTimeMicroseconds
		// (:749-775), less its "it": this pipeline writes intervals as
		// strings (schemaAndValuesForIntervalAsString, :742-747).
		tsLarge := dzAt(21016, 11, 4, 13, 51, 30, 0).UnixMilli() * 1000
		const microTS = "int64? io.debezium.time.MicroTimestamp"
		return []dbzWant{
			{field: "ts", schema: microTS, value: dzMicros("2016-11-04T13:51:30.123456"), cite: c("750, :763")},
			{field: "tsneg", schema: microTS, value: dzMicros("1936-10-25T22:10:12.608"), cite: c("752, :764")},
			{field: "ts_ms", schema: "int64? io.debezium.time.Timestamp", value: dzMillis("2016-11-04T13:51:30.123456"), cite: c("751, :765")},
			{field: "ts_us", schema: microTS, value: dzMicros("2016-11-04T13:51:30.123456"), cite: c("766")},
			{field: "tz", schema: "string? io.debezium.time.ZonedTimestamp", value: "2016-11-04T11:51:30.123456Z", cite: c("753, :767")},
			{field: "date", schema: "int32? io.debezium.time.Date", value: dzN(dzAt(2016, 11, 4, 0, 0, 0, 0).Unix() / 86400), cite: c("754, :768")},
			{field: "ti", schema: "int64? io.debezium.time.MicroTime", value: dzN((13*3600 + 51*60 + 30) * 1_000_000), cite: c("755, :769")},
			{field: "ttz", schema: "string? io.debezium.time.ZonedTime", value: "11:51:30.123789Z", cite: c("756, :770")},
			{field: "it", schema: "string? io.debezium.time.Interval", value: "P1Y2M3DT4H5M6.78S", cite: c("744-746")},
			{field: "ts_large", schema: microTS, value: dzN(tsLarge + 123456), cite: c("759, :772")},
			{field: "ts_large_us", schema: microTS, value: dzN(tsLarge + 123457), cite: c("760, :773")},
			{field: "ts_large_ms", schema: "int64? io.debezium.time.Timestamp", value: dzN(dzAt(21016, 11, 4, 13, 51, 30, 124000000).UnixMilli()), cite: c("761, :774")},
		}
	case "NUMERIC_DECIMAL_TYPES":
		// schemasAndValuesForStringEncodedNumericTypes (:283-304), with the
		// NaN statement (RecordsStreamProducerIT.java:1205).
		w := []dbzWant{
			str("d", "1.10", "285"), str("dzs", "10", "286"), str("dvs", "10.1111", "287"), str("n", "22.2200", "288"),
			str("nzs", "22", "289"), str("nvs", "22.2222", "290"), str("d_int", "1.00", "291"), str("dzs_int", "10", "292"),
			str("dvs_int", "10", "293"), str("n_int", "22.0000", "294"), str("nzs_int", "22", "295"), str("nvs_int", "22", "296"),
		}
		for i, f := range []string{"d_nan", "dzs_nan", "dvs_nan", "n_nan", "nzs_nan", "nvs_nan"} {
			w = append(w, str(f, "NAN", itoa(297+i)))
		}
		return w
	case "NUMERIC_DECIMAL_TYPES_WITH_INFINITY":
		// schemasAndValuesForStringEncodedNumericTypesWithInfinity
		// (:306-322; RecordsStreamProducerIT.java:1216).
		return []dbzWant{
			str("d", "1.10", "308"), str("dzs", "10", "309"), str("dvs", "10.1111", "310"), str("n", "22.2200", "311"),
			str("nzs", "22", "312"), str("nvs", "22.2222", "313"), str("d_int", "1.00", "314"), str("dzs_int", "10", "315"),
			str("dvs_int", "10", "316"), str("n_int", "22.0000", "317"), str("nzs_int", "22", "318"), str("nvs_int", "22", "319"),
			str("dvs_nan", "POSITIVE_INFINITY", "320"), str("nvs_nan", "NEGATIVE_INFINITY", "321"),
		}
	case "HSTORE_TYPE":
		return []dbzWant{{field: "hs", schema: hsMap, value: dzMap("key", "val"), cite: c("341-344")}}
	case "HSTORE_TYPE_WITH_MULTIPLE_VALUES":
		return []dbzWant{
			{field: "hs", schema: hsMap, value: dzMap("key1", "val1", "key2", "val2", "key3", "val3"), cite: c("348-351, :361")},
			{field: "hsarr", schema: "array?|map?", value: dzList(dzMap("key4", "val4", "key5", nil), dzMap("key6", "val6")), cite: c("353-358, :362")},
		}
	case "HSTORE_TYPE_WITH_NULL_VALUES":
		return []dbzWant{{field: "hs", schema: hsMap, value: dzMap("key1", "val1", "key2", nil), cite: c("366-369")}}
	case "HSTORE_TYPE_WITH_SPECIAL_CHAR":
		return []dbzWant{{field: "hs", schema: hsMap, value: dzMap("key_#1", "val 1", "key 2", " ##123 78"), cite: c("373-376")}}
	case "SALARY":
		return []dbzWant{{field: "salary", schema: "string?", value: "123.45", cite: "RecordsStreamProducerIT.java:3785 (testStreamMoneyAsString)"}}
	case "BYTEA_BINMODE":
		return []dbzWant{
			str("ba", "AQID", "450"),
			{field: "bytea_array", schema: "array?|string?", value: dzList("AAEC", "AwQF"), cite: c("451-452")},
		}
	case "CIRCLE":
		return []dbzWant{str("ccircle", "PCgxMC4wLDIwLjApLDEwLjA+", "467")}
	}
	return nil
}

// dbzDouble: the "dzdbl" pipeline, decimal.handling.mode double and
// binary.handling.mode hex.
func dbzDouble(stmt string) []dbzWant {
	c := func(line string) string { return "AbstractRecordsProducerTest.java:" + line }
	dbl := func(field string, v any, line string) dbzWant {
		return dbzWant{field: field, schema: "double?", value: v, cite: c(line)}
	}
	if strings.HasPrefix(stmt, "MONEY_") {
		return dbzMoney("double", stmt)
	}
	switch stmt {
	case "NUMERIC_DECIMAL_TYPES":
		// schemasAndValuesForDoubleEncodedNumericTypes (:324-339), with the
		// NaN statement (RecordsStreamProducerIT.java:1195).
		w := []dbzWant{
			dbl("d", dzF(1.1), "326"), dbl("dzs", dzF(10), "327"), dbl("dvs", dzF(10.1111), "328"),
			dbl("n", dzF(22.22), "329"), dbl("nzs", dzF(22), "330"), dbl("nvs", dzF(22.2222), "331"),
		}
		for i, f := range []string{"d_nan", "dzs_nan", "dvs_nan", "n_nan", "nzs_nan", "nvs_nan"} {
			w = append(w, dbl(f, "NaN", itoa(332+i)))
		}
		return w
	case "NUMERIC_NULL_DEFAULTS", "NUMERIC_DEFAULTS":
		return dbzNumericDefaults(stmt)
	case "SALARY":
		return []dbzWant{{field: "salary", schema: "double?", value: dzF(123.45), cite: "RecordsStreamProducerIT.java:3813 (testStreamMoneyAsDouble)"}}
	case "BYTEA_BINMODE":
		return []dbzWant{
			{field: "ba", schema: "string?", value: "010203", cite: c("443")},
			{field: "bytea_array", schema: "array?|string?", value: dzList("000102", "030405"), cite: c("444-445")},
		}
	case "CIRCLE":
		return []dbzWant{{field: "ccircle", schema: "string?", value: "3c2831302e302c32302e30292c31302e303e", cite: c("475")}}
	}
	return nil
}
