package schema

import (
	"bytes"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// Fuzz targets for the value parsers of values_*.go: no input may panic,
// a failed parse leaves the caller's buffers as they were, and what is
// accepted must agree with an independent reference or survive a round
// trip through Postgres' output format. Failing inputs are saved under
// testdata/fuzz/<Target>.

func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "-12.340", "127", "-129", "NaN", "Infinity", "-Infinity", "1e5", "0.000",
		"9223372036854775808", "-9223372036854775809", "123456789012345678901234567890.5", ".5", "5.", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		got, scale, special, err := parseDecimal(s, []byte("pre"))
		if err != nil || special != numFinite {
			if string(got) != "pre" {
				t.Fatalf("%q: dst changed to %q on error/special", s, got)
			}
			return
		}
		// Reference: the digits as a big.Int, BigInteger.toByteArray().
		text := string(s)
		frac := 0
		if dot := strings.IndexByte(text, '.'); dot >= 0 {
			frac = len(text) - dot - 1
		}
		if int(scale) != frac {
			t.Fatalf("%q: scale %d, want %d", s, scale, frac)
		}
		want := javaBigIntegerBytes(unscaledOf(t, text))
		if !bytes.Equal(got[3:], want) {
			t.Fatalf("%q = % X, want % X", s, got[3:], want)
		}
		// The other numeric helpers must accept what parseDecimal accepts.
		if _, err := decimalToFloat(s); err != nil {
			t.Fatalf("%q: decimalToFloat: %v", s, err)
		}
		js, err := appendJavaDecimalString(nil, s)
		if err != nil {
			t.Fatalf("%q: appendJavaDecimalString: %v", s, err)
		}
		// Java's toString must denote the same number with the same scale.
		if r, ok := new(big.Rat).SetString(string(js)); !ok || r.Cmp(mustRat(t, text)) != 0 {
			t.Fatalf("%q -> %q: not the same number", s, js)
		}
		trimmed := trimDecimalZeros(s)
		if mustRat(t, string(trimmed)).Cmp(mustRat(t, text)) != 0 {
			t.Fatalf("%q -> %q: trimming changed the number", s, trimmed)
		}
	})
}

func mustRat(t *testing.T, s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("not a number: %q", s)
	}
	return r
}

func FuzzParseMoney(f *testing.F) {
	for _, s := range []string{"$1,234.56", "-$1,234.56", "($1,234.56)", "$0.00", "1.234,56 €", "$1,23.00",
		"-$92,233,720,368,547,758.08", "$", "()", "$1,234"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		got, err := parseMoney(s, []byte("pre"))
		if err != nil {
			if string(got) != "pre" {
				t.Fatalf("%q: dst changed to %q on error", s, got)
			}
			return
		}
		num := got[3:]
		if _, _, sp, err := parseDecimal(num, nil); err != nil || sp != numFinite {
			t.Fatalf("%q -> %q: not numeric text: %v", s, num, err)
		}
		// Print it back in the C locale's format and parse it again.
		again, err := parseMoney([]byte(cMoneyOut(string(num))), nil)
		if err != nil || !bytes.Equal(again, num) {
			t.Fatalf("%q -> %q -> %q -> %q, %v", s, num, cMoneyOut(string(num)), again, err)
		}
	})
}

