package schema

import "errors"

// This file converts bit and bit varying text.
//
// What Debezium does (PostgresValueConverter.convertBits and
// JdbcValueConverters.convertBits/padLittleEndian, checked against the
// sources and the expectations in AbstractRecordsProducerTest):
//
//   - bit(1) and varbit(1) are a BOOLEAN: Integer.valueOf(text, 2) != 0
//     ("1" -> true, "0" -> false). See parseBitBool.
//   - bit(n>1) and varbit(n>1 or unlimited) are io.debezium.data.Bits
//     (BYTES, schema parameter length = n, or 2147483647 for an unlimited
//     varbit). The text is read as a binary number, the RIGHTMOST character
//     being bit 0 ("for i from len-1 down to 0: if text[i]=='1'
//     bitset.set(len-1-i)"), and the bytes are BitSet.toByteArray():
//     little-endian, bit k of the number in byte k/8 at bit k%8, and
//     trimmed after the highest set bit. Debezium then pads to
//     ceil(bitset.length()/8) bytes, which is the same length, so the
//     result is never padded to the column width: leading zero bits of
//     the text are lost and an all-zero value is an empty byte array.
//     Examples from Debezium's tests: B'11' -> {3}; '1'::bit(7) (stored as
//     1000000) -> {64}; B'00' -> {}; B'000000110000001000000001' ->
//     {1, 2, 3}; B'1' followed by 63 zeros -> {0,0,0,0,0,0,0,0x80};
//     '101'::varbit -> {5}.

// errBitString is returned for bit text with a byte other than 0 and 1.
var errBitString = errors.New("bit string has a character other than 0 and 1")

// parseBits converts bit/varbit text ("10110") into the bytes of
// io.debezium.data.Bits, appended to dst: the little-endian bytes of the
// binary number the text spells, without trailing zero bytes. The empty
// string and all-zero strings append nothing.
func parseBits(s []byte, dst []byte) ([]byte, error) {
	first := -1
	for i, c := range s {
		switch c {
		case '1':
			if first < 0 {
				first = i
			}
		case '0':
		default:
			return dst, errBitString
		}
	}
	if first < 0 {
		return dst, nil
	}
	nbits := len(s) - first
	start := len(dst)
	for range (nbits + 7) / 8 {
		dst = append(dst, 0)
	}
	out := dst[start:]
	for i := first; i < len(s); i++ {
		if s[i] == '1' {
			p := len(s) - 1 - i
			out[p/8] |= 1 << (p % 8)
		}
	}
	return dst, nil
}

// parseBitBool converts the text of a bit(1) or varbit(1) value to the
// BOOLEAN Debezium emits for it. Only "0" and "1" are accepted (Postgres
// prints nothing else for bit(1); an empty varbit(1) makes Debezium's
// Integer.valueOf fail, here it is errBitString).
func parseBitBool(s []byte) (bool, error) {
	switch string(s) {
	case "1":
		return true, nil
	case "0":
		return false, nil
	}
	return false, errBitString
}
