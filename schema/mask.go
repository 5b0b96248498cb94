package schema

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// This file holds the column shaping of Debezium's column mappers, as pure
// functions over a column's converted value: column.mask.with.N.chars
// (MaskStrings with a fixed value), column.mask.hash[.v2].ALG.with.salt.SALT
// (MaskStrings with a HashValueConverter) and column.truncate.to.N.chars
// (TruncateColumn). The record plan binds a [ColumnRewrite] to a column once
// per relation ([ColumnRewrite.Bind]); rows then only call
// [BoundRewrite.Apply].
//
// What Debezium 3.6.1 does, and so what the plan must do around these
// functions:
//   - A mapper rewrites the value the column's type converter produced, not
//     the database text (TableSchemaBuilder.java:390-401): a bpchar's
//     padding is hashed, a timestamptz is truncated in its ISO form.
//   - Only value fields are mapped; key fields are built without mappers
//     (TableSchemaBuilder.java:167-169 passes null), so a masked primary key
//     column is still clear in the record key.
//   - One mapper per column: the first rule whose pattern matches
//     (ColumnMappers.java:329-331); rules are built truncate, mask, hash,
//     hash v2 (ColumnMappers.java:56-76).
//   - The field schema keeps its type and gains a parameter:
//     masked=true for mask and hash on every matched column, string or not
//     (MaskStrings.java:90-93); truncateLength=N when the column may be
//     longer than N (TruncateColumn.java:44-54). Parameters follow the
//     type's own (SchemaBuilder.parameter keeps insertion order).
//   - An unchanged TOASTed value reaches the mapper as Debezium's
//     placeholder text (or bytes), so it is masked, hashed or truncated
//     like any value.

// RewriteKind names one of Debezium's column mappers.
type RewriteKind uint8

// The column mappers.
const (
	RewriteMask     RewriteKind = iota + 1 // column.mask.with.N.chars
	RewriteHash                            // column.mask.hash[.v2].ALG.with.salt.SALT
	RewriteTruncate                        // column.truncate.to.N.chars
)

// ColumnRewrite is one column mapper as configured, not yet bound to a
// column.
type ColumnRewrite struct {
	Kind RewriteKind
	// Chars is the number of '*' of a mask, or the length a value is
	// truncated to, in Java chars (UTF-16 code units) or, for bytes, bytes.
	Chars int
	// Algorithm, Salt and Version configure a hash: a Java
	// MessageDigest algorithm name (case-insensitive, e.g. SHA-256), the
	// salt, and 1 (column.mask.hash.…) or 2 (column.mask.hash.v2.…).
	Algorithm string
	Salt      string
	Version   int
}

// Validate reports a rewrite Debezium would refuse or mooncdc cannot
// reproduce.
func (r ColumnRewrite) Validate() error {
	switch r.Kind {
	case RewriteMask, RewriteTruncate:
		if r.Chars < 0 {
			// TruncateColumn.java:33-35; a negative mask length fails
			// in Strings.createString.
			return fmt.Errorf("length %d is negative; use 0 or more", r.Chars)
		}
	case RewriteHash:
		if r.Version != 1 && r.Version != 2 {
			return fmt.Errorf("hash version %d is not 1 or 2 (column.mask.hash.… is 1, column.mask.hash.v2.… is 2)", r.Version)
		}
		if _, err := newDigest(r.Algorithm); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown column rewrite kind %d", r.Kind)
	}
	return nil
}

// BoundRewrite is a [ColumnRewrite] bound to one column. It is part of a
// Plan, which encoders on several goroutines share: it is safe for
// concurrent use (a hash's state is taken from a pool per call).
type BoundRewrite struct {
	kind RewriteKind
	// strings and bytes say which converted values Debezium's converter
	// touches: MaskStrings only string-typed JDBC columns
	// (MaskStrings.java:72-88), TruncatingValueConverter String and
	// ByteBuffer values (TruncateColumn.java:66-79).
	strings, bytes bool
	mask           []byte
	limit          int        // truncate: Chars; hash: the column's length, 0 for none
	hashes         *sync.Pool // of *hashState, for RewriteHash
	salt           []byte
	v1             bool
	params         []Param
}

