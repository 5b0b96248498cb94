package offsets

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MalformedError is a record of our connector name whose key or value does
// not decode. It is never skipped: the connector must stop rather than
// resume from state it cannot read.
type MalformedError struct {
	Offset int64  // offset in the offsets topic; -1 when not known (Decode alone)
	Key    []byte // the record key as stored
	Err    error  // what is wrong
}

func (e *MalformedError) Error() string {
	at := ""
	if e.Offset >= 0 {
		at = fmt.Sprintf(" at offset %d", e.Offset)
	}
	return fmt.Sprintf("malformed offsets record%s with key %s: %v (produce a corrected value or a tombstone for this key, or start over under a new connector name)", at, printable(e.Key), e.Err)
}

// printable shows a key as it is when it is short, printable UTF-8 (the
// usual case: JSON), and Go-quoted otherwise.
func printable(key []byte) string {
	suffix := ""
	if len(key) > 200 {
		key, suffix = key[:200], "..."
	}
	s := string(key)
	if !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s) + suffix
	}
	return s + suffix
}

func (e *MalformedError) Unwrap() error { return e.Err }

// Decode applies one offsets-topic record to st, as Load does for every
// record in log order: a value replaces what st holds for the key, a nil
// value (tombstone) deletes it. Records of other connector names leave st
// alone. A record of name whose key or value does not decode returns a
// *MalformedError and leaves st unchanged. A nil value is a tombstone; a
// non-nil value must be a JSON object (unknown fields are ignored, so an
// older mooncdc can read a newer one's records). Decode is pure and does
// not block; st must not be shared with another goroutine during the call.
func Decode(name string, key, value []byte, st *State) error {
	k, ours, err := parseKey(name, key)
	if err != nil {
		return &MalformedError{Offset: -1, Key: key, Err: err}
	}
	if !ours {
		return nil
	}
	switch k.kind {
	case keyPipeline:
		if value == nil {
			st.Pipeline = nil
			return nil
		}
		var p Pipeline
		if err := decodeObject(value, &p); err != nil {
			return &MalformedError{Offset: -1, Key: key, Err: fmt.Errorf("pipeline value: %w", err)}
		}
		st.Pipeline = &p
	case keyTable:
		if value == nil {
			delete(st.Tables, k.table)
			return nil
		}
		var t Table
		if err := decodeObject(value, &t); err != nil {
			return &MalformedError{Offset: -1, Key: key, Err: fmt.Errorf("table %s value: %w", k.table, err)}
		}
		if !validPhase(t.Phase) {
			return &MalformedError{Offset: -1, Key: key, Err: fmt.Errorf("table %s value: unknown phase %q", k.table, t.Phase)}
		}
		t.Table = k.table
		if st.Tables == nil {
			st.Tables = make(map[string]Table)
		}
		st.Tables[k.table] = t
	}
	return nil
}

func decodeObject(value []byte, v any) error {
	if !isJSON(value, '{') {
		return errors.New("not a JSON object")
	}
	return json.Unmarshal(value, v)
}
