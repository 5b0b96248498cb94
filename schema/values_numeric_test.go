package schema

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
)

// javaBigIntegerBytes is an independent BigInteger.toByteArray(): the
// smallest n such that z fits n-byte two's complement, then z mod 2^(8n).
func javaBigIntegerBytes(z *big.Int) []byte {
	for n := 1; ; n++ {
		limit := new(big.Int).Lsh(big.NewInt(1), uint(8*n-1))
		lo := new(big.Int).Neg(limit)
		if z.Cmp(lo) >= 0 && z.Cmp(limit) < 0 {
			v := new(big.Int).Set(z)
			if v.Sign() < 0 {
				v.Add(v, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
			}
			return v.FillBytes(make([]byte, n))
		}
	}
}

// unscaledOf is the unscaled integer of valid numeric text.
func unscaledOf(t testing.TB, s string) *big.Int {
	z, ok := new(big.Int).SetString(strings.Replace(s, ".", "", 1), 10)
	if !ok {
		t.Fatalf("bad test numeric %q", s)
	}
	return z
}

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in    string
		want  []byte
		scale int32
	}{
		{"0", []byte{0x00}, 0},
		{"-12.340", []byte{0xCF, 0xCC}, 3},
		{"127", []byte{0x7F}, 0},
		{"128", []byte{0x00, 0x80}, 0},
		{"255", []byte{0x00, 0xFF}, 0},
		{"-1", []byte{0xFF}, 0},
		{"-128", []byte{0x80}, 0},
		{"-129", []byte{0xFF, 0x7F}, 0},
		{"32767", []byte{0x7F, 0xFF}, 0},
		{"32768", []byte{0x00, 0x80, 0x00}, 0},
		{"0.001", []byte{0x01}, 3},
		{"-0.001", []byte{0xFF}, 3},
		{"0.000", []byte{0x00}, 3},
		{"1234.11", []byte{0x01, 0xE2, 0x13}, 2},
		{"999999999999999999", nil, 0}, // 18 digits: fast path
		{"9223372036854775807", []byte{0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, 0},
		{"9223372036854775808", []byte{0x00, 0x80, 0, 0, 0, 0, 0, 0, 0}, 0},
		{"-9223372036854775808", []byte{0x80, 0, 0, 0, 0, 0, 0, 0}, 0},
		{"-9223372036854775809", []byte{0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, 0},
		{"0.00000000000000000000000001", []byte{0x01}, 26},
		{"12345678901234567890.123456789", nil, 9},
		{"-" + strings.Repeat("9", 1200) + "." + strings.Repeat("9", 300), nil, 300},
		{"340282366920938463463374607431768211456", nil, 0}, // 2^128
	}
	for _, tc := range tests {
		prefix := []byte("pre")
		got, scale, special, err := parseDecimal([]byte(tc.in), prefix)
		if err != nil || special != numFinite {
			t.Fatalf("%q: %v, special %d", tc.in, err, special)
		}
		if !bytes.HasPrefix(got, []byte("pre")) {
			t.Fatalf("%q: prefix lost: % X", tc.in, got)
		}
		got = got[3:]
		want := tc.want
		if want == nil {
			want = javaBigIntegerBytes(unscaledOf(t, tc.in))
		} else if ref := javaBigIntegerBytes(unscaledOf(t, tc.in)); !bytes.Equal(ref, want) {
			t.Fatalf("%q: table says % X, reference % X", tc.in, want, ref)
		}
		if !bytes.Equal(got, want) || scale != tc.scale {
			t.Errorf("%q = % X scale %d, want % X scale %d", tc.in, got, scale, want, tc.scale)
		}
	}
}

func TestParseDecimalSpecialAndErrors(t *testing.T) {
	for in, want := range map[string]numSpecial{"NaN": numNaN, "Infinity": numPosInf, "-Infinity": numNegInf} {
		got, _, sp, err := parseDecimal([]byte(in), []byte("x"))
		if err != nil || sp != want || string(got) != "x" {
			t.Errorf("%q: %q %d %v", in, got, sp, err)
		}
	}
	for _, in := range []string{"", "-", ".5", "5.", "1e5", "1E5", "+1", "1.2.3", " 1", "1 ", "--1", "nan",
		"inf", "Inf", "infinity", "0x10", "1,000", "-.5", "1.-5", "\x00", "١"} {
		if _, _, _, err := parseDecimal([]byte(in), nil); !errors.Is(err, errSyntax) {
			t.Errorf("%q: err %v, want errSyntax", in, err)
		}
	}
}

func TestDecimalToFloat(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{"1.5", 1.5},
		{"-12.340", -12.34},
		{"0.1", 0.1},
		{"-0.000", 0},
		{"123456789012345678901234567890", 1.2345678901234568e29},
		{"1" + strings.Repeat("0", 400), math.Inf(1)},
		{"-1" + strings.Repeat("0", 400), math.Inf(-1)},
		{"0." + strings.Repeat("0", 400) + "1", 0},
		{"Infinity", math.Inf(1)},
		{"-Infinity", math.Inf(-1)},
	}
	for _, tc := range tests {
		got, err := decimalToFloat([]byte(tc.in))
		if err != nil || got != tc.want || math.Signbit(got) != math.Signbit(tc.want) {
			t.Errorf("%q = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if got, err := decimalToFloat([]byte("NaN")); err != nil || !math.IsNaN(got) {
		t.Errorf("NaN = %v, %v", got, err)
	}
	for _, in := range []string{"", "1e5", "abc", "1.", "+1"} {
		if _, err := decimalToFloat([]byte(in)); !errors.Is(err, errSyntax) {
			t.Errorf("%q: err %v", in, err)
		}
	}
}

func TestTrimDecimalZeros(t *testing.T) {
	for in, want := range map[string]string{
		"1.500": "1.5", "100": "100", "0.000": "0", "1.0": "1", "NaN": "NaN", "-2.10": "-2.1",
		"10.01": "10.01", "0": "0", "-0.50": "-0.5",
	} {
		if got := string(trimDecimalZeros([]byte(in))); got != want {
			t.Errorf("%q = %q, want %q", in, got, want)
		}
	}
}

func TestAppendJavaDecimalString(t *testing.T) {
	// Expected values are java.math.BigDecimal.toString() of new
	// BigDecimal(in).
	for in, want := range map[string]string{
		"0.0000001":    "1E-7",
		"0.00000010":   "1.0E-7",
		"0.000000100":  "1.00E-7",
		"0.0000000":    "0E-7",
		"0.00000000":   "0E-8",
		"-0.000000123": "-1.23E-7",
		"0.000001":     "0.000001",
		"0.0000012":    "0.0000012",
		"0.000000":     "0.000000",
		"123.45":       "123.45",
		"-0.00":        "0.00",
		"0":            "0",
		"-5":           "-5",
		"100":          "100",
		"NaN":          "NAN",
		"Infinity":     "POSITIVE_INFINITY",
		"-Infinity":    "NEGATIVE_INFINITY",
	} {
		got, err := appendJavaDecimalString([]byte("x"), []byte(in))
		if err != nil || string(got) != "x"+want {
			t.Errorf("%q = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := appendJavaDecimalString(nil, []byte("1e5")); !errors.Is(err, errSyntax) {
		t.Errorf("1e5: %v", err)
	}
}

func TestParseMoney(t *testing.T) {
	for in, want := range map[string]string{
		"$1,234.56":                   "1234.56",
		"-$1,234.56":                  "-1234.56",
		"($1,234.56)":                 "-1234.56",
		"$0.00":                       "0.00",
		"$1,234.50":                   "1234.50",
		"$1,234":                      "1234",
		"1234.56":                     "1234.56",
		"$999.99":                     "999.99",
		"$92,233,720,368,547,758.07":  "92233720368547758.07",
		"-$92,233,720,368,547,758.08": "-92233720368547758.08",
		"$1,000,000.00":               "1000000.00",
	} {
		got, err := parseMoney([]byte(in), []byte("x"))
		if err != nil || string(got) != "x"+want {
			t.Errorf("%q = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "$", "-", "()", "$1,23.00", "$1,2345", "$1234,567", "1.234,56 €", "€1,00",
		"$.5", "$1.", "(-$1)", "$-1", "($1", "$1)", "$ 1", "1 234,56", "$1,,234", "$,123", "$1.2.3", "USD 1.00",
		"$1e5", "+$1.00"} {
		if got, err := parseMoney([]byte(in), nil); !errors.Is(err, errMoneyFormat) {
			t.Errorf("%q = %q, %v; want errMoneyFormat", in, got, err)
		}
	}
}

func TestNumericNoAllocs(t *testing.T) {
	dst := make([]byte, 0, 64)
	in := []byte("-123456789012.345678")
	money := []byte("-$1,234,567.89")
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if dst, _, _, err = parseDecimal(in, dst[:0]); err != nil {
			t.Fatal(err)
		}
		if dst, err = parseMoney(money, dst[:0]); err != nil {
			t.Fatal(err)
		}
		if dst, err = appendJavaDecimalString(dst[:0], in); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run", allocs)
	}
}

// TestRoundHalfUpLikeBigDecimalSetScale: money with more fractional digits
// than money_fraction_digits is rounded as Debezium's
// PostgresValueConverter.convertMoney does,
// BigDecimal.setScale(moneyFractionDigits, RoundingMode.HALF_UP)
// (debezium-connector-postgres/src/main/java/io/debezium/connector/
// postgresql/PostgresValueConverter.java:908, v3.6.1.Final).
func TestRoundHalfUpLikeBigDecimalSetScale(t *testing.T) {
	tests := []struct {
		in    string
		scale int
		want  string
	}{
		{"123.46", 1, "123.5"}, // RecordsStreamProducerIT.java:3834-3842: 123.4567 stored as $123.46, sent as 123.5
		{"123.44", 1, "123.4"},
		{"123.45", 1, "123.5"}, // a tie goes away from zero
		{"-123.45", 1, "-123.5"},
		{"-123.44", 1, "-123.4"},
		{"9.96", 1, "10.0"}, // the carry reaches the top digit
		{"-99.99", 0, "-100"},
		{"99.5", 0, "100"},
		{"0.49", 0, "0"},
		{"-0.04", 1, "0.0"}, // no negative zero in BigDecimal
		{"-0.4", 0, "0"},
		{"-0.05", 1, "-0.1"},
		{"92233720368547758.07", 1, "92233720368547758.1"},
		{"-92233720368547758.08", 0, "-92233720368547758"},
		{"1234.56", 2, "1234.56"}, // as many digits: unchanged
		{"1234.5", 2, "1234.5"},   // fewer: unchanged (fixScale pads)
		{"1234", 0, "1234"},
	}
	for _, tc := range tests {
		buf := []byte("garbage")
		got := roundHalfUp([]byte(tc.in), tc.scale, &buf)
		if string(got) != tc.want {
			t.Errorf("roundHalfUp(%q, %d) = %q, want %q", tc.in, tc.scale, got, tc.want)
		}
	}
}
