package transform

import "sort"

// PredicateTypes returns the predicate types Parse knows, sorted.
func PredicateTypes() []string {
	var out []string
	for k := range predicateTypes {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
