package transform

import (
	"fmt"
	"regexp"
)

// This file holds Kafka Connect's predicates
// (connect/transforms/src/main/java/org/apache/kafka/connect/transforms/predicates/).

// TopicNameMatches is true for a record whose whole topic matches the
// pattern (TopicNameMatches.java:59-61: Matcher.matches, not find).
type TopicNameMatches struct{ re *regexp.Regexp }

// NewTopicNameMatches compiles pattern as a whole-topic match. Go's RE2
// syntax is Java's without backreferences and lookaround; a pattern using
// them is refused here, as a pattern Java could not compile is refused by
// TopicNameMatches.configure (TopicNameMatches.java:69-79).
func NewTopicNameMatches(pattern string) (*TopicNameMatches, error) {
	if pattern == "" {
		return nil, fmt.Errorf("the pattern must not be empty")
	}
	re, err := regexp.Compile(`^(?:` + pattern + `)$`)
	if err != nil {
		return nil, fmt.Errorf("entry must be a regular expression (RE2 syntax: no backreferences or lookaround): %w", err)
	}
	return &TopicNameMatches{re: re}, nil
}

// Test implements Predicate.
func (p *TopicNameMatches) Test(r *Record) bool { return p.re.MatchString(r.Topic) }

// RecordIsTombstone is true for a record with a null value
// (RecordIsTombstone.java:46-48).
type RecordIsTombstone struct{}

// Test implements Predicate.
func (RecordIsTombstone) Test(r *Record) bool { return r.Value == nil }

// HasHeaderKey is true for a record with at least one header of the name
// (HasHeaderKey.java:54-57).
type HasHeaderKey struct{ Name string }

// Test implements Predicate.
func (p HasHeaderKey) Test(r *Record) bool {
	for i := range r.Headers {
		if r.Headers[i].Key == p.Name {
			return true
		}
	}
	return false
}
