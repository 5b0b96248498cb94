package schema

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// escapeCopy appends s to dst the way Postgres' CopyAttributeOutText writes
// a value in COPY TEXT format with the default tab delimiter: \b \f \n \r
// \t \v become C-like escapes, a backslash is doubled, and every other byte,
// other control characters included, is written as is.
func escapeCopy(dst, s []byte) []byte {
	for _, c := range s {
		switch c {
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\v':
			dst = append(dst, '\\', 'v')
		case '\\':
			dst = append(dst, '\\', '\\')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// copyRow writes row as Postgres' COPY TO does in TEXT format: values
// escaped, NULL as \N, tab-separated, ending in "\n".
func copyRow(row Tuple) []byte {
	var b []byte
	for i, v := range row {
		if i > 0 {
			b = append(b, '\t')
		}
		if v.Kind == ValueNull {
			b = append(b, `\N`...)
		} else {
			b = escapeCopy(b, v.Data)
		}
	}
	return append(b, '\n')
}

// refParseCopyRow is a byte-at-a-time reference for ParseCopyRow (any
// column count), written for clarity, not speed.
func refParseCopyRow(line []byte) (Tuple, bool) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	var row Tuple
	cur, start, sawN := []byte{}, 0, false
	finish := func(end int) bool {
		switch {
		case string(line[start:end]) == `\N`:
			row = append(row, null)
		case sawN:
			return false
		default:
			row = append(row, Value{Kind: ValueText, Data: cur})
		}
		cur, start, sawN = []byte{}, end+1, false
		return true
	}
	isOct := func(c byte) bool { return c >= '0' && c <= '7' }
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\t' {
			if !finish(i) {
				return nil, false
			}
			continue
		}
		if c != '\\' {
			cur = append(cur, c)
			continue
		}
		i++
		if i == len(line) {
			return nil, false
		}
		c = line[i]
		switch {
		case strings.IndexByte("bfnrtv", c) >= 0:
			cur = append(cur, "\b\f\n\r\t\v"[strings.IndexByte("bfnrtv", c)])
		case c == 'N':
			sawN = true
		case isOct(c):
			v := int(c - '0')
			for k := 0; k < 2 && i+1 < len(line) && isOct(line[i+1]); k++ {
				i++
				v = v*8 + int(line[i]-'0')
			}
			if v > 255 {
				return nil, false
			}
			cur = append(cur, byte(v))
		case c == 'x':
			hexval := func(c byte) int {
				if c >= 'A' && c <= 'F' {
					c += 'a' - 'A'
				}
				return strings.IndexByte("0123456789abcdef", c)
			}
			if i+1 == len(line) || hexval(line[i+1]) < 0 {
				return nil, false
			}
			i++
			v := hexval(line[i])
			if i+1 < len(line) && hexval(line[i+1]) >= 0 {
				i++
				v = v*16 + hexval(line[i])
			}
			cur = append(cur, byte(v))
		default:
			cur = append(cur, c)
		}
	}
	if !finish(len(line)) {
		return nil, false
	}
	return row, true
}

func equalTuples(a, b Tuple) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Kind != b[i].Kind || !bytes.Equal(a[i].Data, b[i].Data) {
			return false
		}
	}
	return true
}

// aliases reports whether the non-empty sub starts inside whole[:len(whole)].
func aliases(sub, whole []byte) bool {
	if len(sub) == 0 {
		return false
	}
	for i := range whole {
		if &whole[i] == &sub[0] {
			return i+len(sub) <= len(whole)
		}
	}
	return false
}

