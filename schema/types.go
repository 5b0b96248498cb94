package schema

import (
	"strconv"
	"strings"
)

// This file is the one place where a Postgres column type becomes a Kafka
// Connect schema and a value conversion, for JSON and Avro alike. It
// follows the "Data type mappings" tables of Debezium's PostgreSQL
// connector documentation (debezium.io/documentation/reference/stable/
// connectors/postgresql.html#postgresql-data-types): basic types, temporal
// types (time.precision.mode), TIMESTAMP infinity, decimal types
// (decimal.handling.mode), HSTORE (hstore.handling.mode), default values,
// network address types, PostGIS/geometric POINT, and arrays.

// TypeInfo describes a column type that is not built into Postgres (its
// OID is not a fixed one): enums, domains, extension types such as hstore,
// citext and ltree, and arrays of those. The connector fills it from the
// catalog; domains are resolved to their base type before they get here.
type TypeInfo struct {
	OID  uint32
	Name string // pg_type.typname, e.g. "hstore"
	// Kind is pg_type.typtype of the effective type: 'b' base, 'e' enum,
	// 'r' range, 'm' multirange, 'c' composite, 'p' pseudo.
	Kind byte
	// Mod is the typmod a domain imposes on its base type, or -1.
	Mod int32
	// Elem is the element type when the type is an array.
	Elem *TypeInfo
	// Labels are an enum's labels in sort order.
	Labels []string
	// Domain is set when the column's declared type is a domain (the
	// fields above then describe its base type). Debezium finds no
	// default parser for a domain's name.
	Domain bool
	// Delim is the type's pg_type.typdelim: the byte that separates the
	// elements of an array of this type in its text form (',' for most
	// types, ';' for box, ':' for PostGIS's geometry and geography). An
	// array's text is split by its element's Delim. Zero means ','.
	Delim byte
}

// Postgres type OIDs with a fixed number (pg_type.dat).
const (
	oidBool        = 16
	oidBytea       = 17
	oidChar        = 18
	oidName        = 19
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidOID         = 26
	oidJSON        = 114
	oidXML         = 142
	oidPoint       = 600
	oidLseg        = 601
	oidPath        = 602
	oidBox         = 603
	oidPolygon     = 604
	oidLine        = 628
	oidCidr        = 650
	oidFloat4      = 700
	oidFloat8      = 701
	oidCircle      = 718
	oidMacaddr8    = 774
	oidMoney       = 790
	oidMacaddr     = 829
	oidInet        = 869
	oidBpchar      = 1042
	oidVarchar     = 1043
	oidDate        = 1082
	oidTime        = 1083
	oidTimestamp   = 1114
	oidTimestamptz = 1184
	oidInterval    = 1186
	oidTimetz      = 1266
	oidBit         = 1560
	oidVarbit      = 1562
	oidNumeric     = 1700
	oidUUID        = 2950
	oidTsvector    = 3614
	oidTsquery     = 3615
	oidJSONB       = 3802
	oidInt4range   = 3904
	oidNumrange    = 3906
	oidTsrange     = 3908
	oidTstzrange   = 3910
	oidDaterange   = 3912
	oidInt8range   = 3926
)

// builtinArrays maps the array types of the built-in types to their
// element type (pg_type.dat's array_type_oid).
var builtinArrays = map[uint32]uint32{
	1000: oidBool, 1001: oidBytea, 1002: oidChar, 1003: oidName, 1016: oidInt8, 1005: oidInt2,
	1007: oidInt4, 1009: oidText, 1028: oidOID, 199: oidJSON, 143: oidXML, 1017: oidPoint,
	1018: oidLseg, 1019: oidPath, 1020: oidBox, 1027: oidPolygon, 629: oidLine, 651: oidCidr,
	1021: oidFloat4, 1022: oidFloat8, 719: oidCircle, 775: oidMacaddr8, 791: oidMoney,
	1040: oidMacaddr, 1041: oidInet, 1014: oidBpchar, 1015: oidVarchar, 1182: oidDate,
	1183: oidTime, 1115: oidTimestamp, 1185: oidTimestamptz, 1187: oidInterval, 1270: oidTimetz,
	1561: oidBit, 1563: oidVarbit, 1231: oidNumeric, 2951: oidUUID, 3643: oidTsvector,
	3645: oidTsquery, 3807: oidJSONB, 3905: oidInt4range, 3907: oidNumrange, 3909: oidTsrange,
	3911: oidTstzrange, 3913: oidDaterange, 3927: oidInt8range,
}

