package schema

import (
	"errors"
	"strings"
	"testing"
)

// pgHstoreOut prints pairs the way hstore_out does; a value equal to the
// test constant nullElem is NULL.
func pgHstoreOut(kv [][2]string) string {
	var b strings.Builder
	quote := func(s string) {
		b.WriteByte('"')
		for i := 0; i < len(s); i++ {
			if s[i] == '"' || s[i] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(s[i])
		}
		b.WriteByte('"')
	}
	for i, p := range kv {
		if i > 0 {
			b.WriteString(", ")
		}
		quote(p[0])
		b.WriteString("=>")
		if p[1] == nullElem {
			b.WriteString("NULL")
		} else {
			quote(p[1])
		}
	}
	return b.String()
}

func pairStrings(pairs []hstorePair) [][2]string {
	out := make([][2]string, len(pairs))
	for i, p := range pairs {
		out[i][0] = string(p.Key)
		if p.Null {
			out[i][1] = nullElem
		} else {
			out[i][1] = string(p.Value)
		}
	}
	return out
}

func equalPairs(a, b [][2]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseHstore(t *testing.T) {
	tests := []struct {
		in   string
		want [][2]string
	}{
		{"", nil},
		{"  ", nil},
		{`"a"=>"1"`, [][2]string{{"a", "1"}}},
		{`"a"=>"1", "b"=>NULL, "c\"q"=>"x\\y"`, [][2]string{{"a", "1"}, {"b", nullElem}, {`c"q`, `x\y`}}},
		{` "a" => "1" ,"b"=>"2" `, [][2]string{{"a", "1"}, {"b", "2"}}},
		{`"NULL"=>"NULL"`, [][2]string{{"NULL", "NULL"}}},
		{`""=>""`, [][2]string{{"", ""}}},
		{`"a"=>null`, [][2]string{{"a", nullElem}}},
		{`"k, =>"=>"v\"=>\""`, [][2]string{{"k, =>", `v"=>"`}}},
		{`"é"=>"日本"`, [][2]string{{"é", "日本"}}},
	}
	for _, tc := range tests {
		pairs, buf, err := parseHstore([]byte(tc.in), []hstorePair{{Key: []byte("old")}}, []byte("pre"))
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if string(pairs[0].Key) != "old" || string(buf[:3]) != "pre" {
			t.Errorf("%q: existing content lost", tc.in)
		}
		if got := pairStrings(pairs[1:]); !equalPairs(got, tc.want) {
			t.Errorf("%q = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseHstoreErrors(t *testing.T) {
	for _, in := range []string{`a=>1`, `"a"=>`, `"a"`, `"a"=>"1",`, `"a"=>"1", `, `"a"=>"1" "b"=>"2"`, `"a=>"1"`,
		`"a"=>"1\"`, `"a"->"1"`, `"a"=>NULLx`, `"a"=>NUL`, `"a"=>1`, `,`, `"a"=>"1",,"b"=>"2"`, `"a"="1"`, `"a\`} {
		pairs, buf, err := parseHstore([]byte(in), []hstorePair{{}}, []byte("pre"))
		if !errors.Is(err, errSyntax) {
			t.Errorf("%q: err %v, want errSyntax", in, err)
		}
		if len(pairs) != 1 || string(buf) != "pre" {
			t.Errorf("%q: failed parse left %d pairs, buf %q", in, len(pairs), buf)
		}
	}
}

func TestJavaStringHash(t *testing.T) {
	for s, want := range map[string]int32{
		"": 0, "a": 97, "abc": 96354, "hello": 99162322, "Aa": 2112, "BB": 2112, "é": 233,
		"😀": 31*0xD83D + 0xDE00, "polygenelubricants": math32MinValue,
	} {
		if got := javaStringHash([]byte(s)); got != want {
			t.Errorf("%q = %d, want %d", s, got, want)
		}
	}
}

// math32MinValue: "polygenelubricants".hashCode() is Integer.MIN_VALUE, a
// well-known Java curiosity.
const math32MinValue = -1 << 31

func TestJavaHashMapOrder(t *testing.T) {
	// With 16 buckets: "a" -> 1, "abc" -> 3, "hello" -> 11; "Aa" and "BB"
	// collide (bucket 2112^0 & 15 = 0) and keep their insertion order.
	pairs := []hstorePair{{Key: []byte("hello")}, {Key: []byte("BB")}, {Key: []byte("abc")}, {Key: []byte("a")}, {Key: []byte("Aa")}}
	javaHashMapOrder(pairs)
	var got []string
	for _, p := range pairs {
		got = append(got, string(p.Key))
	}
	if want := "BB Aa a abc hello"; strings.Join(got, " ") != want {
		t.Errorf("order %q, want %q", got, want)
	}
	// 13 keys resize the table to 32 buckets: "a" (97 = 0b1100001) moves
	// from bucket 1 to bucket 1, "q" (113) from 1 to 17.
	var many []hstorePair
	for _, k := range []string{"q", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		many = append(many, hstorePair{Key: []byte(k)})
	}
	javaHashMapOrder(many)
	got = got[:0]
	for _, p := range many {
		got = append(got, string(p.Key))
	}
	if want := "a b c d e f g h i j k l q"; strings.Join(got, " ") != want {
		t.Errorf("order %q, want %q", got, want)
	}
}

func TestHstoreNoAllocs(t *testing.T) {
	in := []byte(`"a"=>"1", "b"=>NULL, "c\"q"=>"x\\y"`)
	pairs := make([]hstorePair, 0, 8)
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if pairs, buf, err = parseHstore(in, pairs[:0], buf[:0]); err != nil {
			t.Fatal(err)
		}
		javaHashMapOrder(pairs)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run", allocs)
	}
}
