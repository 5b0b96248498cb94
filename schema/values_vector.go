package schema

import (
	"errors"
	"math"
	"slices"
	"strconv"
)

// This file maps pgvector's three types the way Debezium 3.6.1 does
// (v3.6.1.Final):
//
//   - vector    → io.debezium.data.DoubleVector: ARRAY<FLOAT64>, version 1
//     (SchemaFactory.java:385-389; PostgresValueConverter.java:319-320, 533-534, 681-693)
//   - halfvec   → io.debezium.data.FloatVector: ARRAY<FLOAT32>, version 1
//     (SchemaFactory.java:391-395; PostgresValueConverter.java:322-323, 536-537, 695-707)
//   - sparsevec → io.debezium.data.SparseDoubleVector: STRUCT{dimensions INT16,
//     vector MAP<INT16, FLOAT64>}, version 1, doc "Sparse double vector"
//     (SchemaFactory.java:397-405; PostgresValueConverter.java:325-326, 539-540, 709-721)
//
// Debezium knows the types by their unqualified names (TypeRegistry.java:50-52,
// 202-210), so a type of that name in any schema is mapped, as here.
// The values come from pgvector's text form ("[1,2,3]", "{1:201,9:209}/3000";
// ReplicationMessageColumnValueResolver.java:175-180) through Vectors.java:24-83:
// brackets, then elements split on ',' (and ':' and '/'), each trimmed and read
// with Double.parseDouble, Float.parseFloat or Short.parseShort.
//
// Where Debezium would guess or throw, these parsers return an error, which
// parks the table (ValueError): a text that is not pgvector's output
// (Vectors.java logs a warning and writes null), an element Java reads but
// pgvector never prints (NaN, Infinity, hex floats, a 'd' suffix), a float
// out of FLOAT32's range in a halfvec, and a sparsevec whose dimensions or
// indices do not fit Debezium's INT16 (Short.parseShort throws there, so
// Debezium stops; pgvector allows up to 1,000,000,000 dimensions).

// The vector conversions have their own block, so that the mapping of
// pgvector stays in this file.
const (
	convDoubleVector conv = 64 + iota // vector: DoubleVector
	convFloatVector                   // halfvec: FloatVector
	convSparseVector                  // sparsevec: SparseDoubleVector
)

// Errors of the vector parsers (static, as the other parse errors).
var (
	errVectorSyntax = errors.New("not pgvector's text form of a vector ([x,y,...]); " +
		"the column's type is named vector/halfvec but its values are not pgvector's")
	errSparseSyntax = errors.New("not pgvector's text form of a sparsevec ({i:x,...}/dimensions); " +
		"the column's type is named sparsevec but its values are not pgvector's")
	errVectorElement = errors.New("a vector element is not a finite decimal number as pgvector prints it")
	errHalfvecRange  = errors.New("a halfvec element is outside FLOAT32's range")
	errSparseInt16   = errors.New("a sparsevec's dimensions or index exceed 32767, the INT16 of Debezium's io.debezium.data.SparseDoubleVector " +
		"(Debezium 3.6.1 stops on it: Short.parseShort, Vectors.java:53,76); exclude the column (postgres.columns_exclude) or reduce its dimensions")
	// errSparseAbsent: a sparsevec's fallback in Debezium is an empty
	// list (PostgresValueConverter.java:710), which its STRUCT schema
	// refuses, so Debezium stops on a NOT NULL sparsevec absent from a
	// key-only old image; parseSparseVector sees that absence as "".
	errSparseAbsent = errors.New("a NOT NULL sparsevec column is absent from a key-only old image (REPLICA IDENTITY DEFAULT or USING INDEX), " +
		"and Debezium has no value for it (its empty-list fallback does not fit SparseDoubleVector); set REPLICA IDENTITY FULL on the table")
	errNullVectorElement = errors.New("a NULL element in an array of vectors, whose items are required as in Debezium's schema " +
		"(SchemaBuilder.array of the vector's builder, PostgresValueConverter.java:357-360): remove the NULLs or exclude the column")
)

