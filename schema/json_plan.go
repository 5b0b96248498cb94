package schema

// This file holds what the JSON encoder precomputes once per *Relation: the
// escaped `"column":` prefixes, how each column's text is converted, and the
// per-table part of the source block. A Relation is immutable and a changed
// table gets a new pointer, so the pointer is the cache key and an entry
// never goes stale; the cache is bounded so that a session that sees many
// relation versions does not keep them all alive.

// Postgres type OIDs the encoders map specially (pg_type.dat).
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
	oidFloat4      = 700
	oidFloat8      = 701
	oidBpchar      = 1042
	oidVarchar     = 1043
	oidDate        = 1082
	oidTime        = 1083
	oidTimestamp   = 1114
	oidTimestamptz = 1184
	oidTimetz      = 1266
	oidNumeric     = 1700
	oidUUID        = 2950
	oidJSONB       = 3802
)

// colKind is how a column's text form becomes JSON.
type colKind uint8

const (
	kindString          colKind = iota // any type without a special mapping: its text as a JSON string
	kindBool                           // true / false
	kindInt2                           // JSON number, int16 range
	kindInt4                           // JSON number, int32 range
	kindInt8                           // JSON number, int64 range
	kindOID                            // JSON number, uint32 range
	kindFloat4                         // JSON number or "NaN"/"Infinity"/"-Infinity"
	kindFloat8                         // same, float8 range
	kindNumeric                        // exact decimal text as a JSON string
	kindBytea                          // base64 string
	kindDate                           // io.debezium.time.Date: days since epoch
	kindTimeMillis                     // io.debezium.time.Time: ms since midnight
	kindTimeMicros                     // io.debezium.time.MicroTime: µs since midnight
	kindTimestampMillis                // io.debezium.time.Timestamp: ms since epoch
	kindTimestampMicros                // io.debezium.time.MicroTimestamp: µs since epoch
	kindTimestamptz                    // io.debezium.time.ZonedTimestamp: ISO string in UTC
	kindTimetz                         // io.debezium.time.ZonedTime: ISO string in UTC
)

// colPlan is the precomputed encoding of one column.
type colPlan struct {
	kind colKind
	prec int8   // fractional-second precision 0-6 for the time kinds
	name []byte // `"name":`, escaped
}

// relPlan is the precomputed encoding of one relation.
type relPlan struct {
	cols []colPlan
	// sourceTail is `,"schema":"<schema>","table":"<table>","txId":`, the
	// per-table middle of the source block.
	sourceTail []byte
}

// maxPlans bounds the plan cache. Each session resends relations, and DDL
// creates new versions; far fewer than this are live at once.
const maxPlans = 4096

// planFor returns the cached plan of rel, building it on first use.
func (e *JSONEncoder) planFor(rel *Relation) *relPlan {
	if rel == e.lastRel {
		return e.lastPlan
	}
	p, ok := e.plans[rel]
	if !ok {
		if len(e.plans) >= maxPlans {
			// Evict an arbitrary entry: cheap, and a miss only costs a
			// rebuild.
			for k := range e.plans {
				delete(e.plans, k)
				break
			}
		}
		p = buildPlan(rel)
		e.plans[rel] = p
	}
	e.lastRel, e.lastPlan = rel, p
	return p
}

func buildPlan(rel *Relation) *relPlan {
	p := &relPlan{cols: make([]colPlan, len(rel.Columns))}
	for i, c := range rel.Columns {
		name := appendJSONString(nil, c.Name)
		p.cols[i] = colPlan{kind: kindOf(c), prec: precisionOf(c.TypeMod), name: append(name, ':')}
	}
	p.sourceTail = appendSourceTail(nil, rel.Schema, rel.Table)
	return p
}

func appendSourceTail(dst []byte, schemaName, table string) []byte {
	dst = append(dst, `,"schema":`...)
	dst = appendJSONString(dst, schemaName)
	dst = append(dst, `,"table":`...)
	dst = appendJSONString(dst, table)
	return append(dst, `,"txId":`...)
}

// kindOf maps a column type to its encoding, following Debezium's
// PostgresValueConverter with time.precision.mode=adaptive (its default):
// time(p)/timestamp(p) with p <= 3 are milliseconds, otherwise microseconds.
func kindOf(c Column) colKind {
	switch c.TypeOID {
	case oidBool:
		return kindBool
	case oidInt2:
		return kindInt2
	case oidInt4:
		return kindInt4
	case oidInt8:
		return kindInt8
	case oidOID:
		return kindOID
	case oidFloat4:
		return kindFloat4
	case oidFloat8:
		return kindFloat8
	case oidNumeric:
		return kindNumeric
	case oidBytea:
		return kindBytea
	case oidDate:
		return kindDate
	case oidTime:
		if precisionOf(c.TypeMod) <= 3 {
			return kindTimeMillis
		}
		return kindTimeMicros
	case oidTimestamp:
		if precisionOf(c.TypeMod) <= 3 {
			return kindTimestampMillis
		}
		return kindTimestampMicros
	case oidTimestamptz:
		return kindTimestamptz
	case oidTimetz:
		return kindTimetz
	}
	return kindString
}

// precisionOf is the fractional-second precision of a time type from its
// atttypmod: -1 (none given) means Postgres' maximum, 6.
func precisionOf(typmod int32) int8 {
	if typmod < 0 || typmod > 6 {
		return 6
	}
	return int8(typmod)
}
