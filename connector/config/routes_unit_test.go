package config

import "testing"

// TestTopicNamingOf: the first matching rule routes; the match is on the
// whole sanitized topic; groups expand; key_field_regex rewrites the
// physical identifier (ByLogicalTableRouter.java:342-367); no rule keeps
// Debezium's own topic.
func TestTopicNamingOf(t *testing.T) {
	cfg := Config{Kafka: KafkaConfig{TopicPrefix: "shop", Routes: []RouteRule{
		{Regex: `shop\.public\.orders_(\d+)`, Topic: "shop.public.orders", KeyField: "__dbz__physicalTableIdentifier",
			KeyFieldRegex: `shop\.public\.orders_(\d+)`, KeyFieldReplacement: "y$1"},
		{Regex: `shop\.(.*)\.events_.*`, Topic: "events.$1", KeyField: "src"},
		{Regex: `shop\.public\.logs`, Topic: "logs"},
	}}}
	n, err := cfg.TopicNaming()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		schema, table string
		want          TableTopic
	}{
		{"public", "orders_2024", TableTopic{Topic: "shop.public.orders", Routed: true, KeyField: "__dbz__physicalTableIdentifier", KeyValue: "y2024", SchemaName: "shop.public.orders"}},
		{"audit", "events_1", TableTopic{Topic: "events.audit", Routed: true, KeyField: "src", KeyValue: "shop.audit.events_1", SchemaName: "events.audit"}},
		{"public", "logs", TableTopic{Topic: "logs", Routed: true, SchemaName: "shop.public.logs"}},
		{"public", "logs_old", TableTopic{Topic: "shop.public.logs_old", SchemaName: "shop.public.logs_old"}}, // whole-name match only
		{"public", "Ordér", TableTopic{Topic: "shop.public.Ord_r", SchemaName: "shop.public.Ord_r"}},
	}
	for _, c := range cases {
		if got := n.Of(c.schema, c.table); got != c.want {
			t.Errorf("Of(%s, %s) = %+v, want %+v", c.schema, c.table, got, c.want)
		}
	}
	clashes := n.Clashes(nil, []TableName{{"public", "orders_1"}, {"public", "orders_2"}, {"public", "a b"}, {"public", "a_b"}})
	if len(clashes) != 1 || clashes[0].Table != (TableName{"public", "a_b"}) {
		t.Errorf("Clashes = %+v, want only a b / a_b (routed tables merge on purpose)", clashes)
	}
	bad := Config{Kafka: KafkaConfig{Routes: []RouteRule{{Regex: "(", Topic: "x"}, {Regex: "a", Topic: ""}, {Regex: "a", Topic: "b", KeyFieldRegex: "x"}}}}
	if _, err := bad.TopicNaming(); err == nil {
		t.Error("bad routes accepted")
	}
}