// mapVector sets t to the mapping of the pgvector type named name and
// reports whether name is one.
func mapVector(t *colType, name string) bool {
	switch name {
	case "vector":
		t.conv, t.schema = convDoubleVector, vectorSchema("io.debezium.data.DoubleVector", TypeFloat64)
	case "halfvec":
		t.conv, t.schema = convFloatVector, vectorSchema("io.debezium.data.FloatVector", TypeFloat32)
	case "sparsevec":
		t.conv, t.schema = convSparseVector, sparseVectorSchema()
	default:
		return false
	}
	return true
}

// isVector reports whether t is one of pgvector's types. Debezium builds
// the items of an array of them from the type's builder, never made
// optional (PostgresValueConverter.java:357-360, arrayElementSchema :412-428).
func isVector(t *colType) bool {
	return t.conv == convDoubleVector || t.conv == convFloatVector || t.conv == convSparseVector
}

func vectorSchema(name, elem string) *Schema {
	return &Schema{Type: TypeArray, Name: name, Version: 1, Items: &Schema{Type: elem}}
}

func sparseVectorSchema() *Schema {
	return &Schema{Type: TypeStruct, Name: "io.debezium.data.SparseDoubleVector", Version: 1,
		Doc: "Sparse double vector", Fields: []Field{
			{"dimensions", &Schema{Type: TypeInt16}},
			{"vector", &Schema{Type: TypeMap, Keys: &Schema{Type: TypeInt16}, Values: &Schema{Type: TypeFloat64}}},
		}}
}

// sparseEntry is one index and value of a sparsevec.
type sparseEntry struct {
	Index int16
	Value float64
}

// vectorSpace is Java's String.trim set: every byte up to ' '.
func vectorSpace(c byte) bool { return c <= ' ' }

func trimVector(s []byte) []byte {
	for len(s) > 0 && vectorSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && vectorSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// parseVectorElement reads one element: an optional sign, digits with an
// optional fraction, an optional exponent, as pgvector's output and input
// write and accept finite floats. bits is 64 for vector (Double.parseDouble)
// and 32 for halfvec (Float.parseFloat).
func parseVectorElement(s []byte, bits int) (float64, error) {
	s = trimVector(s)
	if !decimalFloatText(s) {
		return 0, errVectorElement
	}
	f, err := strconv.ParseFloat(bstr(s), bits)
	if err != nil {
		if bits == 32 {
			return 0, errHalfvecRange
		}
		return 0, errVectorElement
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, errVectorElement
	}
	return f, nil
}

// decimalFloatText reports whether s is [+-]digits[.digits][(e|E)[+-]digits]
// with at least one digit in the mantissa.
func decimalFloatText(s []byte) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// parseVector parses a vector or halfvec's text "[x,y,...]" into dst.
// An empty vector ("[]") is an error: pgvector has none, and
// Double.parseDouble("") throws in Debezium.
func parseVector(s []byte, bits int, dst []float64) ([]float64, error) {
	first := len(dst)
	s = trimVector(s)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return dst, errVectorSyntax
	}
	s = s[1 : len(s)-1]
	for {
		i := 0
		for i < len(s) && s[i] != ',' {
			i++
		}
		f, err := parseVectorElement(s[:i], bits)
		if err != nil {
			return dst[:first], err
		}
		dst = append(dst, f)
		if i == len(s) {
			return dst, nil
		}
		s = s[i+1:]
	}
}

