package schema

import (
	"errors"
	"strings"
	"testing"
)

// nullElem marks a NULL element in the tests' expectations.
const nullElem = "\x00NULL"

// pgArrayOut prints a one-dimensional array the way array_out does:
// elements are double-quoted when empty, equal to NULL in any case, or
// holding the delimiter, a brace, a quote, a backslash or whitespace,
// and inside quotes '"' and '\' are backslash-escaped.
func pgArrayOut(elems []string, delim byte) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(delim)
		}
		if e == nullElem {
			b.WriteString("NULL")
			continue
		}
		quote := e == "" || isNullWord([]byte(e))
		for j := 0; j < len(e); j++ {
			c := e[j]
			if c == delim || c == '{' || c == '}' || c == '"' || c == '\\' || arrayIsSpace(c) {
				quote = true
			}
		}
		if !quote {
			b.WriteString(e)
			continue
		}
		b.WriteByte('"')
		for j := 0; j < len(e); j++ {
			if e[j] == '"' || e[j] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(e[j])
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

func elemStrings(elems []arrayElem) []string {
	out := make([]string, len(elems))
	for i, e := range elems {
		if e.Null {
			out[i] = nullElem
		} else {
			out[i] = string(e.Data)
		}
	}
	return out
}

func TestParseArray(t *testing.T) {
	tests := []struct {
		in    string
		delim byte
		want  []string
	}{
		{"{}", ',', []string{}},
		{" { } ", ',', []string{}},
		{"{1,2,NULL}", ',', []string{"1", "2", nullElem}},
		{`{"a b","c\"d",NULL,"NULL"}`, ',', []string{"a b", `c"d`, nullElem, "NULL"}},
		{`{"",x}`, ',', []string{"", "x"}},
		{`{"\\"}`, ',', []string{`\`}},
		{`{"a,b","{c}"}`, ',', []string{"a,b", "{c}"}},
		{"[0:1]={1,2}", ',', []string{"1", "2"}},
		{"[-3:-3]={x}", ',', []string{"x"}},
		{"[2]={a,b}", ',', []string{"a", "b"}},
		{"{(2,2),(1,1);(4,4),(3,3)}", ';', []string{"(2,2),(1,1)", "(4,4),(3,3)"}},
		{"{ 1 , 2 }", ',', []string{"1", "2"}},
		{`{ "a" , b c }`, ',', []string{"a", "b c"}},
		{`{a\ }`, ',', []string{"a "}},
		{`{a\,b}`, ',', []string{"a,b"}},
		{`{\N\U\L\L}`, ',', []string{"NULL"}},
		{"{null,Null,nULL}", ',', []string{nullElem, nullElem, nullElem}},
		{"{NULLx,xNULL}", ',', []string{"NULLx", "xNULL"}},
		{"{2016-11-04 13:51:30+00}", ',', []string{"2016-11-04 13:51:30+00"}},
		{`{"2016-11-04 13:51:30+00","a\\b"}`, ',', []string{"2016-11-04 13:51:30+00", `a\b`}},
		{"{a;b,c}", ';', []string{"a", "b,c"}},
		{"{é,日本}", ',', []string{"é", "日本"}},
	}
	for _, tc := range tests {
		prefix := []byte("pre")
		elems, buf, err := parseArray([]byte(tc.in), tc.delim, []arrayElem{{Data: []byte("old")}}, prefix)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if string(elems[0].Data) != "old" || string(buf[:3]) != "pre" {
			t.Errorf("%q: existing content lost", tc.in)
		}
		if got := elemStrings(elems[1:]); strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("%q = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestParseArrayByTypdelim: the element type's typdelim splits the
// elements, and only it: ':' (PostGIS's geometry and geography,
// postgis--3.3.2.sql:203, :6421, CREATE TYPE … delimiter = ':') and ';' (box, pg_type.dat),
// with quoted elements holding the delimiter, a brace or a comma.
func TestParseArrayByTypdelim(t *testing.T) {
	tests := []struct {
		in    string
		delim byte
		want  []string
	}{
		{"{0107:0103}", ':', []string{"0107", "0103"}},
		{"{0107,0103}", ':', []string{"0107,0103"}},
		{`{"a:b":c}`, ':', []string{"a:b", "c"}},
		{`{"a:b":"c,d"}`, ':', []string{"a:b", "c,d"}},
		{`{NULL:"x:y":z\:w}`, ':', []string{nullElem, "x:y", "z:w"}},
		{`{ a : b }`, ':', []string{"a", "b"}},
		{"{(1,1),(0,0);(2,2),(1,1)}", ';', []string{"(1,1),(0,0)", "(2,2),(1,1)"}},
		{`{"(1,1);(0,0)";x}`, ';', []string{"(1,1);(0,0)", "x"}},
		{`{"{";"}"}`, ';', []string{"{", "}"}},
		{`{a,b;c\;d}`, ';', []string{"a,b", "c;d"}},
	}
	for _, tc := range tests {
		elems, _, err := parseArray([]byte(tc.in), tc.delim, nil, nil)
		if err != nil {
			t.Errorf("%q delim %q: %v", tc.in, tc.delim, err)
			continue
		}
		if got := elemStrings(elems); strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("%q delim %q = %q, want %q", tc.in, tc.delim, got, tc.want)
		}
		// What array_out prints for these elements parses back to them.
		if again, _, err := parseArray([]byte(pgArrayOut(tc.want, tc.delim)), tc.delim, nil, nil); err != nil ||
			strings.Join(elemStrings(again), "|") != strings.Join(tc.want, "|") {
			t.Errorf("%q: array_out's form %q parses to %q, %v", tc.want, pgArrayOut(tc.want, tc.delim), elemStrings(again), err)
		}
	}
	// With the wrong delimiter the same text is one element: what a
	// geometry[] became when ',' was assumed (issue 27).
	elems, _, err := parseArray([]byte("{0107:0103}"), ',', nil, nil)
	if err != nil || len(elems) != 1 {
		t.Errorf("{0107:0103} split by ',': %q %v, want one element", elemStrings(elems), err)
	}
}

func TestParseArrayErrors(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"", errSyntax},
		{"{", errSyntax},
		{"{1", errSyntax},
		{"{1,}", errSyntax},
		{"{,1}", errSyntax},
		{"{1,,2}", errSyntax},
		{"1,2", errSyntax},
		{"{1}x", errSyntax},
		{"{1} {2}", errSyntax},
		{`{"a}`, errSyntax},
		{`{"a\}`, errSyntax},
		{`{a"b}`, errSyntax},
		{`{"a"b}`, errSyntax},
		{`{a\`, errSyntax},
		{"{a{b}", errSyntax},
		{"[0:2]={1,2}", errSyntax},
		{"[0:1]{1,2}", errSyntax},
		{"[0:1={1,2}", errSyntax},
		{"[a:b]={1}", errSyntax},
		{"[5:3]={}", errSyntax},
		{"[1:2][1:2]={{1,2},{3,4}}", errMultiDimArray},
		{"{{1,2},{3,4}}", errMultiDimArray},
		{"{{}}", errMultiDimArray},
		{"{1,{2}}", errMultiDimArray},
	}
	for _, tc := range tests {
		elems, buf, err := parseArray([]byte(tc.in), ',', []arrayElem{{Null: true}}, []byte("pre"))
		if !errors.Is(err, tc.want) {
			t.Errorf("%q: err %v, want %v", tc.in, err, tc.want)
		}
		if len(elems) != 1 || string(buf) != "pre" {
			t.Errorf("%q: failed parse left %d elems, buf %q", tc.in, len(elems), buf)
		}
	}
}

func TestParseArrayRoundTrip(t *testing.T) {
	cases := [][]string{
		{}, {""}, {nullElem}, {"NULL", "null", nullElem}, {" lead", "trail ", "in side"}, {`a"b\c`, "{x}", "a,b"},
		{"\t\n", "é", "(1,2)"}, {"x;y", "p,q"},
	}
	for _, delim := range []byte{',', ';'} {
		for _, want := range cases {
			text := pgArrayOut(want, delim)
			elems, _, err := parseArray([]byte(text), delim, nil, nil)
			if err != nil {
				t.Errorf("%q: %v", text, err)
				continue
			}
			if got := elemStrings(elems); strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
				t.Errorf("%q = %q, want %q", text, got, want)
			}
		}
	}
}

func TestParseArrayDataIsCapped(t *testing.T) {
	elems, _, err := parseArray([]byte("{ab,cd}"), ',', nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(elems[0].Data, 'X')
	if string(elems[1].Data) != "cd" {
		t.Fatalf("appending to one element changed the next: %q", elems[1].Data)
	}
}

func TestArrayNoAllocs(t *testing.T) {
	in := []byte(`{"a b","c\"d",NULL,"NULL",plain,42}`)
	elems := make([]arrayElem, 0, 8)
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if elems, buf, err = parseArray(in, ',', elems[:0], buf[:0]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run", allocs)
	}
}