// Bind binds r to column c, whose values have the Connect schema value
// (the column's mapping). r must be valid.
func (r ColumnRewrite) Bind(c Column, value *Schema) *BoundRewrite {
	b := &BoundRewrite{kind: r.Kind}
	length := ColumnLength(c)
	switch r.Kind {
	case RewriteMask, RewriteHash:
		b.strings = stringJDBCType(c)
		b.params = []Param{{"masked", "true"}}
		if r.Kind == RewriteMask {
			b.mask = AppendMask(nil, r.Chars)
			break
		}
		algorithm := r.Algorithm
		b.hashes = &sync.Pool{New: func() any {
			h, _ := newDigest(algorithm) // Validate refuses an unknown one
			return &hashState{h: h}
		}}
		b.salt = []byte(r.Salt) // salt.getBytes(), UTF-8 (ColumnMappers.java:218-224)
		b.v1 = r.Version == 1
		if length > 0 && length < unknownLength {
			// MaskStrings.java:61-69: the hex is cut to the column's length.
			b.limit = length
		}
	case RewriteTruncate:
		b.limit = r.Chars
		// TruncateColumn.java:51-54: only a column that may be longer.
		if length < 0 || length > r.Chars {
			// Debezium's String values are the string schemas; its
			// ByteBuffer values the plain bytes (bytea); Bits and
			// Decimal are byte[] and BigDecimal, left alone.
			b.strings = value.Type == TypeString
			b.bytes = value.Type == TypeBytes && value.Name == ""
			b.params = []Param{{"truncateLength", strconv.Itoa(r.Chars)}}
		}
	}
	return b
}

// Params returns the schema parameters the mapper adds to the column's
// value field, to be appended after the type's own.
func (b *BoundRewrite) Params() []Param { return b.params }

// Changes reports whether the rewrite can change a value of the column;
// when false only [BoundRewrite.Params] matter.
func (b *BoundRewrite) Changes() bool { return b.strings || b.bytes }

// Apply rewrites one converted value: v, a string's UTF-8 text or a bytes
// value (as the column's schema type says), or null. It appends the
// result to dst and returns it and whether the result is null. A mask
// turns null into the mask too (ColumnMappersTest.java:92); hash and
// truncate keep null (ColumnMappersTest.java:156, TruncateColumnTest.java:36).
func (b *BoundRewrite) Apply(dst, v []byte, null bool) ([]byte, bool) {
	switch {
	case !b.Changes():
		return append(dst, v...), null
	case b.kind == RewriteMask:
		return append(dst, b.mask...), false
	case null:
		return dst, true
	case b.kind == RewriteHash:
		var ok bool
		dst, ok = b.appendHash(dst, v)
		return dst, !ok
	case b.bytes:
		return append(dst, TruncateBytes(v, b.limit)...), false
	default:
		return AppendTruncatedChars(dst, v, b.limit), false
	}
}

// rewriteDatum is Apply on a converted scalar, for the encoders: d is the
// column's datum (ignored when null), buf holds the result's bytes until
// the next call. A value of a kind the mapper leaves alone (Debezium's
// converter sees no String or ByteBuffer) passes unchanged.
func (b *BoundRewrite) rewriteDatum(d datum, null bool, buf *[]byte) (datum, bool) {
	switch {
	case b.strings && (null || d.k == dString):
		out, isNull := b.Apply((*buf)[:0], d.b, null)
		*buf = out
		if isNull {
			return datum{k: dNull}, true
		}
		return datum{k: dString, b: out}, false
	case b.bytes && !null && d.k == dBytes:
		return datum{k: dBytes, b: TruncateBytes(d.b, b.limit)}, false
	}
	return d, null
}

// appendHash appends the lowercase hex digest of the salt and v, cut to
// the column length (MaskStrings.java:144-157).
func (b *BoundRewrite) appendHash(dst, v []byte) ([]byte, bool) {
	st := b.hashes.Get().(*hashState)
	defer b.hashes.Put(st)
	st.h.Reset()
	st.h.Write(b.salt)
	if b.v1 {
		st.sum = AppendJavaSerializedString(st.sum[:0], v)
	} else {
		// V2: value.toString().getBytes(), UTF-8 on Java 18+ and on the
		// Debezium images (MaskStrings.java:176-181).
		st.sum = append(st.sum[:0], v...)
	}
	st.h.Write(st.sum)
	st.sum = st.h.Sum(st.sum[:0])
	n := hex.EncodedLen(len(st.sum))
	start := len(dst)
	dst = hex.AppendEncode(dst, st.sum)
	if b.limit > 0 && n > b.limit {
		dst = dst[:start+b.limit]
	}
	return dst, true
}

