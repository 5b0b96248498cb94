package schema

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

// Column shapes used below. Debezium's tests use a VARCHAR column without
// a length (MaskStringsTest.java:22, ColumnMappersTest.java:38).
var (
	textCol      = Column{Name: "c", TypeOID: oidText, TypeMod: -1}
	varchar20Col = Column{Name: "bb", TypeOID: oidVarchar, TypeMod: 20 + 4}
	varchar255   = Column{Name: "bb", TypeOID: oidVarchar, TypeMod: 255 + 4}
	int4Col      = Column{Name: "n", TypeOID: oidInt4, TypeMod: -1}
	byteaCol     = Column{Name: "b", TypeOID: oidBytea, TypeMod: -1}
	stringSchema = &Schema{Type: TypeString}
)

func applyString(t *testing.T, r ColumnRewrite, c Column, in string, null bool) (string, bool) {
	t.Helper()
	if err := r.Validate(); err != nil {
		t.Fatalf("Validate(%+v): %v", r, err)
	}
	b := r.Bind(c, stringSchema)
	out, isNull := b.Apply([]byte("prefix:"), []byte(in), null)
	if !bytes.HasPrefix(out, []byte("prefix:")) {
		t.Fatalf("Apply did not append to dst: %q", out)
	}
	return string(out[len("prefix:"):]), isNull
}

func TestHashEqualsDebeziumTestVectors(t *testing.T) {
	tests := []struct {
		name    string
		alg     string
		salt    string
		version int
		col     Column
		in      string
		want    string
	}{
		// MaskStringsTest.java:41-45
		{"v1 sha256 hello", "SHA-256", "salt", 1, textCol, "hello", "af5843a0f0e728ab0332c8888b6e1190bfb79e584f0d40538de8f10df6ef29c6"},
		{"v1 sha256 world", "SHA-256", "salt", 1, textCol, "world", "4588e1f2dcdc7fefc1515d3acd5acb9033478eace68286f383c337b9ff4464a3"},
		// MaskStringsTest.java:50-52
		{"v1 md5 hello", "MD5", "salt", 1, textCol, "hello", "46f48a7a5ea32efba87cbff49d46d35a"},
		{"v1 md5 world", "MD5", "salt", 1, textCol, "world", "030f632140d9c9591b0d8c21098024b8"},
		// MaskStringsTest.java:57-60
		{"v2 sha256 hello", "SHA-256", "salt", 2, textCol, "hello", "cd31b3b98ece60cb739c0bf770b2de892ae0ad133f645513c3d83f08757a843a"},
		{"v2 sha256 world", "SHA-256", "salt", 2, textCol, "world", "e84ac3142870113ddc6710c06f76421befc8e8ca6de64e98d2993ed8d41f4085"},
		// MaskStringsTest.java:66-68
		{"v2 md5 hello", "MD5", "salt", 2, textCol, "hello", "06decc8b095724f80103712c235586be"},
		{"v2 md5 world", "MD5", "salt", 2, textCol, "world", "172c8e95398cc72ab5358ead6981e7e5"},
		// ColumnMappersTest.java:146-155 and :162-171
		{"v1 salt123", "SHA-256", "salt123", 1, textCol, "12345678901234567890", "5944c66655670e4ce234df8529d452ba1cae10a641b9cd1583abf62585b8515a"},
		{"v2 salt123", "SHA-256", "salt123", 2, textCol, "12345678901234567890", "b65875d34a3dedf070f3a012970bf3b5da424560d7be3d2c23b986b525d2d7f3"},
		// PostgresConnectorIT.java:2591-2593 (s2.a.bb is varchar(20),
		// PostgresConnectorIT.java:129): the hex is cut to the column
		// length, :2625 and :2642; s2.b.bb is varchar(255), :2662.
		{"pg varchar(20) test", "SHA-256", "CzQMA0cB5K", 1, varchar20Col, "test", "8e68c68edbbac316dfe2"},
		{"pg varchar(20) hello", "SHA-256", "CzQMA0cB5K", 1, varchar20Col, "hello", "b4d39ab0d198fb4cac8b"},
		{"pg varchar(255) hello", "SHA-256", "CzQMA0cB5K", 1, varchar255, "hello", "b4d39ab0d198fb4cac8b2f023da74f670bcaf192dcc79b5d6361b7ae6b2fafdf"},
		// OracleConnectorIT.java:898 (same digest, uncut)
		{"oracle test", "SHA-256", "CzQMA0cB5K", 1, textCol, "test", "8e68c68edbbac316dfe2f6ada6b0d2d3e2002b487a985d4b7c7c82dd83b0f4d7"},
		// SqlServerConnectorIT.java:1378 and :1387 (varchar(255), varchar(20))
		{"sqlserver 255", "SHA-256", "CzQMA0cB5K", 1, varchar255, "some_name", "3b225d0696535d66f2c0fb2e36b012c520d396af3dd8f18330b9c9cd23ca714e"},
		{"sqlserver 20", "SHA-256", "CzQMA0cB5K", 1, varchar20Col, "some_name", "3b225d0696535d66f2c0"},
		// BinlogConnectorIT.java:1401-1416, the inventory customers' emails
		{"binlog 1001", "SHA-256", "CzQMA0cB5K", 1, varchar255, "sally.thomas@acme.com", "d540e71abf15be8b51c7967397ba359db27d6f6ae85a297fe8d0d7005ffd0e82"},
		{"binlog 1002", "SHA-256", "CzQMA0cB5K", 1, varchar255, "gbailey@foobar.com", "b1f1a1a63559c1d3a98bd7bb5c363d7e21a37463a7266bc2ff341eaef7ac8ef3"},
		{"binlog 1003", "SHA-256", "CzQMA0cB5K", 1, varchar255, "ed@walker.com", "bbe1de7b1068bc8f86bbb19f432ce1d44fbd461339916f42544b3f7ebff674d6"},
		{"binlog 1004", "SHA-256", "CzQMA0cB5K", 1, varchar255, "annek@noanswer.org", "ff21be44fb224e57d822ea9a51d343d77e4c49ac3dedd3d144024ac2012af0a1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ColumnRewrite{Kind: RewriteHash, Algorithm: tt.alg, Salt: tt.salt, Version: tt.version}
			got, null := applyString(t, r, tt.col, tt.in, false)
			if got != tt.want || null {
				t.Errorf("hash(%q) = %q (null %v), want %q", tt.in, got, null, tt.want)
			}
		})
	}
}

