package schema

import (
	"errors"
	"strconv"
)

// ValueError is a column value that could not be encoded for its type: the
// text Postgres sent does not parse, or it is out of the range the record
// format can carry. The caller decides what to do with the table (park it,
// never skip the row silently).
type ValueError struct {
	Table   string // "schema.table"
	Column  string
	TypeOID uint32
	// Type names a type that is not built in (pg_type.typname, e.g.
	// "vector"); empty for built-in types, which TypeName names.
	Type  string
	Value string // the offending text, truncated to 64 bytes
	Err   error
}

// maxErrValue bounds the value text an error keeps, so that a bad multi-MB
// value does not end up in logs whole.
const maxErrValue = 64

func (e *ValueError) Error() string {
	b := make([]byte, 0, 96+len(e.Table)+len(e.Column)+len(e.Value))
	b = append(b, "encode column "...)
	b = strconv.AppendQuote(b, e.Column)
	b = append(b, " of table "...)
	b = strconv.AppendQuote(b, e.Table)
	b = append(b, " (type "...)
	if e.Type != "" {
		b = append(b, e.Type...)
	} else {
		b = append(b, TypeName(e.TypeOID)...)
	}
	b = append(b, ", oid "...)
	b = strconv.AppendUint(b, uint64(e.TypeOID), 10)
	b = append(b, "): value "...)
	b = strconv.AppendQuote(b, e.Value)
	if e.Err != nil {
		b = append(b, ": "...)
		b = append(b, e.Err.Error()...)
	}
	return string(b)
}

func (e *ValueError) Unwrap() error { return e.Err }

// newValueError builds the error for column i of rel. It runs only on the
// error path, so it may allocate.
func newValueError(rel *Relation, i int, data []byte, err error) *ValueError {
	v := data
	if len(v) > maxErrValue {
		v = v[:maxErrValue]
	}
	ve := &ValueError{Value: string(v), Err: err}
	if rel != nil {
		ve.Table = rel.QualifiedName()
		if i >= 0 && i < len(rel.Columns) {
			ve.Column = rel.Columns[i].Name
			ve.TypeOID = rel.Columns[i].TypeOID
			if ti := rel.Columns[i].Type; ti != nil && !BuiltinType(ve.TypeOID) {
				ve.Type = ti.Name
			}
		}
	}
	return ve
}

// ErrUnchangedToastKey is returned by AppendKey when a key column holds an
// unchanged TOASTed value and no old image carries the real value: the key
// cannot be built without guessing, and a placeholder key would send the
// row to the wrong partition and break log compaction.
var ErrUnchangedToastKey = errors.New("key column holds an unchanged TOASTed value and the change has no old key image")

// Parse errors of the value parsers. They are static so that a failed parse
// costs no allocation; ValueError adds the table, column and text.
var (
	errSyntax       = errors.New("invalid syntax")
	errRange        = errors.New("value out of range")
	errMonth        = errors.New("month out of range")
	errDay          = errors.New("day out of range for month")
	errYear         = errors.New("year out of range")
	errClock        = errors.New("time of day out of range")
	errFraction     = errors.New("more than 6 fractional digits")
	errOffset       = errors.New("invalid UTC offset")
	errByteaFormat  = errors.New(`bytea is not in hex format (\x...)`)
	errByteaHex     = errors.New("bytea has an invalid hex digit or odd length")
	errTupleColumns = errors.New("tuple has a different number of values than the relation has columns")
)

// typeNames names the built-in types the encoders know, for error messages.
var typeNames = map[uint32]string{
	oidBool: "bool", oidBytea: "bytea", oidChar: "char", oidName: "name",
	oidInt8: "int8", oidInt2: "int2", oidInt4: "int4", oidText: "text",
	oidOID: "oid", oidJSON: "json", oidXML: "xml", oidPoint: "point", oidLseg: "lseg",
	oidPath: "path", oidBox: "box", oidPolygon: "polygon", oidLine: "line", oidCidr: "cidr",
	oidFloat4: "float4", oidFloat8: "float8", oidCircle: "circle", oidMacaddr8: "macaddr8",
	oidMoney: "money", oidMacaddr: "macaddr", oidInet: "inet",
	oidBpchar: "bpchar", oidVarchar: "varchar", oidDate: "date",
	oidTime: "time", oidTimestamp: "timestamp", oidTimestamptz: "timestamptz",
	oidInterval: "interval", oidTimetz: "timetz", oidBit: "bit", oidVarbit: "varbit",
	oidNumeric: "numeric", oidUUID: "uuid", oidTsvector: "tsvector", oidTsquery: "tsquery",
	oidJSONB: "jsonb", oidInt4range: "int4range", oidNumrange: "numrange", oidTsrange: "tsrange",
	oidTstzrange: "tstzrange", oidDaterange: "daterange", oidInt8range: "int8range",
}

// TypeName returns the name of a built-in type OID, or "unknown" for
// others (user-defined types have OIDs that differ between databases).
func TypeName(oid uint32) string {
	if n, ok := typeNames[oid]; ok {
		return n
	}
	return "unknown"
}
