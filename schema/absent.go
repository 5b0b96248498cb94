package schema

// This file fills the columns an old image does not carry. Under REPLICA
// IDENTITY DEFAULT (or USING INDEX) the old tuple of a delete, or of an
// update that moves a row to another key, holds only the key columns; the
// others are absent, not NULL. Debezium builds the before struct from
// every column anyway, and a required (NOT NULL) field gets the column's
// schema default or its converter's fallback, never null
// (JdbcValueConverters.convertValue, debezium-connector-common/src/main/java/io/debezium/jdbc/JdbcValueConverters.java:1414-1421,
// v3.6.1.Final): zero for numbers (:1013, :1040, :1080, :1108, :1159),
// false for booleans (:1253, :1348), "" for strings (:1209), the epoch for
// dates and times (:548, :575, :602, :708, :756), 1970-01-01T00:00:00Z and
// 00:00:00Z for the zoned types (:142-150, :358, :385), empty bytes (:822,
// :1284), an empty list or map for arrays and hstore
// (PostgresValueConverter.java:682-724, :758), Point(0, 0) (:1109),
// GEOMETRYCOLLECTION EMPTY for geometry and geography (:1023-1024). An
// optional field stays null, as there.

// imageValue is the value to encode for column i of image t: an unchanged
// TOASTed value taken from old when old has it (REPLICA IDENTITY FULL
// sends it whole: the value did not change, so that is the value), and,
// in a key-only old image, a required non-key column's fallback.
// It also returns the column type to convert the value with: the
// column's, or for a zoned fallback, which Debezium writes without
// fractional digits (ZonedTimestamp.toIsoString with no width), a plain
// string.
func imageValue(rel *Relation, p *Plan, t, old Tuple, i int, keyOnly bool) (Value, *colType) {
	v, ct := t[i], p.vcols[i]
	if v.Kind == ValueUnchangedToast && old != nil && old[i].Kind == ValueText {
		return old[i], ct
	}
	if v.Kind != ValueNull {
		return v, ct
	}
	// A NOT NULL geometry column is optional in the schema (mapColumn) but
	// not to Debezium's converter, which tests the column
	// (JdbcValueConverters.java:1414-1421): it gets the fallback too.
	required := !ct.schema.Optional || (ct.conv == convGeometry && rel.Columns[i].NotNull)
	absentRequired := keyOnly && !rel.Columns[i].Key && required
	if d := p.defaults[i]; d.Kind == ValueText && (p.nullsToDefault || absentRequired) {
		// The schema's default: JsonConverter (replace.null.with.default,
		// JsonConverter.java:583-592) and AvroData (ignore.default.for.nullables,
		// AvroData.java:648-653) write it for a null, and Debezium's
		// converter gives it to a required field (JdbcValueConverters.java:1414-1421).
		return d, ct
	}
	if absentRequired {
		switch ct.conv {
		case convTimestamptz:
			return Value{Kind: ValueText, Data: zonedEpoch}, &plainString
		case convTimetz:
			return Value{Kind: ValueText, Data: zonedMidnight}, &plainString
		case convGeoText:
			// box … polygon under include_unknown_datatypes: convertBinary
			// (PostgresValueConverter.java:565-567), whose fallback is
			// empty bytes (BYTE_ZERO, JdbcValueConverters.java:821-822,
			// NumberConversions.java:36) or "" in the base64 and hex modes
			// (JdbcValueConverters.java:850, :880, :910): an empty bytea
			// converted by the column's binary mode.
			return Value{Kind: ValueText, Data: textEmptyBytea}, geoFallback[ct.bin]
		case convDoubleVector, convFloatVector:
			// convertPgVector's and convertPgHalfVector's fallback, an
			// empty list (PostgresValueConverter.java:682, :696).
			return Value{Kind: ValueText, Data: textEmptyArray}, &emptyVector
		}
		return Value{Kind: ValueText, Data: ct.fallbackText()}, ct
	}
	return v, ct
}

// geoFallback converts the empty bytea of a geometric column's fallback
// in each binary_handling_mode.
var geoFallback = map[conv]*colType{
	convBytes:          {conv: convBytes, schema: &Schema{Type: TypeBytes}},
	convBytesBase64:    {conv: convBytesBase64, schema: &Schema{Type: TypeString}},
	convBytesBase64URL: {conv: convBytesBase64URL, schema: &Schema{Type: TypeString}},
	convBytesHex:       {conv: convBytesHex, schema: &Schema{Type: TypeString}},
}

// emptyVector converts "{}" to an empty array, a vector's fallback.
var emptyVector = colType{conv: convArray, schema: &Schema{Type: TypeArray, Items: &Schema{Type: TypeFloat64}},
	elem: &colType{conv: convFloat64, schema: &Schema{Type: TypeFloat64}}}

// plainString converts a text as is, for the zoned fallbacks.
var plainString = colType{conv: convString, schema: &Schema{Type: TypeString}}

// keyOnlyBefore reports whether the old image of rel's changes holds only
// the key columns (anything but REPLICA IDENTITY FULL).
func keyOnlyBefore(rel *Relation) bool { return rel.ReplicaIdentity != 'f' }

// fallbackText is the Postgres text form whose conversion gives
// Debezium's fallback for a column of type t.
func (t *colType) fallbackText() []byte {
	switch t.conv {
	case convBool:
		return textFalse
	case convBitBool:
		return textZero
	case convInt16, convInt32, convInt64, convOID, convFloat32, convFloat64,
		convDecimal, convVarDecimal, convDecimalDouble, convDecimalString, convMoney, convMoneyDouble, convMoneyString:
		return textZero
	case convBytes, convBytesBase64, convBytesBase64URL, convBytesHex:
		return textEmptyBytea
	case convDate, convDateISO:
		return textEpochDate
	case convTimeMillis, convTimeMicros, convTimeNanos, convTimeISO, convIntervalMicros, convIntervalString:
		return textMidnight
	case convTimestampMillis, convTimestampMicros, convTimestampNanos, convTimestampISO:
		return textEpochTimestamp
	case convPoint:
		return textOrigin
	case convGeometry:
		return textEmptyGeometryCollection
	case convArray:
		return textEmptyArray
	}
	return nil // strings, enums, JSON text, hstore, bits: empty
}

var (
	textFalse          = []byte("f")
	textZero           = []byte("0")
	textEmptyBytea     = []byte(`\x`)
	textEpochDate      = []byte("1970-01-01")
	textMidnight       = []byte("00:00:00")
	textEpochTimestamp = []byte("1970-01-01 00:00:00")
	zonedEpoch         = []byte("1970-01-01T00:00:00Z") // JdbcValueConverters.java:142-146
	zonedMidnight      = []byte("00:00:00Z")            // :147-150
	textOrigin         = []byte("(0,0)")
	textEmptyArray     = []byte("{}")
)