// The values beyond Debezium's own tests (non-ASCII text, U+0000,
// characters outside the BMP, the TC_LONGSTRING form, other algorithms)
// are what the JDK computes with the calls MaskStrings makes:
// testdata/maskref/MaskRef.java, run on OpenJDK 17 (default charset UTF-8).
func TestHashEqualsJDKForJavaSerializationEdges(t *testing.T) {
	tests := []struct {
		in     string
		alg    string
		v1, v2 string
	}{
		{"", "SHA-256", "5b3d6ca0412baec5bd29469bcf15b3d11a89841fb2aaed6509e63dd51531bbb0", "63479ad69a090b258277ec8fba6f99419a2ffb248981510657c944ccd1148e97"},
		{"été", "SHA-256", "cb663ceb6d59332a7b2bda654e7020003f5f5d4cd6cb0be3215908b62aa8143f", "030119af84586c546fd6c00a974d7bfe26eb1ad3c803e549a3d2c5b99a21e6df"},
		{"€", "SHA-256", "50c7241cce7afdca94a72f581762c79ab3def0700b809504ed244d38475d6e75", "4c2858a38f582155b4b3834d7c5642d3e31c567db8c191dc48faed2bbc31333f"},
		{"a\x00b", "SHA-256", "bdc7f913ce6aff17f08342a233b29e3baeb2bab699ae7dd8acdb7d2dddf810ff", "01ae4a27b0c0dc696c79e30f22c84985219d1aa2a72e768f86a4cf6a95fc88ff"},
		{"😀x", "SHA-256", "f816d51f1e09d664694d527810df4b8102348fe2f225787eaf16f312b5815d13", "493a2c5881f8820f5f224399be65476e446d263b891de138fd2c214583c0f108"},
		{"日本語", "SHA-256", "a3603007aca78d47048b468eb87199873f54ae52efff1a68c3c50cfcbb694932", "f3d7e7402c7fe035cb46deeb2c1a4680a63aaa1f8db6276084675a70c36c05d5"},
		{strings.Repeat("a", 65535), "SHA-256", "c05919b180a41bfeb1cd9dd096a1e95a811388ba6f5f034e4b4780a0e79664ec", "2e6bca1187dfef0df1efe9c32f3966b968905016942bccfa56f78410839a1cd1"},
		{strings.Repeat("a", 70000), "SHA-256", "ca2b52066782e399ff34cfba8e6012f5f9699cc26bb9a3ca79fe44a0ac7f57c4", "ac263f2e3e5da5190480de089678e38151c14ccf46c9beeb95763afa94b57d01"},
		{"hello", "SHA-1", "dc3540fcd5b4eb54f2eca95c5d6ae6aa7863e345", "34cd57acc150672d09d0c5635c06d8c2f094a419"},
		{"hello", "SHA-224", "31b18a00c598f930cac5d4c0474d9bdd154ad9d349bfac2a2d1997da", "e5d2b9250851cf3ccdb47c35cc83a673e718418af983029bf9045ab6"},
		{"hello", "SHA-384", "d1ac1e41a45a75e00a69a37054337d6819bc4437186e1f9c23e2aef3e2a86b76366c18313376853c325375087eff4d9d", "3867a02f9f0119f6796ffd21ce71d026579b0810796ee64b9e6376f9b4fda0f95f56d0c403df591cb83ef5703665d9ca"},
		{"hello", "SHA-512", "61ef696691b5c1b339801eea48706d28993ca2741b4e6328ec024a3fe1c9982ef46df94797519129ee59487bbdbcf80e07a2006bb1d32c02f7ddb740526639f6", "acc3054d59588aeff201e46474f717f84cf925e71123acb5ac83bd1b002c4345c266330d86e79e1dba142e51abfcde0bec4b363d39664d883f08c33584ede7ba"},
		{"hello", "SHA-512/224", "cf4ca36b5556a09f7960511747ffb36670c0371b8148f687acd5214f", "32e1f392b5616e16b729d552214ec3e0e983b0267adea304cc7bb515"},
		{"hello", "SHA-512/256", "e0c601983ce0a0e3520ae9958d14c7ae4cedb3357b312c486e086a102ebe91d1", "620a6c9a27880b6da6b7de80afee068ec43c53cec63d3764926b1eeb89fb3a48"},
		{"hello", "SHA3-256", "0d87306126b87a950562cf0c1dd64baffadab1c6c5c44302c5305daa0c062986", "03e21ab7c10d07f9d4ac68705a6e42ea9812c43704eea51814343e1ae462df96"},
		{"hello", "sha256", "af5843a0f0e728ab0332c8888b6e1190bfb79e584f0d40538de8f10df6ef29c6", "cd31b3b98ece60cb739c0bf770b2de892ae0ad133f645513c3d83f08757a843a"},
	}
	for _, tt := range tests {
		name := tt.alg + " " + tt.in
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			for v, want := range map[int]string{1: tt.v1, 2: tt.v2} {
				r := ColumnRewrite{Kind: RewriteHash, Algorithm: tt.alg, Salt: "salt", Version: v}
				if got, _ := applyString(t, r, textCol, tt.in, false); got != want {
					t.Errorf("v%d = %s, want %s", v, got, want)
				}
			}
		})
	}
}