// hashState is one use's digest and its scratch (input, then sum).
type hashState struct {
	h   hash.Hash
	sum []byte
}

// AppendMask appends n '*' (ColumnMappers.java:189-204).
func AppendMask(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, '*')
	}
	return dst
}

// AppendJavaSerializedString appends what ObjectOutputStream.writeObject
// writes for a String s given as UTF-8 text, the bytes
// HashingByteArrayStrategy.V1 hashes (MaskStrings.java:166-174): the
// stream header 0xACED 0x0005, then TC_STRING (0x74) with a 2-byte length
// or, past 65535 bytes, TC_LONGSTRING (0x7C) with an 8-byte length,
// followed by the string in Java's modified UTF-8 (U+0000 as C0 80,
// characters beyond the BMP as two 3-byte surrogates). Invalid UTF-8 reads
// as U+FFFD, as Java's decoder would make it.
func AppendJavaSerializedString(dst, s []byte) []byte {
	n := modifiedUTF8Len(s)
	dst = append(dst, 0xAC, 0xED, 0x00, 0x05)
	if n <= 0xFFFF {
		dst = append(dst, 0x74, byte(n>>8), byte(n))
	} else {
		dst = append(dst, 0x7C)
		for shift := 56; shift >= 0; shift -= 8 {
			dst = append(dst, byte(n>>shift))
		}
	}
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		s = s[size:]
		switch {
		case r >= 1 && r < 0x80:
			dst = append(dst, byte(r))
		case r < 0x800: // including U+0000
			dst = append(dst, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
		case r < 0x10000:
			dst = appendModified3(dst, r)
		default:
			r -= 0x10000
			dst = appendModified3(dst, 0xD800+(r>>10))
			dst = appendModified3(dst, 0xDC00+(r&0x3FF))
		}
	}
	return dst
}

func appendModified3(dst []byte, c rune) []byte {
	return append(dst, 0xE0|byte(c>>12), 0x80|byte(c>>6&0x3F), 0x80|byte(c&0x3F))
}

// modifiedUTF8Len is the length of s in Java's modified UTF-8.
func modifiedUTF8Len(s []byte) int {
	n := 0
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		s = s[size:]
		switch {
		case r >= 1 && r < 0x80:
			n++
		case r < 0x800:
			n += 2
		case r < 0x10000:
			n += 3
		default:
			n += 6
		}
	}
	return n
}

// AppendTruncatedChars appends the first n Java chars (UTF-16 code units)
// of the UTF-8 text s, as String.substring(0, n) cuts it
// (TruncateColumn.java:67-71). A cut between the two halves of a
// surrogate pair leaves a lone high surrogate, which Java's UTF-8 encoder
// (String.getBytes, Avro's Utf8) writes as '?'; that is what is appended.
func AppendTruncatedChars(dst, s []byte, n int) []byte {
	units := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRune(s[i:])
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > n {
			dst = append(dst, s[:i]...)
			if units < n {
				dst = append(dst, '?')
			}
			return dst
		}
		units += w
		i += size
	}
	return append(dst, s...)
}

// TruncateBytes returns the first n bytes of v (TruncateColumn.java:73-77).
func TruncateBytes(v []byte, n int) []byte {
	if len(v) > n {
		return v[:n]
	}
	return v
}

// unknownLength is the length pgjdbc reports for a type without one
// (TypeInfoCache's unknownLength, Integer.MAX_VALUE by default).
const unknownLength = 1<<31 - 1

// ColumnLength is the length Debezium's Column has for c: pgjdbc's
// TypeInfoCache.getPrecision (pgjdbc TypeInfoCache.java:825-887, at
// 3a699d5) of the column's effective type and typmod, as Debezium's
// pgoutput decoder takes it (ColumnMetaData.java:55-62,
// PostgresType.java:135-158). Hashes are cut to it, and truncation is
// declared only for a column that may be longer.
func ColumnLength(c Column) int {
	oid, mod := c.TypeOID, c.TypeMod
	if c.Type != nil {
		if c.Type.Elem != nil {
			oid = c.Type.Elem.OID // convertArrayToBaseOid
		} else {
			oid = c.Type.OID
		}
		if c.Type.Mod >= 0 {
			mod = c.Type.Mod
		}
	}
	if e, ok := builtinArrays[oid]; ok {
		oid = e
	}
	switch oid {
	case oidInt2:
		return 5
	case oidOID, oidInt4:
		return 10
	case oidInt8:
		return 19
	case oidFloat4:
		return 8
	case oidFloat8:
		return 17
	case oidNumeric:
		if mod == -1 {
			// Precision 0 without a typmod, so Debezium takes the
			// display size instead (PostgresType.java:153-157).
			return 131089
		}
		return int((mod - 4) >> 16 & 0xFFFF)
	case oidChar, oidBool:
		return 1
	case oidBpchar, oidVarchar, oidVarbit:
		if mod == -1 {
			return unknownLength
		}
		if oid == oidVarbit {
			return int(mod)
		}
		return int(mod - 4)
	case oidBit:
		return int(mod)
	case oidDate, oidTime, oidTimetz, oidInterval, oidTimestamp, oidTimestamptz:
		return displaySize(oid, mod)
	}
	return unknownLength
}

