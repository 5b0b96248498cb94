package schema

import (
	"math/big"
	"testing"
)

// TestMoneyRoundedToFractionDigitsNotParked: money_fraction_digits smaller
// than the digits Postgres prints no longer fails the value (which parked
// the table); the Decimal is rounded HALF_UP to that scale in every
// format, as Debezium's testStreamMoneyPreciseDecimalFraction expects
// (debezium-connector-postgres/src/test/java/io/debezium/connector/
// postgresql/RecordsStreamProducerIT.java:3821-3846, v3.6.1.Final):
// money.fraction.digits=1, INSERT ... salary 123.4567 (stored as $123.46)
// → Decimal.builder(1).optional(), BigDecimal.valueOf(123.5).
func TestMoneyRoundedToFractionDigitsNotParked(t *testing.T) {
	cfg := testJSONConfig
	one := 1
	cfg.MoneyFractionDigits = &one
	rel := &Relation{Schema: "public", Table: "salary", Columns: []Column{
		{Name: "salary", TypeOID: oidMoney, TypeMod: -1},
	}}
	for _, tc := range []struct {
		text string
		want string // base64 of the unscaled value at scale 1
		rat  *big.Rat
	}{
		{"$123.46", "BNM=", big.NewRat(1235, 10)},    // 1235
		{"-$123.45", "+y0=", big.NewRat(-1235, 10)},  // -1235: HALF_UP, away from zero
		{"($0.04)", "AA==", big.NewRat(0, 1)},        // 0, no sign
		{"$1,234.56", "MDo=", big.NewRat(12346, 10)}, // 12346 = 0x303a
		{"$0.95", "Cg==", big.NewRat(10, 10)},        // 10
	} {
		r := encodeRow(t, cfg, rel, Tuple{text(tc.text)})
		if r.plain["salary"] != tc.want {
			t.Errorf("%s: plain JSON %v, want %q", tc.text, r.plain["salary"], tc.want)
		}
		if r.payload["salary"] != tc.want {
			t.Errorf("%s: JSON with schemas %v, want %q", tc.text, r.payload["salary"], tc.want)
		}
		f := r.afterField("salary")
		params, _ := f["parameters"].(map[string]any)
		if f["type"] != "bytes" || f["name"] != "org.apache.kafka.connect.data.Decimal" || f["optional"] != true ||
			params["scale"] != "1" {
			t.Errorf("%s: schema %v, want optional Decimal scale 1", tc.text, f)
		}
		if got, ok := unwrapAvro(r.avro["salary"]).(*big.Rat); !ok || got.Cmp(tc.rat) != 0 {
			t.Errorf("%s: Avro %#v, want %v", tc.text, r.avro["salary"], tc.rat)
		}
	}
}

// TestMoneyZeroFractionDigitsRoundsToWholeUnits: money_fraction_digits 0 is
// a setting of its own, not "unset" (issue 12): Debezium's
// money.fraction.digits accepts it (PostgresConnectorConfig.java:1151-1158,
// v3.6.1.Final) and sets the scale of the Decimal to 0 with HALF_UP
// (PostgresValueConverter.java:404, :908), so cents round to whole units;
// the nil default stays 2.
func TestMoneyZeroFractionDigitsRoundsToWholeUnits(t *testing.T) {
	cfg := testJSONConfig
	zero := 0
	cfg.MoneyFractionDigits = &zero
	rel := &Relation{Schema: "public", Table: "salary", Columns: []Column{
		{Name: "salary", TypeOID: oidMoney, TypeMod: -1},
	}}
	for _, tc := range []struct {
		text string
		want string // base64 of the unscaled value at scale 0
		rat  *big.Rat
	}{
		{"$1,234.56", "BNM=", big.NewRat(1235, 1)}, // 1235 = 0x04d3
		{"$1,234.49", "BNI=", big.NewRat(1234, 1)}, // 1234
		{"-$0.50", "/w==", big.NewRat(-1, 1)},      // HALF_UP, away from zero
		{"($0.49)", "AA==", big.NewRat(0, 1)},      // 0, no sign
		{"$7.00", "Bw==", big.NewRat(7, 1)},
	} {
		r := encodeRow(t, cfg, rel, Tuple{text(tc.text)})
		if r.plain["salary"] != tc.want {
			t.Errorf("%s: plain JSON %v, want %q", tc.text, r.plain["salary"], tc.want)
		}
		if r.payload["salary"] != tc.want {
			t.Errorf("%s: JSON with schemas %v, want %q", tc.text, r.payload["salary"], tc.want)
		}
		f := r.afterField("salary")
		params, _ := f["parameters"].(map[string]any)
		if f["type"] != "bytes" || f["name"] != "org.apache.kafka.connect.data.Decimal" || params["scale"] != "0" {
			t.Errorf("%s: schema %v, want Decimal scale 0", tc.text, f)
		}
		if got, ok := unwrapAvro(r.avro["salary"]).(*big.Rat); !ok || got.Cmp(tc.rat) != 0 {
			t.Errorf("%s: Avro %#v, want %v", tc.text, r.avro["salary"], tc.rat)
		}
	}
	if err := (&Config{MoneyFractionDigits: &zero}).Validate(); err != nil {
		t.Errorf("money_fraction_digits 0 refused: %v", err)
	}
	for _, bad := range []int{-1, 21} {
		if err := (&Config{MoneyFractionDigits: &bad}).Validate(); err == nil {
			t.Errorf("money_fraction_digits %d accepted", bad)
		}
	}
}
