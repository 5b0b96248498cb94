package schema

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"testing"
)

func TestParsePoint(t *testing.T) {
	tests := []struct {
		in   string
		x, y float64
	}{
		{"(1.5,-2)", 1.5, -2},
		{"(1,1)", 1, 1},
		{"(0,-0)", 0, math.Copysign(0, -1)},
		{"(-Infinity,1e+100)", math.Inf(-1), 1e100},
		{"(Infinity,1.5e-07)", math.Inf(1), 1.5e-07},
		{"(1e-320,2)", 1e-320, 2},
		{"(-1.7976931348623157e+308,4.9e-324)", -math.MaxFloat64, 5e-324},
		{"(0.30000000000000004,123456789012)", 0.30000000000000004, 123456789012},
	}
	for _, tc := range tests {
		x, y, err := parsePoint([]byte(tc.in))
		if err != nil || math.Float64bits(x) != math.Float64bits(tc.x) || math.Float64bits(y) != math.Float64bits(tc.y) {
			t.Errorf("%q = %v, %v, %v; want %v, %v", tc.in, x, y, err, tc.x, tc.y)
		}
	}
	x, y, err := parsePoint([]byte("(NaN,NaN)"))
	if err != nil || math.Float64bits(x) != javaNaNBits || math.Float64bits(y) != javaNaNBits {
		t.Errorf("(NaN,NaN) = %x, %x, %v", math.Float64bits(x), math.Float64bits(y), err)
	}
}

func TestParsePointErrors(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"", errSyntax}, {"1,2", errSyntax}, {"(1,2", errSyntax}, {"(1;2)", errSyntax}, {"(1,2,3)", errSyntax},
		{"( 1,2)", errSyntax}, {"(1, 2)", errSyntax}, {"(,1)", errSyntax}, {"(1,)", errSyntax}, {"(inf,1)", errSyntax},
		{"(nan,1)", errSyntax}, {"(0x1p3,1)", errSyntax}, {"(1_0,2)", errSyntax}, {"(+1,2)", errSyntax},
		{"(.5,1)", errSyntax}, {"(1.,1)", errSyntax}, {"((1,2))", errSyntax}, {"(Inf,1)", errSyntax},
		{"(1e999,2)", errRange}, {"(1,-1e400)", errRange},
	}
	for _, tc := range tests {
		if _, _, err := parsePoint([]byte(tc.in)); !errors.Is(err, tc.want) {
			t.Errorf("%q: err %v, want %v", tc.in, err, tc.want)
		}
	}
}

func TestAppendPointWKB(t *testing.T) {
	tests := []struct {
		x, y float64
		want string
	}{
		// Point.createValue(schema, 1, 1) in Debezium's tests.
		{1, 1, "0101000000000000000000f03f000000000000f03f"},
		{1.5, -2, "0101000000000000000000f83f00000000000000c0"},
		{math.NaN(), math.Inf(1), "0101000000000000000000f87f000000000000f07f"},
		{math.Copysign(0, -1), 0, "01010000000000000000000080" + "0000000000000000"},
	}
	for _, tc := range tests {
		got := appendPointWKB([]byte{0xAA}, tc.x, tc.y)
		if len(got) != 22 || got[0] != 0xAA || hex.EncodeToString(got[1:]) != tc.want {
			t.Errorf("(%v, %v) = %x, want %s", tc.x, tc.y, got, tc.want)
		}
	}
	// The layout Point.parseWKBPoint reads back: byte order, type 1, x, y.
	wkb := appendPointWKB(nil, -3.25, 7)
	if wkb[0] != 1 || !bytes.Equal(wkb[1:5], []byte{1, 0, 0, 0}) ||
		math.Float64frombits(leUint64(wkb[5:13])) != -3.25 || math.Float64frombits(leUint64(wkb[13:21])) != 7 {
		t.Errorf("layout % x", wkb)
	}
}

func leUint64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func TestPointNoAllocs(t *testing.T) {
	in := []byte("(1.5,-2.25)")
	dst := make([]byte, 0, 32)
	allocs := testing.AllocsPerRun(100, func() {
		x, y, err := parsePoint(in)
		if err != nil {
			t.Fatal(err)
		}
		dst = appendPointWKB(dst[:0], x, y)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run", allocs)
	}
}