func TestJavaSerializedStringBytes(t *testing.T) {
	// Prefixes printed by testdata/maskref/MaskRef.java (ser=…).
	tests := []struct{ in, wantPrefix string }{
		{"", "aced0005740000"},
		{"été", "aced0005740005c3a974c3a9"},
		{"a\x00b", "aced000574000461c08062"},
		{"😀x", "aced0005740007eda0bdedb88078"},
		{strings.Repeat("a", 65535), "aced000574ffff6161"},
		{strings.Repeat("a", 70000), "aced00057c000000000001117061"},
	}
	for _, tt := range tests {
		got := hex.EncodeToString(AppendJavaSerializedString(nil, []byte(tt.in)))
		if !strings.HasPrefix(got, tt.wantPrefix) {
			t.Errorf("%.20q: %.40s…, want prefix %s", tt.in, got, tt.wantPrefix)
		}
	}
}

func TestMaskIsFixedAsterisksAndMasksNull(t *testing.T) {
	tests := []struct {
		chars int
		in    string
		null  bool
		want  string
	}{
		// MaskStringsTest.java:27-36: every input, null included, is the mask.
		{5, "1234567890", false, "*****"},
		{5, "12345", false, "*****"},
		{5, "1", false, "*****"},
		{5, "", true, "*****"},
		// ColumnMappersTest.java:79-92
		{10, "12345678901234567890", false, "**********"},
		{10, "123456789", false, "**********"},
		{10, "", true, "**********"},
		{0, "abc", false, ""},
	}
	for _, tt := range tests {
		got, null := applyString(t, ColumnRewrite{Kind: RewriteMask, Chars: tt.chars}, textCol, tt.in, tt.null)
		if got != tt.want || null {
			t.Errorf("mask %d of %q (null %v) = %q (null %v), want %q", tt.chars, tt.in, tt.null, got, null, tt.want)
		}
	}
}