// BuiltinType reports whether oid is a type this package maps without
// catalog information (a fixed-OID type or an array of one). The connector
// looks up every other type.
func BuiltinType(oid uint32) bool {
	if _, ok := builtinArrays[oid]; ok {
		return true
	}
	_, ok := typeNames[oid]
	return ok
}

// conv is how a column's text form is converted.
type conv uint8

const (
	convString          conv = iota // the text as a string
	convBool                        // t/f
	convInt16                       // int2
	convInt32                       // int4
	convInt64                       // int8
	convOID                         // oid: unsigned 32-bit as int64
	convFloat32                     // float4
	convFloat64                     // float8
	convDecimal                     // numeric(p,s) precise: Connect Decimal bytes
	convVarDecimal                  // numeric precise: VariableScaleDecimal {scale, value}
	convDecimalDouble               // numeric double
	convDecimalString               // numeric string
	convMoney                       // money precise: Decimal bytes at money_fraction_digits
	convMoneyDouble                 // money double
	convMoneyString                 // money string
	convBytes                       // bytea bytes
	convBytesBase64                 // bytea base64 string
	convBytesBase64URL              // bytea base64-url-safe string
	convBytesHex                    // bytea hex string
	convDate                        // days since epoch
	convTimeMillis                  // ms since midnight (int32)
	convTimeMicros                  // µs since midnight (int64)
	convTimestampMillis             // ms since epoch
	convTimestampMicros             // µs since epoch
	convTimeNanos                   // ns since midnight (time.precision.mode nanoseconds)
	convTimestampNanos              // ns since epoch (time.precision.mode nanoseconds)
	convDateISO                     // IsoDate string (time.precision.mode isostring)
	convTimeISO                     // IsoTime string (isostring)
	convTimestampISO                // IsoTimestamp string (isostring)
	convTimestamptz                 // ISO string in UTC
	convTimetz                      // ISO string in UTC
	convIntervalMicros              // MicroDuration
	convIntervalString              // ISO 8601 duration
	convBitBool                     // bit(1)
	convBits                        // bit(n), varbit: Bits bytes
	convHstoreJSON                  // hstore as a JSON object string
	convHstoreMap                   // hstore as map<string, string>
	convPoint                       // Point {x, y, wkb, srid}
	convGeoText                     // box … polygon: pgjdbc's text, as binary.handling.mode
	convGeometry                    // PostGIS geometry/geography: {wkb, srid} from hex EWKB
	convArray                       // array of elem
)

// colType is the mapping of one column: its Connect schema and how its
// text form is converted.
type colType struct {
	conv    conv
	schema  *Schema
	elem    *colType // convArray
	prec    int8     // fractional-second precision 0-6 of time types
	scale   int32    // convMoney
	delim   byte     // this type's typdelim when not ',': what splits an array of it
	unknown bool     // no mapping: text form, with a warning
	// omit leaves the column out of the records (schema and value), as
	// Debezium leaves out a column whose type it has no schema for.
	omit bool
	geo  uint32 // convGeoText: the geometric type's OID
	bin  conv   // convGeoText: convBytes, convBytesBase64, … by binary.handling.mode
}

// semantic returns a schema of type t with a Debezium/Connect name.
func semantic(t, name string, params ...Param) *Schema {
	return &Schema{Type: t, Name: name, Version: 1, Params: params}
}

// mapColumn maps column c (of a table in which it may be NULL unless
// notNull) to its type.
func mapColumn(cfg *Config, c Column) *colType {
	oid, mod, ti := c.TypeOID, c.TypeMod, c.Type
	if ti != nil {
		oid = ti.OID
		if ti.Mod >= 0 {
			mod = ti.Mod
		}
	}
	t := mapType(cfg, oid, mod, ti)
	// Debezium's Geometry builder is optional itself and TableSchemaBuilder
	// only ever adds optional (TableSchemaBuilder.java:422-424), so a NOT
	// NULL geometry column is an optional field there
	// (Geometry.java:36-44, debezium-connector-common, v3.6.1.Final);
	// Geography's builder is not (Geography.java:33-40).
	t.schema = t.schema.withOptional(!c.NotNull || t.schema.Name == geometryName)
	return t
}

