package record

import (
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

// TestAvroIDsAreTheCodecsPerPlan: a codec keeps the ids it registered per
// schema plan (plans are shared by codecs, ids are not); a plan it did not
// register, and logical messages (no plan), have none, so the encoder
// refuses them rather than writing a wrong id; the map stays bounded.
func TestAvroIDsAreTheCodecsPerPlan(t *testing.T) {
	cfg := schema.Config{Name: "shop", PlanFormats: schema.PlanAvro}
	p1, p2 := schema.NewPlan(cfg, keyedOnFirstColumn(testRelation(1, "a"))), schema.NewPlan(cfg, keyedOnFirstColumn(testRelation(2, "b")))
	var a avroIDs
	*a.of(p1) = schema.AvroIDs{Key: 3, Value: 4}
	if got := a.get(p2); got != schema.NoAvroIDs {
		t.Errorf("a plan not registered has ids %v", got)
	}
	*a.of(p2) = schema.AvroIDs{Key: 5, Value: 6}
	if got := a.get(p1); got != (schema.AvroIDs{Key: 3, Value: 4}) {
		t.Errorf("p1's ids %v", got)
	}
	if got := a.get(nil); got != schema.NoAvroIDs {
		t.Errorf("messages' ids %v, want none (the encoder keeps them)", got)
	}
	var b avroIDs // another codec's
	if got := b.get(p1); got != schema.NoAvroIDs {
		t.Errorf("another codec has p1's ids %v", got)
	}
	cfg.PlanFormats = schema.PlanJSON // cheaper: the map's bound is the question
	for i := range maxPlanIDs + 10 {
		a.of(schema.NewPlan(cfg, keyedOnFirstColumn(testRelation(uint32(10+i), "t"))))
	}
	if len(a.m) > maxPlanIDs {
		t.Errorf("%d plans' ids kept, bound is %d", len(a.m), maxPlanIDs)
	}
}
