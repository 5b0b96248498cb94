package schema

import (
	"slices"
	"unicode/utf8"
)

// This file parses hstore text.
//
// What Debezium does (PostgresValueConverter.convertHStore, checked
// against the sources): the text goes through pgjdbc's
// HStoreConverter.fromString into a java.util.HashMap<String,String>.
// hstore.handling.mode=json (default) writes that map with Jackson as a
// JSON object string ({"key":"val","k2":null}); hstore.handling.mode=map
// makes it a Kafka Connect MAP<STRING, optional STRING>. In both modes
// the entries come out in HashMap iteration order, not in the order of
// the text: javaHashMapOrder sorts parsed pairs into that order.

// hstorePair is one key/value of a parsed hstore; Null marks a NULL value.
type hstorePair struct {
	Key, Value []byte
	Null       bool
}

// parseHstore parses hstore_out's text: `"a"=>"1", "b"=>NULL,
// "c\"q"=>"x\\y"` (keys and values in double quotes with '"' and '\'
// backslash-escaped, NULL unquoted, pairs separated by ", "). The empty
// string is an empty hstore. Whitespace around the tokens is skipped as
// hstore_in does; unquoted keys and values other than NULL (which
// hstore_in accepts but hstore_out never prints) are errSyntax.
//
// The pairs are appended to pairs and their unescaped text to buf, which
// is grown by len(s) up front so that the Key and Value slices into it
// stay valid; each slice is capped at its own length. Reuse pairs and buf
// between calls to parse without allocating.
func parseHstore(s []byte, pairs []hstorePair, buf []byte) ([]hstorePair, []byte, error) {
	first, orig := len(pairs), len(buf)
	buf = slices.Grow(buf, len(s))
	fail := func() ([]hstorePair, []byte, error) { return pairs[:first], buf[:orig], errSyntax }
	i := skipArraySpace(s, 0)
	for i < len(s) {
		if s[i] != '"' {
			return fail()
		}
		var key []byte
		var ok bool
		key, buf, i, ok = hstoreQuoted(s, i, buf)
		if !ok {
			return fail()
		}
		i = skipArraySpace(s, i)
		if i+2 > len(s) || s[i] != '=' || s[i+1] != '>' {
			return fail()
		}
		i = skipArraySpace(s, i+2)
		p := hstorePair{Key: key}
		switch {
		case i < len(s) && s[i] == '"':
			if p.Value, buf, i, ok = hstoreQuoted(s, i, buf); !ok {
				return fail()
			}
		case i+4 <= len(s) && isNullWord(s[i:i+4]):
			p.Null = true
			i += 4
		default:
			return fail()
		}
		pairs = append(pairs, p)
		i = skipArraySpace(s, i)
		if i == len(s) {
			break
		}
		if s[i] != ',' {
			return fail()
		}
		i = skipArraySpace(s, i+1)
		if i == len(s) {
			return fail() // trailing ','
		}
	}
	return pairs, buf, nil
}

// hstoreQuoted reads the quoted string at s[i] (which is '"'), appends its
// unescaped text to buf and returns that text, capped, and the index after
// the closing quote.
func hstoreQuoted(s []byte, i int, buf []byte) ([]byte, []byte, int, bool) {
	start := len(buf)
	for i++; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 == len(s) {
				return nil, buf, i, false
			}
			i++
			buf = append(buf, s[i])
		case '"':
			return buf[start:len(buf):len(buf)], buf, i + 1, true
		default:
			buf = append(buf, c)
		}
	}
	return nil, buf, i, false
}

// javaStringHash is java.lang.String.hashCode() of UTF-8 text: h = 31*h +
// c over the UTF-16 code units (a supplementary character counts as its
// two surrogates). Invalid UTF-8 bytes count as U+FFFD each, which is how
// Go decodes them; Java's decoder may group them differently.
func javaStringHash(s []byte) int32 {
	var h int32
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		s = s[n:]
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// javaHashMapOrder sorts pairs into the iteration order of a
// java.util.HashMap filled with them in text order, as pgjdbc's
// HStoreConverter.fromString does: ascending bucket index, ties in
// insertion order. The bucket is (h ^ h>>>16) & (n-1), h the key's
// String.hashCode() and n the table size, which starts at 16 and doubles
// whenever the size passes 3/4 of it. (A bucket of 8 or more colliding
// keys in a table of 64 or more is turned into a tree in Java; its order
// is not modelled, which needs deliberately colliding keys.) Keys are
// unique in hstore text, so no pair replaces another.
func javaHashMapOrder(pairs []hstorePair) {
	n := uint32(16)
	for uint64(len(pairs)) > uint64(n)*3/4 {
		n <<= 1
	}
	mask := n - 1
	bucket := func(p *hstorePair) uint32 {
		h := uint32(javaStringHash(p.Key))
		return (h ^ h>>16) & mask
	}
	slices.SortStableFunc(pairs, func(a, b hstorePair) int {
		ba, bb := bucket(&a), bucket(&b)
		switch {
		case ba < bb:
			return -1
		case ba > bb:
			return 1
		}
		return 0
	})
}
