package config

import (
	"reflect"
	"testing"
)

func TestTopicClashes(t *testing.T) {
	ab := TableName{"public", "a b"}
	a_b := TableName{"public", "a_b"}
	aDotB := TableName{"public", "a.b"}
	pubA := TableName{"public.a", "b"} // public.a.b too, from the other side of the dot
	other := TableName{"public", "c"}
	for _, tc := range []struct {
		name      string
		keep, add []TableName
		want      []TopicClash
	}{
		{"none", nil, []TableName{ab, other}, nil},
		{"space and underscore", nil, []TableName{a_b, ab}, []TopicClash{{Table: ab, Other: a_b, Topic: "shop.public.a_b"}}},
		{"a kept table keeps its topic", []TableName{ab}, []TableName{a_b}, []TopicClash{{Table: a_b, Other: ab, Topic: "shop.public.a_b"}}},
		{"dots on either side", nil, []TableName{aDotB, pubA}, []TopicClash{{Table: pubA, Other: aDotB, Topic: "shop.public.a.b"}}},
		{"the same table twice is no clash", []TableName{ab}, []TableName{ab}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TopicClashes("shop", tc.keep, tc.add); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
