package schema

import (
	"regexp"
	"strconv"
	"strings"
)

// This file turns a column's default expression (pg_get_expr of
// pg_attrdef, what pgjdbc reports as COLUMN_DEF) into the default Debezium
// 3.6.1 puts in the column's Connect schema. Debezium does not evaluate
// the expression: PostgresDefaultValueConverter
// (debezium-connector-postgres/src/main/java/io/debezium/connector/postgresql/connection/PostgresDefaultValueConverter.java,
// v3.6.1.Final) picks a parser by the column's type name (:157-208),
// takes the literal out of the text, or a fixed placeholder when the
// default calls a function (:224-232), and converts what it got with the
// column's value converter (:122-144); when any step fails the column has
// no default (:115-119). Here the literal becomes the Postgres text whose
// conversion (values.go) gives the same value, so a default goes through
// exactly the code a row's value goes through.

var (
	// functionDefault is FUNCTION_DEFAULT_PATTERN (:48): a default that
	// calls a function, such as nextval('t_id_seq'::regclass) or now().
	functionDefault = regexp.MustCompile(`^[(]?[A-Za-z0-9_.]+\((?:.+(?:, ?.+)*)?\)`)
	// literalDefault is LITERAL_DEFAULT_PATTERN (:47): the first quoted
	// literal, non-greedy as there ('It''s' gives "It").
	literalDefault = regexp.MustCompile(`'(.*?)'`)
)

// currentDateTimes are the SQL value functions a default may be (:49-50).
var currentDateTimes = map[string]bool{
	"current_timestamp": true, "current_time": true, "current_date": true, "localtime": true, "localtimestamp": true,
}

// defaultParser is the parser Debezium picks for a column's type (:157-205).
type defaultParser uint8

const (
	defNone defaultParser = iota // no parser: no default (:207, "box, bytea, and more")
	defBit
	defVarbit
	defBool
	defString // bpchar, varchar, text
	defNumeric
	defFloat
	defInt16
	defInt32
	defInt64
	defJSON // json, jsonb
	defXML
	defUUID
	defDate
	defTime
	defTimestamp
	defTimestamptz
	defInterval
	defEnum
)

// parserFor is the parser of column c. Debezium looks it up by the type
// name pgjdbc reports: a domain's own name finds none, an enum's name
// finds the enum parser (:198-205).
func parserFor(c Column) defaultParser {
	if ti := c.Type; ti != nil {
		if !ti.Domain && ti.Kind == 'e' && ti.Elem == nil {
			return defEnum
		}
		return defNone
	}
	switch c.TypeOID {
	case oidBit:
		return defBit
	case oidVarbit:
		return defVarbit
	case oidBool:
		return defBool
	case oidBpchar, oidVarchar, oidText:
		return defString
	case oidNumeric:
		return defNumeric
	case oidFloat4, oidFloat8:
		return defFloat
	case oidInt2:
		return defInt16
	case oidInt4:
		return defInt32 // also serial (:181)
	case oidInt8:
		return defInt64
	case oidJSON, oidJSONB:
		return defJSON
	case oidXML:
		return defXML
	case oidUUID:
		return defUUID
	case oidDate:
		return defDate
	case oidTime:
		return defTime
	case oidTimestamp:
		return defTimestamp
	case oidTimestamptz:
		return defTimestamptz
	case oidInterval:
		return defInterval
	}
	return defNone
}

// defaultText returns the Postgres text form of column c's default as
// Debezium reads it, and false when Debezium gives the column no default.
// The caller converts the text as the column's values are converted; a
// conversion error also means no default.
func defaultText(c Column) (string, bool) {
	if !c.HasDefault {
		return "", false
	}
	v := c.Default
	p := parserFor(c)
	switch p {
	case defNone:
		return "", false
	case defBit, defVarbit, defBool, defNumeric, defFloat, defInt16, defInt32, defInt64,
		defUUID, defDate, defTime, defTimestamp, defTimestamptz, defInterval:
		v = strings.TrimSpace(v) // TRIM_DATA_TYPES (:51-53, :98-100)
	}
	switch p {
	case defBool, defNumeric, defFloat, defInt16, defInt32, defInt64:
		if strings.HasPrefix(v, "NULL::") { // parseNullDefault (:146-155)
			return "", false
		}
	}
	if p == defEnum {
		return enumDefault(c.Type.Name, v)
	}
	lit, ok := extractDefault(v, generatedDefault(p))
	if !ok {
		return "", false
	}
	switch p {
	case defBit:
		// A one-character bit default is a boolean (:160-167).
		if len(lit) == 1 {
			if lit == "1" {
				return "1", true
			}
			return "0", true
		}
	case defBool:
		// Boolean.parseBoolean: true only for "true", any case (:170).
		if strings.EqualFold(lit, "true") {
			return "t", true
		}
		return "f", true
	case defNumeric:
		return numericDefault(lit, c.TypeMod)
	case defFloat:
		if _, err := strconv.ParseFloat(lit, 64); err != nil {
			return "", false
		}
	case defInt16, defInt32, defInt64:
		bits := map[defaultParser]int{defInt16: 16, defInt32: 32, defInt64: 64}[p]
		if _, err := strconv.ParseInt(lit, 10, bits); err != nil {
			return "", false
		}
	case defInterval:
		if lit == "epoch" {
			// new PGInterval("epoch") is a zero interval (pgjdbc's
			// PGInterval.setValue skips words it does not know).
			return "00:00:00", true
		}
	}
	return lit, true
}