// cMoneyOut prints plain numeric text as cash_out does in the C locale.
func cMoneyOut(num string) string {
	neg := strings.HasPrefix(num, "-")
	num = strings.TrimPrefix(num, "-")
	intPart, frac, hasFrac := strings.Cut(num, ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteByte('$')
	for i := range len(intPart) {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(intPart[i])
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return b.String()
}

func FuzzParseInterval(f *testing.F) {
	for _, s := range []string{"00:00:00", "1 year 2 mons 3 days 04:05:06.789", "-1 days +02:03:00",
		"-178000000 years", "1 day -00:00:01", "6 mons", "@ 1 year", "2562047788:00:54.775807", "infinity",
		"1-2", "P1Y", "-00:00:00.000001"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		m, d, us, err := parseInterval(s)
		if err != nil {
			return
		}
		_ = intervalMicroDuration(m, d, us)
		iso := string(appendISOInterval(nil, m, d, us))
		if !strings.HasPrefix(iso, "P") || !strings.HasSuffix(iso, "S") || !strings.Contains(iso, "DT") {
			t.Fatalf("%q -> %q", s, iso)
		}
		out := pgIntervalOut(m, d, us)
		m2, d2, us2, err := parseInterval([]byte(out))
		if err != nil || m2 != m || d2 != d || us2 != us {
			t.Fatalf("%q -> (%d, %d, %d) -> %q -> (%d, %d, %d), %v", s, m, d, us, out, m2, d2, us2, err)
		}
	})
}

func FuzzParseArray(f *testing.F) {
	for _, s := range []string{"{}", "{1,2,NULL}", `{"a b","c\"d",NULL,"NULL"}`, "[0:1]={1,2}", "{{1,2},{3,4}}",
		`{a\ }`, "{(2,2),(1,1);(4,4),(3,3)}", `{"",x}`, "{ 1 , 2 }", `{"\\"}`} {
		f.Add([]byte(s), byte(','))
	}
	f.Add([]byte("{(2,2),(1,1);(4,4),(3,3)}"), byte(';'))
	// PostGIS's geometry[]: typdelim ':' (issue 27).
	f.Add([]byte(`{010700000000000000:"0101:x",NULL}`), byte(':'))
	f.Add([]byte(`{a|"b|c"|\|}`), byte('|'))
	// Any delimiter: CREATE TYPE … DELIMITER takes any one character, so
	// the parser must hold up for every byte (never panic, never keep a
	// partial result on error). The round trip through array_out's form
	// is checked for the delimiters array_out can print unambiguously:
	// not a quote, backslash, brace or whitespace, which array_in reads
	// as syntax first, nor a letter of NULL, which it prints unquoted.
	f.Fuzz(func(t *testing.T, s []byte, delim byte) {
		elems, buf, err := parseArray(s, delim, []arrayElem{{Null: true}}, []byte("pre"))
		if err != nil {
			if len(elems) != 1 || string(buf) != "pre" {
				t.Fatalf("%q: buffers changed on error", s)
			}
			return
		}
		want := elemStrings(elems[1:])
		for _, e := range elems[1:] {
			if !e.Null && cap(e.Data) != len(e.Data) {
				t.Fatalf("%q: element %q not capped", s, e.Data)
			}
		}
		if !roundTripDelim(delim) {
			return
		}
		out := pgArrayOut(want, delim)
		again, _, err := parseArray([]byte(out), delim, nil, nil)
		if err != nil {
			t.Fatalf("%q -> %q -> %q: %v", s, want, out, err)
		}
		if got := elemStrings(again); len(got) != len(want) || strings.Join(got, "\x01") != strings.Join(want, "\x01") {
			t.Fatalf("%q -> %q -> %q -> %q", s, want, out, got)
		}
	})
}

func FuzzParseHstore(f *testing.F) {
	for _, s := range []string{"", `"a"=>"1"`, `"a"=>"1", "b"=>NULL, "c\"q"=>"x\\y"`, `""=>""`, `"NULL"=>"NULL"`,
		`a=>1`, `"a"=>"1",`, ` "a" => "1" ,"b"=>"2" `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		pairs, buf, err := parseHstore(s, []hstorePair{{}}, []byte("pre"))
		if err != nil {
			if len(pairs) != 1 || string(buf) != "pre" {
				t.Fatalf("%q: buffers changed on error", s)
			}
			return
		}
		want := pairStrings(pairs[1:])
		out := pgHstoreOut(want)
		again, _, err := parseHstore([]byte(out), nil, nil)
		if err != nil || !equalPairs(pairStrings(again), want) {
			t.Fatalf("%q -> %q -> %q -> %q, %v", s, want, out, pairStrings(again), err)
		}
		// Java's order is a permutation of the pairs.
		javaHashMapOrder(again)
		if len(again) != len(want) {
			t.Fatalf("%q: order lost pairs", s)
		}
	})
}