func TestTruncateCutsJavaChars(t *testing.T) {
	tests := []struct {
		n    int
		in   string
		want string
	}{
		// TruncateColumnTest.java:28-35
		{5, "1234567890", "12345"},
		{5, "123456", "12345"},
		{5, "12345", "12345"},
		{5, "1234", "1234"},
		{5, "1", "1"},
		// TruncateColumnTest.java:38-46
		{0, "1234567890", ""},
		{0, "", ""},
		// ColumnMappersTest.java:66-73
		{10, "12345678901234567890", "1234567890"},
		{10, "123456789", "123456789"},
		// SqlServerConnectorIT.java:1405,1415 and OracleConnectorIT.java:908
		{4, "some_name", "some"},
		// String.substring counts UTF-16 code units: 'é' is one, '😀'
		// two. A cut inside a pair leaves a lone surrogate, which Java's
		// UTF-8 encoder writes as '?' (MaskRef.java prints cut 783f).
		{2, "été", "ét"},
		{3, "x😀y", "x😀"},
		{2, "x😀y", "x?"},
		{1, "😀", "?"},
	}
	for _, tt := range tests {
		got, null := applyString(t, ColumnRewrite{Kind: RewriteTruncate, Chars: tt.n}, textCol, tt.in, false)
		if got != tt.want || null {
			t.Errorf("truncate %d of %q = %q, want %q", tt.n, tt.in, got, tt.want)
		}
	}
}

func TestNullStaysNullForHashAndTruncate(t *testing.T) {
	// ColumnMappersTest.java:74, :156, :172; TruncateColumnTest.java:36
	for _, r := range []ColumnRewrite{
		{Kind: RewriteHash, Algorithm: "SHA-256", Salt: "s", Version: 1},
		{Kind: RewriteHash, Algorithm: "SHA-256", Salt: "s", Version: 2},
		{Kind: RewriteTruncate, Chars: 3},
	} {
		if got, null := applyString(t, r, textCol, "", true); got != "" || !null {
			t.Errorf("%+v of null = %q null %v, want null", r, got, null)
		}
	}
}

func TestTruncateBytes(t *testing.T) {
	// TruncateColumnTest.java:51-94: a ByteBuffer is cut to n bytes.
	b := ColumnRewrite{Kind: RewriteTruncate, Chars: 3}.Bind(byteaCol, &Schema{Type: TypeBytes})
	for in, want := range map[string]string{"\x00\x01\x02\x03\x04": "\x00\x01\x02", "\x00\x01": "\x00\x01"} {
		if got, _ := b.Apply(nil, []byte(in), false); string(got) != want {
			t.Errorf("truncate bytes %x = %x, want %x", in, got, want)
		}
	}
	// Bits and Decimal are byte[] / BigDecimal in Debezium: not cut.
	bits := ColumnRewrite{Kind: RewriteTruncate, Chars: 1}.Bind(Column{TypeOID: oidVarbit, TypeMod: -1}, semantic(TypeBytes, "io.debezium.data.Bits"))
	if bits.Changes() {
		t.Error("truncate changes Bits values")
	}
}