func TestParseCopyRow(t *testing.T) {
	tests := []struct {
		name string
		line string
		want int
		row  Tuple
	}{
		{"plain", "42\tAlice\t12.50\tt\n", 4, Tuple{text("42"), text("Alice"), text("12.50"), text("t")}},
		{"no newline", "42\tAlice", 2, Tuple{text("42"), text("Alice")}},
		{"any column count", "1\t2\t3\n", -1, Tuple{text("1"), text("2"), text("3")}},
		{"nulls", "\\N\t2\t\\N\n", 3, Tuple{null, text("2"), null}},
		{"only null", "\\N\n", 1, Tuple{null}},
		{"empty vs null", "\t\\N\t\n", 3, Tuple{text(""), null, text("")}},
		{"empty line", "\n", 1, Tuple{text("")}},
		{"empty line any count", "", -1, Tuple{text("")}},
		{"no columns", "\n", 0, Tuple{}},
		{"no columns no newline", "", 0, Tuple{}},
		{"escaped backslash N is text", `\\N` + "\t" + `a\\N`, 2, Tuple{text(`\N`), text(`a\N`)}},
		{"every C escape", `\b\f\n\r\t\v\\`, 1, Tuple{text("\b\f\n\r\t\v\\")}},
		{"octal", `\101\0\7\12x\1011\377\0101`, 1, Tuple{text("A\x00\x07\nxA1\xff\b1")}},
		{"octal stops at 3 digits and at non-octal", `\1234\18\9`, 1, Tuple{text("S4\x018" + "9")}},
		{"hex", `\x41\x4a\xa\xfF\x4g\x004`, 1, Tuple{text("AJ\n\xff\x04g\x004")}},
		{"other characters stand for themselves", `\a\q\.\ \"\'\z`, 1, Tuple{text(`aq. "'z`)}},
		{"backslash before a multibyte character", `\é\😀`, 1, Tuple{text("é😀")}},
		{"backslash before a raw tab", "a\\\tb\tc", 2, Tuple{text("a\tb"), text("c")}},
		{"backslash before raw tabs twice", "\\\t\\\t\t\\\t", 2, Tuple{text("\t\t"), text("\t")}},
		{"backslash before a raw newline", "a\\\nb\n", 1, Tuple{text("a\nb")}},
		{"raw CR and control bytes are data", "a\rb\x01\tc\r\n", 2, Tuple{text("a\rb\x01"), text("c\r")}},
		{"tabs and newlines inside values", `line1\nline2\r\n` + "\t" + `col\twith\ttabs` + "\n", 2,
			Tuple{text("line1\nline2\r\n"), text("col\twith\ttabs")}},
		{"unicode", "héllo 😀\t日本語\t\\t😀\\n\n", 3, Tuple{text("héllo 😀"), text("日本語"), text("\t😀\n")}},
		{"bytea hex output", `\\x0a0bff` + "\t" + `\\x`, 2, Tuple{text(`\x0a0bff`), text(`\x`)}},
		{"json with escapes", `{"a": "x\\ny", "b": "q\\"t"}`, 1, Tuple{text(`{"a": "x\ny", "b": "q\"t"}`)}},
		{"array", `{"a b","c\\"d",NULL}`, 1, Tuple{text(`{"a b","c\"d",NULL}`)}},
		{"escape at field start and end", `\\a\\` + "\t" + `\tb\t`, 2, Tuple{text(`\a\`), text("\tb\t")}},
		{"mixed plain and escaped columns", "1\t\\N\ta\\tb\t\tplain\t\\\\\n", 6,
			Tuple{text("1"), null, text("a\tb"), text(""), text("plain"), text(`\`)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line := []byte(tc.line)
			buf := []byte("prefix")
			got, buf, err := ParseCopyRow(line, tc.want, nil, buf)
			if err != nil {
				t.Fatalf("ParseCopyRow(%q): %v", tc.line, err)
			}
			if !equalTuples(got, tc.row) {
				t.Fatalf("ParseCopyRow(%q) = %q, want %q", tc.line, got, tc.row)
			}
			if string(buf[:6]) != "prefix" {
				t.Errorf("buf prefix overwritten: %q", buf)
			}
			checkDataPlacement(t, line, got, buf)
			if ref, ok := refParseCopyRow(line); tc.want != 0 && (!ok || !equalTuples(ref, got)) {
				t.Errorf("reference parser: %q, %v", ref, ok)
			}
		})
	}
}

// checkDataPlacement checks where each Data points: a field without a
// backslash into line, an escaped one into buf, and none with spare
// capacity that an append could use to overwrite its neighbour.
func checkDataPlacement(t *testing.T, line []byte, row Tuple, buf []byte) {
	t.Helper()
	for i, v := range row {
		if cap(v.Data) != len(v.Data) {
			t.Errorf("column %d: cap %d > len %d", i, cap(v.Data), len(v.Data))
		}
		if len(v.Data) == 0 {
			continue
		}
		inLine, inBuf := aliases(v.Data, line), aliases(v.Data, buf)
		if !inLine && !inBuf {
			t.Errorf("column %d (%q) points neither into line nor into buf", i, v.Data)
		}
	}
}

func TestParseCopyRowAliasing(t *testing.T) {
	line := []byte("plain\tesc\\taped\n")
	got, buf, err := ParseCopyRow(line, 2, make(Tuple, 0, 2), make([]byte, 0, 64))
	if err != nil {
		t.Fatal(err)
	}
	if !aliases(got[0].Data, line) {
		t.Error("plain column was copied, want it to alias line")
	}
	if !aliases(got[1].Data, buf) {
		t.Error("escaped column does not point into the returned buf")
	}
	// Appending to one Data must not overwrite the next column.
	_ = append(got[0].Data, "XXXX"...)
	if string(line) != "plain\tesc\\taped\n" {
		t.Errorf("append to Data overwrote line: %q", line)
	}
}

// TestParseCopyRowBufGrowth parses wide rows with escapes in many columns
// into an empty buf and into one that is too small, so buf has to grow,
// and checks every Data afterwards and that all of them point into the
// returned buf.
func TestParseCopyRowBufGrowth(t *testing.T) {
	for _, initial := range [][]byte{nil, make([]byte, 0, 8), []byte("keep me")} {
		var want Tuple
		for i := range 40 {
			switch i % 4 {
			case 0:
				want = append(want, text(strings.Repeat("x", i*10)+"\n\t\\"+strings.Repeat("é", i)))
			case 1:
				want = append(want, text("plain"+strings.Repeat("p", i)))
			case 2:
				want = append(want, null)
			case 3:
				want = append(want, text("\b"+strings.Repeat("\\", i)))
			}
		}
		line := copyRow(want)
		prefix := string(initial)
		dst := make(Tuple, 0, 1) // dst must grow too
		got, buf, err := ParseCopyRow(line, len(want), dst, initial)
		if err != nil {
			t.Fatal(err)
		}
		if !equalTuples(got, want) {
			t.Fatalf("got %q\nwant %q", got, want)
		}
		if string(buf[:len(prefix)]) != prefix {
			t.Errorf("buf prefix %q overwritten: %q", prefix, buf[:len(prefix)])
		}
		for i, v := range got {
			escaped := v.Kind == ValueText && bytes.ContainsAny(v.Data, "\b\n\t\\")
			if escaped && !aliases(v.Data, buf[len(prefix):]) {
				t.Errorf("column %d does not point into the returned buf", i)
			}
			if !escaped && len(v.Data) > 0 && !aliases(v.Data, line) {
				t.Errorf("column %d does not alias line", i)
			}
		}
		checkDataPlacement(t, line, got, buf)

		// Reusing the returned buffers: the second row's data is right too.
		got, buf2, err := ParseCopyRow([]byte("a\\tb\t\\N\n"), 2, got, buf[:0])
		if err != nil || !equalTuples(got, Tuple{text("a\tb"), null}) {
			t.Fatalf("reuse: %q, %v", got, err)
		}
		if !aliases(got[0].Data, buf2) || &buf2[:1][0] != &buf[:1][0] {
			t.Error("reuse did not reuse buf")
		}
	}
}

func TestParseCopyRowErrors(t *testing.T) {
	tests := []struct {
		name string
		line string
		want int
		err  error
	}{
		{"too many columns", "1\t2\t3\n", 2, errCopyColumns},
		{"too few columns", "1\t2\n", 3, errCopyColumns},
		{"a column where none are wanted", "a\n", 0, errCopyColumns},
		{"tab where none are wanted", "\t\n", 0, errCopyColumns},
		{"empty line, two wanted", "\n", 2, errCopyColumns},
		{"too many columns, escaped", "a\\tb\tc\\td\n", 1, errCopyColumns},
		{"lone backslash", `a\`, 1, errCopyBackslash},
		{"lone backslash before newline", "a\\\n", 1, errCopyBackslash},
		{"lone backslash only", `\`, -1, errCopyBackslash},
		{"lone backslash after escapes", `\\\\\`, -1, errCopyBackslash},
		{"lone backslash in last column", "a\t\\t\\", -1, errCopyBackslash},
		{"N after value", `x\N`, 1, errCopyNull},
		{"N before value", `\Nx`, 1, errCopyNull},
		{"N twice", `\N\N`, 1, errCopyNull},
		{"N with escaped tab", "\\N\\\t", 1, errCopyNull},
		{"N in second column", "a\t\\N \tb", 3, errCopyNull},
		{"octal above 377", `\400`, 1, errCopyOctal},
		{"octal 777", `ab\777cd`, 1, errCopyOctal},
		{"hex without digits at end", `\x`, 1, errCopyHex},
		{"hex without digits", `\xg1`, 1, errCopyHex},
		{"hex before tab", "\\x\tb", 2, errCopyHex},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buf := make([]byte, 3, 4)
			copy(buf, "abc")
			dst := make(Tuple, 0, 8)
			got, gotBuf, err := ParseCopyRow([]byte(tc.line), tc.want, dst, buf)
			if !errors.Is(err, tc.err) {
				t.Fatalf("ParseCopyRow(%q, %d) = %q, %v; want %v", tc.line, tc.want, got, err, tc.err)
			}
			if len(got) != 0 || cap(got) != cap(dst) {
				t.Errorf("on error got len %d cap %d, want dst[:0]", len(got), cap(got))
			}
			if string(gotBuf) != "abc" {
				t.Errorf("on error buf = %q, want its original contents", gotBuf)
			}
			if tc.want < 0 {
				if ref, ok := refParseCopyRow([]byte(tc.line)); ok {
					t.Errorf("reference parser accepts it: %q", ref)
				}
			}
		})
	}
}

func TestParseCopyRowZeroAllocs(t *testing.T) {
	line := []byte("42\tAlice\t\\N\t{\"a\": \"x\\\\ny\"}\tline1\\nline2\t\\\\x0a0b\t2024-01-02 03:04:05+00\n")
	dst, buf := make(Tuple, 0, 16), make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if dst, buf, err = ParseCopyRow(line, 7, dst[:0], buf[:0]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("ParseCopyRow allocates %.1f times per row, want 0", allocs)
	}
}

func FuzzParseCopyRow(f *testing.F) {
	f.Add([]byte("42\tAlice\t\\N\n"), []byte("a\x00b\tc\x00\\N"), uint16(2))
	f.Add([]byte(`\b\f\n\r\t\v\\\101\x4a\q`), []byte("\b\f\n\r\t\v\\"), uint16(0))
	f.Add([]byte("a\\\tb\t\\N\\"), []byte("\x00\x00"), uint16(5))
	f.Add([]byte("héllo\t\\é\\x\\400"), []byte("héllo 😀\x00日本語"), uint16(1))
	f.Add([]byte(""), []byte(""), uint16(1))
	f.Fuzz(func(t *testing.T, line, cols []byte, nulls uint16) {
		// Any line: no panic; on error nothing is handed out and buf keeps
		// its contents; what is accepted agrees with the reference parser
		// and survives being written out again the way Postgres would.
		orig := string(line)
		got, buf, err := ParseCopyRow(line, -1, nil, []byte("keep"))
		if string(line) != orig {
			t.Fatalf("line modified: %q -> %q", orig, line)
		}
		ref, refOK := refParseCopyRow(line)
		if err != nil {
			if len(got) != 0 || string(buf) != "keep" {
				t.Fatalf("%q: error %v with row %q, buf %q", line, err, got, buf)
			}
			if refOK {
				t.Fatalf("%q: %v, reference parser accepts it: %q", line, err, ref)
			}
		} else {
			if string(buf[:4]) != "keep" {
				t.Fatalf("%q: buf prefix overwritten: %q", line, buf)
			}
			if !refOK || !equalTuples(got, ref) {
				t.Fatalf("%q: got %q, reference parser %q (ok %v)", line, got, ref, refOK)
			}
			checkDataPlacement(t, line, got, buf)
			again, _, err := ParseCopyRow(copyRow(got), len(got), nil, nil)
			if err != nil || !equalTuples(again, got) {
				t.Fatalf("%q -> %q -> %q -> %q, %v", line, got, copyRow(got), again, err)
			}
		}

		// Values -> COPY row -> values. Postgres text cannot hold a NUL
		// byte, so NUL separates the values; nulls marks NULL columns.
		var row Tuple
		for i, v := range bytes.Split(cols, []byte{0}) {
			if i < 16 && nulls&(1<<i) != 0 {
				row = append(row, null)
			} else {
				row = append(row, Value{Kind: ValueText, Data: v})
			}
		}
		enc := copyRow(row)
		for _, l := range [][]byte{enc, enc[:len(enc)-1]} {
			back, _, err := ParseCopyRow(l, len(row), nil, nil)
			if err != nil || !equalTuples(back, row) {
				t.Fatalf("%q -> %q -> %q, %v", row, l, back, err)
			}
		}
	})
}

// BenchmarkParseCopyRow parses snapshot rows, reusing dst and buf as the
// snapshot reader does.
func BenchmarkParseCopyRow(b *testing.B) {
	rows := []struct {
		name string
		line string
		cols int
	}{
		// public.customers: int8, text, numeric, timestamptz, bool, jsonb.
		{"plain", "42\tAlice Smith\t1234.56\t2024-01-02 03:04:05.123456+00\tt\t{\"tier\": \"gold\", \"tags\": [\"a\", \"b\"]}\n", 6},
		{"nulls", "42\t\\N\t\\N\t\\N\tf\t\\N\n", 6},
		{"escaped", "42\tAlice\\tSmith\t1234.56\t2024-01-02 03:04:05.123456+00\tt\t{\"note\": \"line1\\\\nline2\", \"q\": \"\\\\\"x\\\\\"\"}\n", 6},
		{"wide", strings.Repeat("some text value\t12345\t\\N\t", 16) + "end\n", 49},
	}
	for _, r := range rows {
		b.Run(r.name, func(b *testing.B) {
			line := []byte(r.line)
			dst, buf := make(Tuple, 0, r.cols), make([]byte, 0, 1024)
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if dst, buf, err = ParseCopyRow(line, r.cols, dst[:0], buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
