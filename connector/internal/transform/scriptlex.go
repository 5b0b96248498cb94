package transform

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// This file reads the tokens of a Debezium Groovy or JavaScript condition
// for TranslateScript (scripttranslate.go). It reads only what the
// translation handles; anything else (comments, slashy or template
// strings, GStrings, number suffixes) is refused, never guessed.

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokNumber
	tokString
	tokOp // operators and punctuation
)

type token struct {
	kind tokKind
	text string // the source text; for a string, its decoded value
	pos  int    // byte offset in the expression
}

// scanError is a token the translation does not read.
type scanError struct {
	pos int
	msg string
}

// The operators, longest first.
var scriptOps = []string{"===", "!==", "==", "!=", "<=", ">=", "&&", "||", "?.", "!", "<", ">", "(", ")", ".", ",", "?", ":", "[", "]", "+"}

func lex(src string, js bool) ([]token, *scanError) {
	var toks []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '/' && i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*'):
			return nil, &scanError{i, "a comment: remove it"}
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			toks = append(toks, token{tokIdent, src[i:j], i})
			i = j
		case c >= '0' && c <= '9':
			j, err := lexNumber(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tokNumber, src[i:j], i})
			i = j
		case c == '\'' || c == '"':
			s, j, err := lexString(src, i, js)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tokString, s, i})
			i = j
		default:
			op := ""
			for _, o := range scriptOps {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				r, _ := utf8.DecodeRuneInString(src[i:])
				return nil, &scanError{i, fmt.Sprintf("%q is not an operator the translation reads", r)}
			}
			toks = append(toks, token{tokOp, op, i})
			i += len(op)
		}
	}
	return append(toks, token{tokEOF, "", len(src)}), nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// lexNumber reads a decimal integer or a decimal fraction. Groovy reads
// 010 as octal and 1L, 1G, 1.5f as typed numbers, JavaScript 0x10 as hex:
// those, exponents and underscores are refused.
func lexNumber(src string, i int) (int, *scanError) {
	j := i
	for j < len(src) && src[j] >= '0' && src[j] <= '9' {
		j++
	}
	if j-i > 1 && src[i] == '0' {
		return 0, &scanError{i, "a number with a leading zero (Groovy and JavaScript read it as octal): write it without"}
	}
	if j+1 < len(src) && src[j] == '.' && src[j+1] >= '0' && src[j+1] <= '9' {
		j++
		for j < len(src) && src[j] >= '0' && src[j] <= '9' {
			j++
		}
	}
	if j < len(src) && (isIdentPart(src[j]) || src[j] == '.' && j+1 < len(src) && !isIdentStart(src[j+1])) {
		return 0, &scanError{i, "a number with a suffix, an exponent or another base: write a plain decimal number"}
	}
	return j, nil
}

// lexString reads a '…' or "…" literal with Java's escapes. A Groovy
// "…" with a $ is a GString (an interpolation), ”'…”' and """…""" are
// multi-line strings: refused.
func lexString(src string, i int, js bool) (string, int, *scanError) {
	q := src[i]
	if strings.HasPrefix(src[i:], strings.Repeat(string(q), 3)) {
		return "", 0, &scanError{i, "a triple-quoted string: write it '…'"}
	}
	var units []uint16
	for j := i + 1; j < len(src); {
		c := src[j]
		switch {
		case c == q:
			for k := 0; k < len(units); k++ {
				u := rune(units[k])
				if !utf16.IsSurrogate(u) {
					continue
				}
				if k+1 < len(units) && u < 0xdc00 && utf16.DecodeRune(u, rune(units[k+1])) != utf8.RuneError {
					k++
					continue
				}
				return "", 0, &scanError{i, "a string with an unpaired \\u surrogate"}
			}
			return string(utf16.Decode(units)), j + 1, nil
		case c == '\n' || c == '\r':
			return "", 0, &scanError{i, "a string not closed on its line"}
		case c == '$' && q == '"' && !js:
			return "", 0, &scanError{j, "a GString interpolation ($ in \"…\"): write the string '…' without it"}
		case c == '\\':
			if j+1 >= len(src) {
				return "", 0, &scanError{j, "a string not closed"}
			}
			e := src[j+1]
			j += 2
			switch e {
			case 'n':
				units = append(units, '\n')
			case 't':
				units = append(units, '\t')
			case 'r':
				units = append(units, '\r')
			case 'b':
				units = append(units, '\b')
			case 'f':
				units = append(units, '\f')
			case '\\', '\'', '"':
				units = append(units, uint16(e))
			case '$':
				if js {
					return "", 0, &scanError{j - 2, "the escape \\$"}
				}
				units = append(units, '$')
			case 'u':
				if j+4 > len(src) {
					return "", 0, &scanError{j - 2, "a malformed \\u escape"}
				}
				n, err := strconv.ParseUint(src[j:j+4], 16, 16)
				if err != nil {
					return "", 0, &scanError{j - 2, "a malformed \\u escape"}
				}
				units = append(units, uint16(n))
				j += 4
			default:
				return "", 0, &scanError{j - 2, fmt.Sprintf("the escape \\%c", e)}
			}
		default:
			r, n := utf8.DecodeRuneInString(src[j:])
			units = utf16.AppendRune(units, r)
			j += n
		}
	}
	return "", 0, &scanError{i, "a string not closed"}
}