// generatedDefault is the value a function default gets (the second argument
// of each parser's extractDefault, :160-196), as Postgres text.
func generatedDefault(p defaultParser) string {
	switch p {
	case defBit:
		return "00"
	case defVarbit, defInt16, defInt32, defInt64:
		return "0"
	case defBool:
		return "false"
	case defNumeric, defFloat:
		return "0.0"
	case defJSON:
		return "{}"
	case defUUID:
		return "00000000-0000-0000-0000-000000000000"
	case defDate:
		return "1970-01-01"
	case defTime:
		return "00:00:00"
	case defTimestamp:
		return "1970-01-01 00:00:00"
	case defTimestamptz:
		// toOffsetDateTime("1970-01-01"), at UTC (:195).
		return "1970-01-01 00:00:00+00"
	case defInterval:
		return "epoch"
	}
	return "" // strings, xml
}

// extractDefault is Debezium's extractDefault (:211-232): the placeholder
// for a function call or a current date/time, else the raw text when it
// holds no quote (none for NULL::…), else the first quoted literal.
func extractDefault(v, generated string) (string, bool) {
	if functionDefault.MatchString(v) || currentDateTimes[strings.ToLower(v)] {
		return generated, true
	}
	if !strings.Contains(v, "'") {
		if strings.HasPrefix(v, "NULL::") {
			return "", false
		}
		return v, true
	}
	m := literalDefault.FindStringSubmatch(v)
	if m == nil {
		return "", false // a lone quote: Matcher.group throws (:219-221)
	}
	return m[1], true
}

// enumDefault is extractEnumDefault (:234-276): the quoted value before a
// cast to the enum's own type.
func enumDefault(typeName, v string) (string, bool) {
	i := strings.LastIndex(v, "::")
	if i < 0 {
		return "", false
	}
	if lastIdent(v[i+2:]) != typeName {
		return "", false
	}
	lit := v[:i]
	if len(lit) < 2 || lit[0] != '\'' || lit[len(lit)-1] != '\'' {
		return "", false
	}
	return lit[1 : len(lit)-1], true
}

// lastIdent is the last part of a possibly qualified, possibly quoted
// type name (s1."Status" gives Status), as TypeId.parse reads it.
func lastIdent(s string) string {
	if !strings.HasSuffix(s, `"`) {
		return s[strings.LastIndex(s, ".")+1:]
	}
	// Walk back to the opening quote; "" inside is an escaped quote.
	i := len(s) - 2
	for i >= 0 {
		if s[i] == '"' {
			if i > 0 && s[i-1] == '"' {
				i -= 2
				continue
			}
			break
		}
		i--
	}
	if i < 0 {
		return s
	}
	return strings.ReplaceAll(s[i+1:len(s)-1], `""`, `"`)
}

// numericDefault is new BigDecimal(lit) brought to the column's scale as
// PostgresValueConverter.withScaleAdjustedIfNeeded does
// (PostgresValueConverter.java:648-658): setScale without rounding, so a
// default with more significant fractional digits than the column has no
// default. A numeric without a scale keeps its digits.
func numericDefault(lit string, mod int32) (string, bool) {
	if !plainDecimal(lit) {
		return "", false
	}
	if mod < 4 {
		return lit, true
	}
	scale := int((mod - 4) & 0xffff)
	intPart, frac, _ := strings.Cut(lit, ".")
	if len(frac) > scale {
		if strings.Trim(frac[scale:], "0") != "" {
			return "", false // ArithmeticException: rounding necessary
		}
		frac = frac[:scale]
	}
	frac += strings.Repeat("0", scale-len(frac))
	if scale == 0 {
		return intPart, true
	}
	return intPart + "." + frac, true
}

// plainDecimal reports whether s is [+-]digits[.digits], the form
// Postgres prints numeric constants in.
func plainDecimal(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" && frac == "" || hasDot && frac == "" && intPart == "" {
		return false
	}
	for _, part := range []string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return false
			}
		}
	}
	return true
}
