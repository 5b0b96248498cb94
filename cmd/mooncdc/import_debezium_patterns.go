package main

import (
	"fmt"
	"strings"
)

// This file turns Debezium's include/exclude regular expressions into
// mooncdc's name patterns (connector.ParseTablePattern): dot-separated
// identifiers in which '*' matches any run of characters.
//
// Debezium splits a list on commas and matches each regex against the whole
// "schema.table" (or "schema.table.column") case-insensitively
// (Predicates.java:229-236, Strings.setOfRegex). The common regexes are
// names with '\.' or '.' between them and '.*' as a wildcard; those convert.
// Anything else (character classes, quantifiers, lookarounds) has no
// pattern form and is refused with the construct named, so nothing is
// captured that Debezium did not capture.

// maxExpansions bounds the patterns one regex may expand into through
// alternations such as public.(a|b|c).
const maxExpansions = 64

// splitRegexList splits a Debezium comma-separated list of regexes, keeping
// commas inside {m,n} and (…) together as Strings.setOfRegex does for
// quantifiers.
func splitRegexList(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{', '(', '[':
			depth++
		case '}', ')', ']':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				if p := strings.TrimSpace(s[start:i]); p != "" {
					out = append(out, p)
				}
				start = i + 1
			}
		}
	}
	if p := strings.TrimSpace(s[start:]); p != "" {
		out = append(out, p)
	}
	return out
}

// regexToPatterns converts one Debezium regex over names of `parts`
// dot-separated identifiers (2: schema.table, 3: schema.table.column) into
// mooncdc patterns. notes say where the pattern is looser than the regex.
func regexToPatterns(re string, parts int) (patterns []string, notes []string, err error) {
	re = strings.TrimSpace(re)
	re = strings.TrimPrefix(re, "^")
	if strings.HasSuffix(re, "$") && !strings.HasSuffix(re, `\$`) {
		re = strings.TrimSuffix(re, "$")
	}
	// A top-level '|' separates whole alternatives.
	for _, alt := range splitTopLevel(re, '|') {
		seqs, n, err := expandRegex(alt)
		if err != nil {
			return nil, nil, fmt.Errorf("regex %q: %w", re, err)
		}
		notes = append(notes, n...)
		for _, seq := range seqs {
			p, err := joinPattern(seq, parts)
			if err != nil {
				return nil, nil, fmt.Errorf("regex %q: %w", re, err)
			}
			patterns = append(patterns, p)
		}
	}
	if len(patterns) > maxExpansions {
		return nil, nil, fmt.Errorf("regex %q expands into %d patterns; list the names instead", re, len(patterns))
	}
	return patterns, dedupe(notes), nil
}

func splitTopLevel(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// token kinds of a converted regex: a literal character, the separator
// between identifiers, or a wildcard.
const (
	tokSep  = '\x00'
	tokWild = '\x01'
)

// expandRegex converts a regex without top-level '|' into token strings
// (literal characters, tokSep, tokWild), one per expansion of its
// groups.
func expandRegex(re string) ([]string, []string, error) {
	seqs := []string{""}
	var notes []string
	add := func(s string) {
		for i := range seqs {
			seqs[i] += s
		}
	}
	for i := 0; i < len(re); i++ {
		c := re[i]
		next := byte(0)
		if i+1 < len(re) {
			next = re[i+1]
		}
		switch {
		case c == '.' && next == '*':
			add(string(tokWild))
			i++
		case c == '.' && next == '+':
			add(string(tokWild))
			notes = append(notes, "'.+' became '*', which also matches an empty name")
			i++
		case c == '.' && (next == '?' || next == '{'):
			return nil, nil, fmt.Errorf("'.%c' has no mooncdc pattern; list the names", next)
		case c == '.':
			// Any character in the regex, but written between names
			// it means the separator, as Debezium's own examples use it.
			add(string(tokSep))
		case c == '\\' && next == '.':
			add(string(tokSep))
			i++
		case c == '\\' && (next == 'w' || next == 'd') && i+2 < len(re) && (re[i+2] == '*' || re[i+2] == '+'):
			add(string(tokWild))
			notes = append(notes, fmt.Sprintf("'\\%c%c' became '*', which matches any characters", next, re[i+2]))
			i += 2
		case strings.HasPrefix(re[i:], "[^.]*") || strings.HasPrefix(re[i:], "[^.]+"):
			add(string(tokWild))
			i += 4
		case c == '\\' && next != 0 && strings.IndexByte(`$-_"@#`, next) >= 0:
			add(string(next))
			i++
		case c == '(':
			end := strings.IndexByte(re[i:], ')')
			if end < 0 {
				return nil, nil, fmt.Errorf("unclosed '('")
			}
			body := re[i+1 : i+end]
			body = strings.TrimPrefix(body, "?:")
			if after := i + end + 1; after < len(re) && strings.IndexByte("*+?{", re[after]) >= 0 {
				return nil, nil, fmt.Errorf("a repeated group has no mooncdc pattern; list the names")
			}
			var expanded []string
			for _, alt := range strings.Split(body, "|") {
				sub, n, err := expandRegex(alt)
				if err != nil {
					return nil, nil, err
				}
				notes = append(notes, n...)
				expanded = append(expanded, sub...)
			}
			var next []string
			for _, s := range seqs {
				for _, e := range expanded {
					next = append(next, s+e)
				}
			}
			if len(next) > maxExpansions {
				return nil, nil, fmt.Errorf("expands into more than %d patterns; list the names", maxExpansions)
			}
			seqs = next
			i += end
		case isNameByte(c):
			if next == '*' || next == '+' || next == '?' || next == '{' {
				return nil, nil, fmt.Errorf("the quantifier %q after %q has no mooncdc pattern; list the names", next, c)
			}
			add(string(c))
		default:
			return nil, nil, fmt.Errorf("%q has no mooncdc pattern (only names, '\\.', '.*' and (a|b) groups convert); list the names", re[i:])
		}
	}
	return seqs, notes, nil
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

// joinPattern writes a token string as a pattern of `parts` identifiers,
// quoting an identifier that would not survive unquoted.
func joinPattern(seq string, parts int) (string, error) {
	ids := strings.Split(seq, string(tokSep))
	if len(ids) == 1 && parts > 1 && strings.HasPrefix(ids[0], string(tokWild)) {
		// ".*orders" spans the schema in Debezium.
		ids = append([]string{string(tokWild)}, ids...)
	}
	if len(ids) != parts {
		want := "schema.table"
		if parts == 3 {
			want = "schema.table.column"
		}
		return "", fmt.Errorf("has %d dot-separated names where Debezium matches %s whole; write %s", len(ids), want, want)
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		if id == "" {
			return "", fmt.Errorf("has an empty name")
		}
		out[i] = quoteIdent(strings.ReplaceAll(id, string(tokWild), "*"))
	}
	return strings.Join(out, "."), nil
}

// quoteIdent writes an identifier bare when it is one Postgres would fold
// to itself (lower-case letters, digits, '_'; '*' for wildcards), after
// folding ASCII upper case as Postgres does: Debezium matched
// case-insensitively, and tables are mostly named in lower case. Any other
// identifier is double-quoted.
func quoteIdent(id string) string {
	lower := []byte(id)
	for i, c := range lower {
		if c >= 'A' && c <= 'Z' {
			lower[i] = c + ('a' - 'A')
		}
	}
	plain := true
	for _, c := range lower {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '*' || c >= 0x80) {
			plain = false
			break
		}
	}
	if plain {
		return string(lower)
	}
	return `"` + strings.ReplaceAll(id, `"`, `""`) + `"`
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