// displaySize is pgjdbc's TypeInfoCache.getDisplaySize for the date and
// time types (TypeInfoCache.java:964-1025): the length of the text form.
func displaySize(oid uint32, mod int32) int {
	secondSize := func() int {
		switch {
		case mod == -1:
			return 6 + 1
		case mod == 0:
			return 0
		case mod == 1:
			return 2 + 1 // pgjdbc counts two digits for time(1)
		default:
			return int(mod) + 1
		}
	}
	switch oid {
	case oidDate:
		return 13 // "4713-01-01 BC"
	case oidTime:
		return 8 + secondSize()
	case oidTimetz:
		return 8 + secondSize() + 6
	case oidTimestamp:
		return 13 + 1 + 8 + secondSize()
	case oidTimestamptz:
		return 13 + 1 + 8 + secondSize() + 6
	}
	return 49 // interval: "-123456789 years 11 months 33 days 23 hours 10.123456 seconds"
}

// stringJDBCType reports whether pgjdbc gives c's type a string JDBC type
// (CHAR or VARCHAR), the only ones MaskStrings rewrites
// (MaskStrings.java:72-88): "char", bpchar, varchar, text, name (pgjdbc
// TypeInfoCache.java:93-98) and enums (TypeInfoCache.java:281-282).
// Domains count as their base type, as mapColumn resolves them.
func stringJDBCType(c Column) bool {
	oid := c.TypeOID
	if c.Type != nil {
		if c.Type.Elem != nil {
			return false
		}
		if c.Type.Kind == 'e' {
			return true
		}
		oid = c.Type.OID
	}
	switch oid {
	case oidChar, oidBpchar, oidVarchar, oidText, oidName:
		return true
	}
	return false
}

// digests maps upper-cased Java MessageDigest names and aliases (the SUN
// provider's, looked up case-insensitively as MessageDigest.getInstance
// does) to Go's implementations. MD2 has none in Go's library.
var digests = map[string]func() hash.Hash{
	"MD5":         md5.New,
	"SHA":         sha1.New,
	"SHA1":        sha1.New,
	"SHA-1":       sha1.New,
	"SHA-224":     sha256.New224,
	"SHA224":      sha256.New224,
	"SHA-256":     sha256.New,
	"SHA256":      sha256.New,
	"SHA-384":     sha512.New384,
	"SHA384":      sha512.New384,
	"SHA-512":     sha512.New,
	"SHA512":      sha512.New,
	"SHA-512/224": sha512.New512_224,
	"SHA512/224":  sha512.New512_224,
	"SHA-512/256": sha512.New512_256,
	"SHA512/256":  sha512.New512_256,
	"SHA3-224":    func() hash.Hash { return sha3.New224() },
	"SHA3-256":    func() hash.Hash { return sha3.New256() },
	"SHA3-384":    func() hash.Hash { return sha3.New384() },
	"SHA3-512":    func() hash.Hash { return sha3.New512() },
}

// errUnknownDigest is returned for an algorithm mooncdc has no digest for.
var errUnknownDigest = errors.New("unknown hash algorithm")

func newDigest(name string) (hash.Hash, error) {
	f, ok := digests[strings.ToUpper(name)]
	if !ok {
		return nil, fmt.Errorf("%w %q: use one of MD5, SHA-1, SHA-224, SHA-256, SHA-384, SHA-512, SHA-512/224, SHA-512/256, SHA3-224, SHA3-256, SHA3-384, SHA3-512", errUnknownDigest, name)
	}
	return f(), nil
}