func FuzzParsePoint(f *testing.F) {
	for _, s := range []string{"(1.5,-2)", "(NaN,Infinity)", "(-Infinity,1e+100)", "(0,-0)", "(1e999,2)", "1,2",
		"(1,2,3)", "(4.9e-324,1.7976931348623157e+308)"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		x, y, err := parsePoint(s)
		if err != nil {
			return
		}
		// float8out with extra_float_digits > 0: shortest exact text.
		out := "(" + float8Out(x) + "," + float8Out(y) + ")"
		x2, y2, err := parsePoint([]byte(out))
		if err != nil || math.Float64bits(x2) != math.Float64bits(x) || math.Float64bits(y2) != math.Float64bits(y) {
			t.Fatalf("%q -> %v, %v -> %q -> %v, %v, %v", s, x, y, out, x2, y2, err)
		}
		if wkb := appendPointWKB(nil, x, y); len(wkb) != 21 {
			t.Fatalf("%q: WKB of %d bytes", s, len(wkb))
		}
	})
}

// float8Out prints a float8 as Postgres does with extra_float_digits > 0.
func float8Out(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func FuzzParseBits(f *testing.F) {
	for _, s := range []string{"11", "1000000", "00", "000000110000001000000001", "101", "", "2", "1 0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		got, err := parseBits(s, []byte("pre"))
		if err != nil {
			if string(got) != "pre" {
				t.Fatalf("%q: dst changed to %q on error", s, got)
			}
			return
		}
		b := got[3:]
		if len(b) > 0 && b[len(b)-1] == 0 {
			t.Fatalf("%q = % x: trailing zero byte", s, b)
		}
		// Read the bytes back as BitSet.valueOf does and print the number.
		var sb strings.Builder
		for i := len(b)*8 - 1; i >= 0; i-- {
			if b[i/8]>>(i%8)&1 == 1 {
				sb.WriteByte('1')
			} else if sb.Len() > 0 {
				sb.WriteByte('0')
			}
		}
		if want := strings.TrimLeft(string(s), "0"); sb.String() != want {
			t.Fatalf("%q = % x, reads back as %q", s, b, sb.String())
		}
	})
}

// FuzzRoundHalfUp: for any money text that parses, rounding to 0-20
// fractional digits gives the value math/big gets by rounding half away
// from zero (BigDecimal's HALF_UP), with exactly that many digits when it
// had more.
func FuzzRoundHalfUp(f *testing.F) {
	for _, s := range []string{"$123.46", "-$0.05", "($9.99)", "$92,233,720,368,547,758.07", "$0.00", "$1,234"} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, s []byte, scale uint8) {
		num, err := parseMoney(s, nil)
		if err != nil {
			return
		}
		sc := int(scale % 21)
		buf := []byte("junk")
		got := roundHalfUp(num, sc, &buf)
		in := mustRat(t, string(num))
		// Expected: sign(in) * floor(|in| * 10^sc + 1/2) / 10^sc.
		pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(sc)), nil)
		abs := new(big.Rat).Abs(in)
		scaled := new(big.Rat).Add(new(big.Rat).Mul(abs, new(big.Rat).SetInt(pow)), big.NewRat(1, 2))
		q := new(big.Int).Quo(scaled.Num(), scaled.Denom())
		want := new(big.Rat).SetFrac(q, pow)
		if in.Sign() < 0 {
			want.Neg(want)
		}
		if g := mustRat(t, string(got)); g.Cmp(want) != 0 {
			t.Fatalf("%q: roundHalfUp(%q, %d) = %q, want %s", s, num, sc, got, want.FloatString(sc))
		}
		_, frac, hasDot := strings.Cut(string(num), ".")
		if hasDot && len(frac) > sc {
			_, gfrac, _ := strings.Cut(string(got), ".")
			if len(gfrac) != sc || (len(got) > 0 && got[0] == '-' && want.Sign() == 0) {
				t.Fatalf("roundHalfUp(%q, %d) = %q: want %d fractional digits and no negative zero", num, sc, got, sc)
			}
		} else if string(got) != string(num) {
			t.Fatalf("roundHalfUp(%q, %d) = %q, want it unchanged", num, sc, got)
		}
	})
}