// parseSparseVector parses a sparsevec's text "{i:x,...}/dimensions" into
// its dimensions and entries (appended to dst, in the text's order).
func parseSparseVector(s []byte, dst []sparseEntry) (int16, []sparseEntry, error) {
	first := len(dst)
	if len(s) == 0 {
		return 0, dst, errSparseAbsent
	}
	s = trimVector(s)
	slash := -1
	for i, c := range s {
		if c == '/' {
			if slash >= 0 {
				return 0, dst, errSparseSyntax // Vectors.java:46-47: exactly two parts
			}
			slash = i
		}
	}
	if slash < 0 {
		return 0, dst, errSparseSyntax
	}
	dims, err := parseShort(s[slash+1:])
	if err != nil {
		return 0, dst, err
	}
	body := trimVector(s[:slash])
	if len(body) < 2 || body[0] != '{' || body[len(body)-1] != '}' {
		return 0, dst, errSparseSyntax
	}
	body = trimVector(body[1 : len(body)-1])
	if len(body) == 0 {
		return dims, dst, nil // "{}/5": no entries (Vectors.java:61-66)
	}
	for {
		i := 0
		for i < len(body) && body[i] != ',' {
			i++
		}
		el := body[:i]
		colon := slices.Index(el, ':')
		if colon < 0 || slices.Index(el[colon+1:], ':') >= 0 {
			return 0, dst[:first], errSparseSyntax
		}
		idx, err := parseShort(el[:colon])
		if err != nil {
			return 0, dst[:first], err
		}
		f, err := parseVectorElement(el[colon+1:], 64)
		if err != nil {
			return 0, dst[:first], err
		}
		if idx < 1 || idx > dims || len(dst) > first && idx <= dst[len(dst)-1].Index {
			// pgvector prints 1-based indices within the dimensions, ascending.
			return 0, dst[:first], errSparseSyntax
		}
		dst = append(dst, sparseEntry{idx, f})
		if i == len(body) {
			return dims, dst, nil
		}
		body = body[i+1:]
	}
}

// parseShort reads a decimal int16 as Short.parseShort does, after a trim;
// a number out of range is errSparseInt16.
func parseShort(s []byte) (int16, error) {
	s = trimVector(s)
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i == len(s) {
		return 0, errSparseSyntax
	}
	for _, c := range s[i:] {
		if c < '0' || c > '9' {
			return 0, errSparseSyntax
		}
	}
	n, err := strconv.ParseInt(bstr(s), 10, 16)
	if err != nil {
		return 0, errSparseInt16
	}
	return int16(n), nil
}

// javaShortHashMapOrder puts a sparsevec's entries in the order a
// java.util.HashMap<Short, Double> made as Vectors.java:68-77 makes it
// (new HashMap<>(n), then put in the text's order) iterates them, which is
// the order JsonConverter and AvroData write a Connect map in. Short's
// hash is its value, so the bucket of index k is k & (capacity-1); within
// a bucket, entries stay in insertion order. The capacity starts at the
// power of two at or above n and doubles whenever the size passes 3/4 of
// it, or when a bucket of a table under 64 gets its ninth entry (treeifyBin
// resizes instead). A bucket that Java turns into a tree (nine or more
// colliding indices in a table of 64 or more) is iterated in insertion
// order here, which may differ from Java's: the entries and values are the
// same, only their order in the map differs (README "Differences from
// Debezium").
func javaShortHashMapOrder(entries []sparseEntry) {
	n := len(entries)
	if n < 2 {
		return
	}
	capacity := 1
	for capacity < n {
		capacity <<= 1
	}
	counts := map[uint32]int{}
	recount := func(size int) {
		clear(counts)
		for _, p := range entries[:size] {
			counts[shortBucket(p.Index, capacity)]++
		}
	}
	for size := 1; size <= n; size++ {
		b := shortBucket(entries[size-1].Index, capacity)
		counts[b]++
		if counts[b] >= 9 && capacity < 64 { // HashMap.putVal → treeifyBin → resize
			capacity <<= 1
			recount(size)
		}
		if size > capacity*3/4 { // ++size > threshold → resize
			capacity <<= 1
			recount(size)
		}
	}
	slices.SortStableFunc(entries, func(a, b sparseEntry) int {
		return int(shortBucket(a.Index, capacity)) - int(shortBucket(b.Index, capacity))
	})
}

// shortBucket is HashMap's bucket of a Short key: hash (Short.hashCode,
// the value) spread by h ^ h>>>16, masked by the capacity.
func shortBucket(k int16, capacity int) uint32 {
	h := uint32(int32(k))
	return (h ^ h>>16) & uint32(capacity-1)
}