// mapType maps a type, nullable. Array elements are optional, as in
// Debezium (its array schemas are arrays of OPTIONAL_* schemas).
func mapType(cfg *Config, oid uint32, mod int32, ti *TypeInfo) *colType {
	if elem, ok := builtinArrays[oid]; ok {
		if geometricText(elem) {
			// Debezium 3.6.1 has no schema for these arrays' elements
			// either; with include.unknown.datatypes it declares
			// ARRAY<BYTES> but has no converter to fill it (see
			// values_geotext.go), so they are left out in both cases.
			return &colType{omit: true, schema: &Schema{Type: TypeString}}
		}
		if unmappedArray(elem) {
			return &colType{omit: true, schema: &Schema{Type: TypeString}}
		}
		return arrayOf(mapType(cfg, elem, mod, nil))
	}
	if ti != nil && ti.Elem != nil {
		e := ti.Elem
		eoid, emod := e.OID, mod
		if e.Mod >= 0 {
			emod = e.Mod
		}
		et := mapType(cfg, eoid, emod, e)
		if e.Delim != 0 {
			et.delim = e.Delim // pg_type.typdelim from the catalog
		}
		a := arrayOf(et)
		// An array of a type without a mapping: each element's text, split
		// by the element type's own delimiter, and the column's warning
		// (Debezium leaves such a column out, or with
		// include.unknown.datatypes sends bytes:
		// PostgresValueConverter.java:353-364).
		a.unknown = et.unknown
		return a
	}
	t := &colType{conv: convString}
	str := func(name string, params ...Param) {
		t.conv = convString
		if name == "" {
			t.schema = &Schema{Type: TypeString}
		} else {
			t.schema = semantic(TypeString, name, params...)
		}
	}
	switch oid {
	case oidBool:
		t.conv, t.schema = convBool, &Schema{Type: TypeBoolean}
	case oidInt2:
		t.conv, t.schema = convInt16, &Schema{Type: TypeInt16}
	case oidInt4:
		t.conv, t.schema = convInt32, &Schema{Type: TypeInt32}
	case oidInt8:
		t.conv, t.schema = convInt64, &Schema{Type: TypeInt64}
	case oidOID:
		t.conv, t.schema = convOID, &Schema{Type: TypeInt64}
	case oidFloat4:
		t.conv, t.schema = convFloat32, &Schema{Type: TypeFloat32}
	case oidFloat8:
		t.conv, t.schema = convFloat64, &Schema{Type: TypeFloat64}
	case oidNumeric:
		switch cfg.DecimalMode {
		case "double":
			t.conv, t.schema = convDecimalDouble, &Schema{Type: TypeFloat64}
		case "string":
			str("")
			t.conv = convDecimalString
		default:
			if mod < 4 {
				t.conv, t.schema = convVarDecimal, variableScaleDecimal()
				break
			}
			// numeric typmod: ((precision << 16) | scale) + VARHDRSZ.
			p, s := (mod-4)>>16&0xffff, (mod-4)&0xffff
			t.conv, t.schema = convDecimal, decimalSchema(int(s), int(p))
		}
	case oidMoney:
		switch cfg.DecimalMode {
		case "double":
			t.conv, t.schema = convMoneyDouble, &Schema{Type: TypeFloat64}
		case "string":
			str("")
			t.conv = convMoneyString
		default:
			t.conv, t.scale = convMoney, int32(*cfg.MoneyFractionDigits)
			t.schema = decimalSchema(*cfg.MoneyFractionDigits, -1)
		}
	case oidChar, oidName, oidText, oidBpchar, oidVarchar,
		oidInet, oidCidr, oidMacaddr, oidMacaddr8,
		oidInt4range, oidInt8range, oidNumrange, oidTsrange, oidTstzrange, oidDaterange,
		oidTsquery:
		str("")
	case oidTsvector:
		// PostgresValueConverter.java:240-241: TsVector.builder(), a string
		// named io.debezium.data.Tsvector, version 1 (TsVector.java:17-28).
		str("io.debezium.data.Tsvector")
	case oidLseg, oidPath, oidBox, oidPolygon, oidLine, oidCircle:
		// Debezium 3.6.1: no schema (JDBC type OTHER), so left out unless
		// include.unknown.datatypes; then binary.handling.mode's schema
		// holding pgjdbc's text of the value (values_geotext.go).
		if oid == oidBox {
			t.delim = ';' // pg_type.dat: box's typdelim
		}
		if !cfg.IncludeUnknownDatatypes {
			t.omit, t.schema = true, &Schema{Type: TypeString}
			break
		}
		t.conv, t.geo = convGeoText, oid
		switch cfg.BinaryMode {
		case "base64":
			t.bin, t.schema = convBytesBase64, &Schema{Type: TypeString}
		case "base64-url-safe":
			t.bin, t.schema = convBytesBase64URL, &Schema{Type: TypeString}
		case "hex":
			t.bin, t.schema = convBytesHex, &Schema{Type: TypeString}
		default:
			t.bin, t.schema = convBytes, &Schema{Type: TypeBytes}
		}
	case oidBytea:
		switch cfg.BinaryMode {
		case "base64":
			str("")
			t.conv = convBytesBase64
		case "base64-url-safe":
			str("")
			t.conv = convBytesBase64URL
		case "hex":
			str("")
			t.conv = convBytesHex
		default:
			t.conv, t.schema = convBytes, &Schema{Type: TypeBytes}
		}
	case oidUUID:
		str("io.debezium.data.Uuid")
	case oidJSON, oidJSONB:
		str("io.debezium.data.Json")
	case oidXML:
		str("io.debezium.data.Xml")
	case oidDate:
		t.conv = convDate
		if cfg.TimePrecisionMode == "isostring" { // TemporalPrecisionMode.java:50
			t.conv, t.schema = convDateISO, semantic(TypeString, "io.debezium.time.IsoDate")
		} else if cfg.TimePrecisionMode == "connect" {
			t.schema = semantic(TypeInt32, "org.apache.kafka.connect.data.Date")
		} else {
			t.schema = semantic(TypeInt32, "io.debezium.time.Date")
		}
	case oidTime:
		t.prec = precisionOf(mod)
		switch {
		case cfg.TimePrecisionMode == "connect":
			t.conv, t.schema = convTimeMillis, semantic(TypeInt32, "org.apache.kafka.connect.data.Time")
		case cfg.TimePrecisionMode == "nanoseconds": // TemporalPrecisionMode.java:70
			t.conv, t.schema = convTimeNanos, semantic(TypeInt64, "io.debezium.time.NanoTime")
		case cfg.TimePrecisionMode == "isostring": // :50
			t.conv, t.schema = convTimeISO, semantic(TypeString, "io.debezium.time.IsoTime")
		case cfg.TimePrecisionMode == "adaptive" && t.prec <= 3:
			t.conv, t.schema = convTimeMillis, semantic(TypeInt32, "io.debezium.time.Time")
		default:
			t.conv, t.schema = convTimeMicros, semantic(TypeInt64, "io.debezium.time.MicroTime")
		}
	case oidTimestamp:
		t.prec = precisionOf(mod)
		switch {
		case cfg.TimePrecisionMode == "connect":
			t.conv, t.schema = convTimestampMillis, semantic(TypeInt64, "org.apache.kafka.connect.data.Timestamp")
		case cfg.TimePrecisionMode == "nanoseconds": // TemporalPrecisionMode.java:70
			t.conv, t.schema = convTimestampNanos, semantic(TypeInt64, "io.debezium.time.NanoTimestamp")
		case cfg.TimePrecisionMode == "isostring": // :50
			t.conv, t.schema = convTimestampISO, semantic(TypeString, "io.debezium.time.IsoTimestamp")
		case t.prec <= 3 && cfg.TimePrecisionMode != "microseconds": // :64: µs whatever the precision
			t.conv, t.schema = convTimestampMillis, semantic(TypeInt64, "io.debezium.time.Timestamp")
		default:
			t.conv, t.schema = convTimestampMicros, semantic(TypeInt64, "io.debezium.time.MicroTimestamp")
		}
	case oidTimestamptz:
		t.prec = precisionOf(mod)
		str("io.debezium.time.ZonedTimestamp")
		t.conv = convTimestamptz
	case oidTimetz:
		t.prec = precisionOf(mod)
		str("io.debezium.time.ZonedTime")
		t.conv = convTimetz
	case oidInterval:
		if cfg.IntervalMode == "string" {
			str("io.debezium.time.Interval")
			t.conv = convIntervalString
		} else {
			t.conv, t.schema = convIntervalMicros, semantic(TypeInt64, "io.debezium.time.MicroDuration")
		}
	case oidBit, oidVarbit:
		// bit(n) and varbit(n) carry n as their typmod; varbit without a
		// length is as long as Postgres allows.
		n := int64(mod)
		if mod < 0 {
			n = 2147483647
		}
		if n == 1 {
			t.conv, t.schema = convBitBool, &Schema{Type: TypeBoolean}
		} else {
			t.conv, t.schema = convBits, semantic(TypeBytes, "io.debezium.data.Bits", Param{"length", strconv.FormatInt(n, 10)})
		}
	case oidPoint:
		t.conv, t.schema = convPoint, pointSchema()
	default:
		switch {
		case ti != nil && ti.Kind == 'e':
			str("io.debezium.data.Enum", Param{"allowed", strings.Join(ti.Labels, ",")})
		case ti != nil && ti.Kind == 'r', ti != nil && ti.Kind == 'm':
			str("") // user-defined ranges, like the built-in ones
		case ti != nil && ti.Name == "hstore":
			if cfg.HstoreMode == "map" {
				t.conv = convHstoreMap
				t.schema = &Schema{Type: TypeMap, Keys: &Schema{Type: TypeString}, Values: &Schema{Type: TypeString, Optional: true}}
			} else {
				str("io.debezium.data.Json")
				t.conv = convHstoreJSON
			}
		case ti != nil && ti.Name == "citext":
			str("")
		case ti != nil && ti.Name == "ltree":
			str("io.debezium.data.Ltree")
		case ti != nil && ti.Name == "geometry":
			// PostgresValueConverter.java:301-302 (schema), :518-519 and
			// :1022-1045 (value), by the type's name wherever PostGIS is
			// installed (TypeRegistry.java:45, :170-171).
			t.conv, t.schema = convGeometry, geometrySchema()
		case ti != nil && ti.Name == "geography":
			// PostgresValueConverter.java:304-305, :521-522, :1047-1070.
			t.conv, t.schema = convGeometry, geographySchema()
		case ti != nil && mapVector(t, ti.Name): // vector, halfvec, sparsevec (values_vector.go)
		default:
			str("")
			t.unknown = true
		}
	}
	return t
}