func TestBindDecidesColumnsAndParams(t *testing.T) {
	enum := Column{Name: "e", TypeOID: 99999, TypeMod: -1, Type: &TypeInfo{OID: 99999, Kind: 'e'}}
	tests := []struct {
		name    string
		r       ColumnRewrite
		col     Column
		schema  *Schema
		changes bool
		params  []Param
	}{
		// MaskStrings.java:72-93: string JDBC types only, masked=true on all.
		{"mask text", ColumnRewrite{Kind: RewriteMask, Chars: 3}, textCol, stringSchema, true, []Param{{"masked", "true"}}},
		{"mask bpchar", ColumnRewrite{Kind: RewriteMask, Chars: 3}, Column{TypeOID: oidBpchar, TypeMod: 9}, stringSchema, true, []Param{{"masked", "true"}}},
		{"mask enum", ColumnRewrite{Kind: RewriteMask, Chars: 3}, enum, stringSchema, true, []Param{{"masked", "true"}}},
		{"mask int", ColumnRewrite{Kind: RewriteMask, Chars: 3}, int4Col, &Schema{Type: TypeInt32}, false, []Param{{"masked", "true"}}},
		{"mask uuid", ColumnRewrite{Kind: RewriteMask, Chars: 3}, Column{TypeOID: oidUUID, TypeMod: -1}, stringSchema, false, []Param{{"masked", "true"}}},
		{"mask text[]", ColumnRewrite{Kind: RewriteMask, Chars: 3}, Column{TypeOID: 1009, TypeMod: -1}, &Schema{Type: TypeArray}, false, []Param{{"masked", "true"}}},
		{"hash json", ColumnRewrite{Kind: RewriteHash, Algorithm: "MD5", Version: 2}, Column{TypeOID: oidJSONB, TypeMod: -1}, stringSchema, false, []Param{{"masked", "true"}}},
		// TruncateColumn.java:44-54: declared when the column may be longer.
		{"truncate text", ColumnRewrite{Kind: RewriteTruncate, Chars: 3}, textCol, stringSchema, true, []Param{{"truncateLength", "3"}}},
		{"truncate varchar(20) to 30", ColumnRewrite{Kind: RewriteTruncate, Chars: 30}, varchar20Col, stringSchema, false, nil},
		{"truncate varchar(20) to 20", ColumnRewrite{Kind: RewriteTruncate, Chars: 20}, varchar20Col, stringSchema, false, nil},
		{"truncate varchar(20) to 19", ColumnRewrite{Kind: RewriteTruncate, Chars: 19}, varchar20Col, stringSchema, true, []Param{{"truncateLength", "19"}}},
		// int4's length is 10 (pgjdbc getPrecision): declared, but an
		// Integer is not a String, so values pass.
		{"truncate int4", ColumnRewrite{Kind: RewriteTruncate, Chars: 3}, int4Col, &Schema{Type: TypeInt32}, false, []Param{{"truncateLength", "3"}}},
		{"truncate timestamptz", ColumnRewrite{Kind: RewriteTruncate, Chars: 10}, Column{TypeOID: oidTimestamptz, TypeMod: -1}, stringSchema, true, []Param{{"truncateLength", "10"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.r.Bind(tt.col, tt.schema)
			if b.Changes() != tt.changes || !reflect.DeepEqual(b.Params(), tt.params) {
				t.Errorf("Changes %v Params %v, want %v %v", b.Changes(), b.Params(), tt.changes, tt.params)
			}
			if !tt.changes {
				if got, null := b.Apply(nil, []byte("v"), false); string(got) != "v" || null {
					t.Errorf("passthrough gave %q null %v", got, null)
				}
			}
		})
	}
}

func TestColumnLengthFollowsPgjdbc(t *testing.T) {
	// pgjdbc TypeInfoCache.java:825-887 and :964-1025.
	tests := []struct {
		col  Column
		want int
	}{
		{Column{TypeOID: oidVarchar, TypeMod: 24}, 20},
		{Column{TypeOID: oidBpchar, TypeMod: 5}, 1},
		{Column{TypeOID: oidVarchar, TypeMod: -1}, unknownLength},
		{textCol, unknownLength},
		{Column{TypeOID: oidName, TypeMod: -1}, unknownLength},
		{Column{TypeOID: oidChar, TypeMod: -1}, 1},
		{int4Col, 10},
		{Column{TypeOID: oidInt2, TypeMod: -1}, 5},
		{Column{TypeOID: oidInt8, TypeMod: -1}, 19},
		{Column{TypeOID: oidNumeric, TypeMod: (10<<16 | 2) + 4}, 10},
		{Column{TypeOID: oidNumeric, TypeMod: -1}, 131089},
		{Column{TypeOID: oidTimestamptz, TypeMod: -1}, 13 + 1 + 8 + 7 + 6},
		{Column{TypeOID: oidTime, TypeMod: 1}, 8 + 3},
		{Column{TypeOID: oidDate, TypeMod: -1}, 13},
		{Column{TypeOID: 1015, TypeMod: 14}, 10}, // varchar(10)[]: the element's
		// a domain over varchar(7): the domain's typmod
		{Column{TypeOID: 70000, TypeMod: -1, Type: &TypeInfo{OID: oidVarchar, Mod: 11}}, 7},
	}
	for _, tt := range tests {
		if got := ColumnLength(tt.col); got != tt.want {
			t.Errorf("ColumnLength(%+v) = %d, want %d", tt.col, got, tt.want)
		}
	}
}

func TestValidateRefuses(t *testing.T) {
	for _, r := range []ColumnRewrite{
		{Kind: RewriteMask, Chars: -1},
		{Kind: RewriteTruncate, Chars: -1},
		{Kind: RewriteHash, Algorithm: "MD2", Version: 1}, // Java has it; Go does not
		{Kind: RewriteHash, Algorithm: "SHA-256", Version: 3},
		{Kind: 0},
	} {
		if err := r.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil", r)
		}
	}
}

