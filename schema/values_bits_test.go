package schema

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseBits(t *testing.T) {
	tests := []struct {
		in   string
		want []byte
	}{
		// The expectations of Debezium's AbstractRecordsProducerTest.
		{"11", []byte{3}},
		{"1000000", []byte{64}}, // '1'::bit(7)
		{"00", []byte{}},
		{"000000110000001000000001", []byte{1, 2, 3}},
		{"1" + strings.Repeat("0", 63), []byte{0, 0, 0, 0, 0, 0, 0, 0x80}},
		{"101", []byte{5}},
		// Worked out from Debezium's algorithm.
		{"111011010001000110000001000000001", []byte{0x01, 0x02, 0x23, 0xDA, 0x01}},
		{"", []byte{}},
		{"1", []byte{1}},
		{"0", []byte{}},
		{"11111111", []byte{0xFF}},
		{"100000000", []byte{0x00, 0x01}},
		{"0000000011111111", []byte{0xFF}},
		{"1111111100000000", []byte{0x00, 0xFF}},
	}
	for _, tc := range tests {
		got, err := parseBits([]byte(tc.in), []byte("pre"))
		if err != nil || !bytes.HasPrefix(got, []byte("pre")) || !bytes.Equal(got[3:], tc.want) {
			t.Errorf("%q = % x, %v; want % x", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"2", "1 0", "10x", "B'1'", " 1"} {
		if got, err := parseBits([]byte(in), []byte("pre")); !errors.Is(err, errBitString) || string(got) != "pre" {
			t.Errorf("%q = %q, %v; want errBitString", in, got, err)
		}
	}
}

func TestParseBitBool(t *testing.T) {
	for in, want := range map[string]bool{"1": true, "0": false} {
		if got, err := parseBitBool([]byte(in)); err != nil || got != want {
			t.Errorf("%q = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "01", "t", "2"} {
		if _, err := parseBitBool([]byte(in)); !errors.Is(err, errBitString) {
			t.Errorf("%q: err %v", in, err)
		}
	}
}

func TestBitsNoAllocs(t *testing.T) {
	in := []byte("000000110000001000000001")
	dst := make([]byte, 0, 8)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if dst, err = parseBits(in, dst[:0]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run", allocs)
	}
}