// geometricText reports whether oid is one of the geometric types that
// Debezium sends only with include.unknown.datatypes (all but point).
func geometricText(oid uint32) bool {
	switch oid {
	case oidLseg, oidPath, oidBox, oidPolygon, oidLine, oidCircle:
		return true
	}
	return false
}

// unmappedArray reports the element types of the arrays Debezium 3.6.1
// has no schema for ("These array types still need to be implemented",
// PostgresValueConverter.java:289-298, v3.6.1.Final): the column is left
// out, even with include.unknown.datatypes (the null schema comes first),
// as TableSchemaBuilder.java:454-456 leaves it out.
func unmappedArray(elem uint32) bool {
	switch elem {
	case oidMoney, oidName, oidInterval, oidVarbit, oidXML, oidPoint:
		return true
	}
	return false
}

func arrayOf(elem *colType) *colType {
	// Debezium builds an enum array's items from the Enum builder, never
	// made optional (PostgresValueConverter.java:349-351); other items are
	// optional.
	// So are pgvector's (values_vector.go, isVector).
	elem.schema = elem.schema.withOptional(elem.schema.Name != "io.debezium.data.Enum" && !isVector(elem))
	return &colType{conv: convArray, elem: elem, schema: &Schema{Type: TypeArray, Items: elem.schema}}
}

