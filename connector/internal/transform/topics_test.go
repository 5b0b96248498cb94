package transform

import (
	"errors"
	"slices"
	"testing"
)

// TestChainTopicsListsWhereATablesRecordsGo: the topics a re-copy reads
// for a table's stale keys are every topic the chain can send the
// table's records to, or a *RouteError naming the router when they
// cannot be listed or may hold other tables' records.
func TestChainTopicsListsWhereATablesRecordsGo(t *testing.T) {
	const topic = "p.public.t"
	router := func(expr string, kv ...string) map[string]string {
		m := map[string]string{
			"transforms": "r", "transforms.r.type": dt + "ContentBasedRouter",
			"transforms.r.language": "cel", "transforms.r.topic.expression": expr,
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  []string
		open  string // the RouteError's alias, when open
	}{
		{"no router", map[string]string{"transforms": "k", "transforms.k.type": kt + "ValueToKey", "transforms.k.fields": "id"}, []string{topic}, ""},
		{"prefix of the topic", router(`"eu." + topic`), []string{topic, "eu." + topic}, ""},
		{"conditional prefix", router(`value.after.region == "EU" ? "eu." + topic : dyn(null)`), []string{topic, "eu." + topic}, ""},
		{"two branches", router(`value.x ? topic + ".a" : topic + ".b"`), []string{topic, topic + ".a", topic + ".b"}, ""},
		{"fixed topic for this table alone", router(`value.after.region == "EU" ? "eu_orders" : dyn(null)`, "transforms.r.topic.regex", `p\.public\.t`), []string{topic, "eu_orders"}, ""},
		{"fixed topic, other table's regex", router(`"eu_orders"`, "transforms.r.topic.regex", `p\.public\.other`), []string{topic}, ""},
		{"fixed topic by a literal predicate", map[string]string{
			"transforms": "r", "transforms.r.type": dt + "ContentBasedRouter", "transforms.r.language": "cel",
			"transforms.r.topic.expression": `"all_t"`, "transforms.r.predicate": "isT",
			"predicates": "isT", "predicates.isT.type": kt + "predicates.TopicNameMatches", "predicates.isT.pattern": `p\.public\.t`,
		}, []string{topic, "all_t"}, ""},
		{"fixed topic for every table", router(`"everything"`), nil, "r"},
		{"fixed topic, regex matching more", router(`"eu"`, "transforms.r.topic.regex", `p.public.t`), nil, "r"},
		{"fixed topic two tables' routers share", map[string]string{
			"transforms": "r,u", "transforms.r.type": dt + "ContentBasedRouter", "transforms.r.language": "cel",
			"transforms.r.topic.expression": `"eu_orders"`, "transforms.r.topic.regex": `p\.public\.t`,
			"transforms.u.type": dt + "ContentBasedRouter", "transforms.u.language": "cel",
			"transforms.u.topic.expression": `"eu_orders"`, "transforms.u.topic.regex": `p\.public\.u`,
		}, nil, "u"},
		{"a name another topic's records can be given", map[string]string{
			"transforms": "r,u", "transforms.r.type": dt + "ContentBasedRouter", "transforms.r.language": "cel",
			"transforms.r.topic.expression": `"eu.orders"`, "transforms.r.topic.regex": `p\.public\.t`,
			"transforms.u.type": dt + "ContentBasedRouter", "transforms.u.language": "cel",
			"transforms.u.topic.expression": `"eu." + topic`, "transforms.u.topic.regex": `orders|other`,
		}, nil, "u"},
		{"a prefix router the table's topic is not reachable through", map[string]string{
			"transforms": "r,u", "transforms.r.type": dt + "ContentBasedRouter", "transforms.r.language": "cel",
			"transforms.r.topic.expression": `"eu.orders"`, "transforms.r.topic.regex": `p\.public\.t`,
			"transforms.u.type": dt + "ContentBasedRouter", "transforms.u.language": "cel",
			"transforms.u.topic.expression": `"eu." + topic`, "transforms.u.topic.regex": `p\.public\..*`,
		}, []string{topic, "eu.orders", "eu." + topic}, ""},
		{"topic from the value", router(`value.after.region + "." + topic`), nil, "r"},
		{"topic from a header", router(`string(headers["h"])`), nil, "r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.props)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Topics(topic)
			var re *RouteError
			if tc.open != "" {
				if !errors.As(err, &re) || re.Alias != tc.open {
					t.Fatalf("Topics = %v, %v; want a RouteError naming %q", got, err, tc.open)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("Topics = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