func BenchmarkHashV1(b *testing.B) {
	r := ColumnRewrite{Kind: RewriteHash, Algorithm: "SHA-256", Salt: "CzQMA0cB5K", Version: 1}.Bind(varchar255, stringSchema)
	v := []byte("sally.thomas@acme.com")
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = r.Apply(dst[:0], v, false)
	}
}

func FuzzColumnRewrite(f *testing.F) {
	for _, s := range []string{"", "hello", "a\x00b", "😀x", "\xff\xfe", "été"} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, s []byte, n int) {
		ser := AppendJavaSerializedString(nil, s)
		head := 7
		if len(ser) > 4 && ser[4] == 0x7C {
			head = 13
		}
		if got, want := len(ser)-head, modifiedUTF8Len(s); got != want {
			t.Fatalf("body %d bytes, header says %d", got, want)
		}
		if n < 0 {
			n = -n
		}
		n %= 64
		cut := AppendTruncatedChars(nil, s, n)
		if bytes.HasSuffix(cut, []byte("?")) {
			cut = cut[:len(cut)-1]
		}
		if !bytes.HasPrefix(s, cut) {
			t.Fatalf("truncate %d of %q = %q, not a prefix", n, s, cut)
		}
	})
}

func TestRewriteDatumOnConvertedValues(t *testing.T) {
	cfg := Config{}
	var buf []byte
	text := mapColumn(&cfg, textCol)
	bytea := mapColumn(&cfg, byteaCol)
	cv := &converter{}

	// A text column: the converted string is rewritten, null masked.
	mask := ColumnRewrite{Kind: RewriteMask, Chars: 4}.Bind(textCol, text.schema)
	d, _ := cv.scalar(text, []byte("secret"))
	if got, null := mask.rewriteDatum(d, false, &buf); null || got.k != dString || string(got.b) != "****" {
		t.Errorf("mask text = %+v null %v", got, null)
	}
	if got, null := mask.rewriteDatum(datum{}, true, &buf); null || string(got.b) != "****" {
		t.Errorf("mask null = %+v null %v, want the mask (ColumnMappersTest.java:92)", got, null)
	}
	hash := ColumnRewrite{Kind: RewriteHash, Algorithm: "SHA-256", Salt: "CzQMA0cB5K", Version: 1}.Bind(varchar20Col, mapColumn(&cfg, varchar20Col).schema)
	if got, _ := hash.rewriteDatum(datum{k: dString, b: []byte("test")}, false, &buf); string(got.b) != "8e68c68edbbac316dfe2" {
		t.Errorf("hash = %q (PostgresConnectorIT.java:2625)", got.b)
	}
	if got, null := hash.rewriteDatum(datum{}, true, &buf); !null || got.k != dNull {
		t.Errorf("hash null = %+v null %v", got, null)
	}

	// bytea in bytes mode is a ByteBuffer in Debezium: cut to n bytes.
	trunc := ColumnRewrite{Kind: RewriteTruncate, Chars: 2}.Bind(byteaCol, bytea.schema)
	d, _ = cv.scalar(bytea, []byte(`\x010203`))
	if got, _ := trunc.rewriteDatum(d, false, &buf); got.k != dBytes || string(got.b) != "\x01\x02" {
		t.Errorf("truncate bytea = %+v", got)
	}
	// An int is neither String nor ByteBuffer: unchanged.
	intCol := mapColumn(&cfg, int4Col)
	tr := ColumnRewrite{Kind: RewriteTruncate, Chars: 1}.Bind(int4Col, intCol.schema)
	d, _ = cv.scalar(intCol, []byte("12345"))
	if got, _ := tr.rewriteDatum(d, false, &buf); got.k != dInt || got.i != 12345 {
		t.Errorf("truncate int = %+v", got)
	}
}