// decimalSchema is Kafka Connect's Decimal logical type with Debezium's
// connect.decimal.precision parameter (omitted when precision < 0).
func decimalSchema(scale, precision int) *Schema {
	s := semantic(TypeBytes, "org.apache.kafka.connect.data.Decimal", Param{"scale", strconv.Itoa(scale)})
	if precision >= 0 {
		s.Params = append(s.Params, Param{"connect.decimal.precision", strconv.Itoa(precision)})
	}
	return s
}

func variableScaleDecimal() *Schema {
	return &Schema{Type: TypeStruct, Name: "io.debezium.data.VariableScaleDecimal", Version: 1,
		Doc: "Variable scaled decimal", Fields: []Field{
			{"scale", &Schema{Type: TypeInt32}},
			{"value", &Schema{Type: TypeBytes}},
		}}
}

func pointSchema() *Schema {
	return &Schema{Type: TypeStruct, Name: "io.debezium.data.geometry.Point", Version: 1,
		Doc: "Geometry (POINT)", Fields: []Field{
			{"x", &Schema{Type: TypeFloat64}},
			{"y", &Schema{Type: TypeFloat64}},
			{"wkb", &Schema{Type: TypeBytes, Optional: true}},
			{"srid", &Schema{Type: TypeInt32, Optional: true}},
		}}
}

// precisionOf is the fractional-second precision of a time type from its
// atttypmod: -1 (none given) means Postgres' maximum, 6.
func precisionOf(typmod int32) int8 {
	if typmod < 0 || typmod > 6 {
		return 6
	}
	return int8(typmod)
}