// FuzzAppendJavaGeometric: no input panics; a failed parse leaves dst as
// it was; what is accepted keeps the input's punctuation and rewrites
// each number into a Java double text that reads back as the same
// float64 (NaN as NaN).
func FuzzAppendJavaGeometric(f *testing.F) {
	oids := []uint32{oidBox, oidCircle, oidLine, oidLseg, oidPath, oidPolygon}
	for i, s := range []string{"(1,1),(0,0)", "<(10,20),10>", "{-1,0,0}", "[(0,0),(0,1)]", "[(0,0),(1.5,-2.25)]",
		"((0,0),(0,1),(1,0),(0,0))", "((1e+100,-1e-05),(NaN,Infinity))", "(-0,5e-324),(1,1)"} {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, k uint8, s []byte) {
		oid := oids[int(k)%len(oids)]
		got, err := appendJavaGeometric([]byte("pre"), oid, s)
		if err != nil {
			if string(got) != "pre" {
				t.Fatalf("%q: dst changed to %q on error", s, got)
			}
			return
		}
		out := got[3:]
		isPunct := func(c byte) bool { return strings.IndexByte("()[]{}<>,", c) >= 0 }
		split := func(b []byte) (punct string, nums []string) {
			var cur []byte
			for _, c := range b {
				if isPunct(c) {
					if cur != nil {
						nums = append(nums, string(cur))
						cur = nil
					}
					punct += string(c)
					continue
				}
				cur = append(cur, c)
			}
			return punct, nums
		}
		pIn, nIn := split(s)
		pOut, nOut := split(out)
		if pIn != pOut || len(nIn) != len(nOut) {
			t.Fatalf("%q -> %q: the shape changed", s, out)
		}
		for i := range nIn {
			a, _ := strconv.ParseFloat(nIn[i], 64)
			b, err := strconv.ParseFloat(strings.Replace(nOut[i], "E", "e", 1), 64)
			if err != nil || (a != b && !(math.IsNaN(a) && math.IsNaN(b))) || math.Signbit(a) != math.Signbit(b) {
				t.Fatalf("%q -> %q: %s became %s", s, out, nIn[i], nOut[i])
			}
		}
	})
}

// FuzzAppendJavaDouble: every float64 prints in Java's form (a '.' with a
// digit on each side, an exponent only outside [10^-3, 10^7)) and reads
// back as itself.
func FuzzAppendJavaDouble(f *testing.F) {
	for _, v := range []float64{0, 1, 0.001, 1e7, 5e-324, math.MaxFloat64, 123.456} {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		s := string(appendJavaDouble(nil, v))
		mant, exp, sci := strings.Cut(s, "E")
		abs := math.Abs(v)
		if sci != (abs != 0 && (abs < 1e-3 || abs >= 1e7)) {
			t.Fatalf("%v -> %q: notation", v, s)
		}
		ip, fp, ok := strings.Cut(strings.TrimPrefix(mant, "-"), ".")
		if !ok || ip == "" || fp == "" || (sci && len(ip) != 1) || (sci && exp == "") {
			t.Fatalf("%v -> %q: not Java's form", v, s)
		}
		back, err := strconv.ParseFloat(strings.Replace(s, "E", "e", 1), 64)
		if err != nil || math.Float64bits(back) != bits {
			t.Fatalf("%v -> %q -> %v, %v", v, s, back, err)
		}
	})
}

// roundTripDelim reports whether array_out's text with delimiter d reads
// back unambiguously (see FuzzParseArray).
func roundTripDelim(d byte) bool {
	switch d {
	case '"', '\\', '{', '}', 'n', 'N', 'u', 'U', 'l', 'L':
		return false
	}
	return !arrayIsSpace(d)
}
