package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// opOrder is the order ops are shown in; opNames says what they mean.
var (
	opOrder = []string{"c", "u", "d", opTombstone}
	opNames = map[string]string{"c": "insert", "u": "update", "d": "delete", opTombstone: "after each delete"}
)

// printSamples prints up to n records of each op, taking the topics in
// turn, condensed to one line each; then one whole record as a consumer
// receives it (decoded with its registered schema when avro).
func printSamples(u ui, samples map[string][]record, n int, avro bool) {
	u.printf("\nRecords read back from Kafka, the first of each kind (key, then the row; for updates the changed columns):\n")
	var whole *record
	for _, op := range opOrder {
		rs := interleave(samples[op], n)
		if len(rs) == 0 {
			continue
		}
		u.printf("  %s (%s)\n", op, opNames[op])
		for _, r := range rs {
			u.printf("%s\n", clip(fmt.Sprintf("    %-22s %-12s %s", r.Topic, r.Key, condense(r)), maxLine))
		}
		if op == "u" {
			whole = &rs[0]
			for i := range rs {
				if rs[i].Topic == topicPrefix+".public.orders" {
					whole = &rs[i] // it has more types to show
					break
				}
			}
		}
	}
	switch {
	case whole != nil && avro:
		u.printf("\nOne update's whole value, as any Kafka consumer decodes it with the schema the registry gives for its id (key %s on %s):\n%s",
			whole.Key, whole.Topic, envelope(whole.Value))
	case whole != nil:
		u.printf("\nOne update's whole value, as any Kafka consumer gets it (key %s on %s):\n%s", whole.Key, whole.Topic, envelope(whole.Value))
	}
}

// maxLine is where sample lines are cut; the whole value is shown once.
const maxLine = 160

// clip cuts s to max runes, marking the cut with "…".
func clip(s string, max int) string {
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// interleave returns up to n of rs, taking the topics in turn, in the order
// of their first record.
func interleave(rs []record, n int) []record {
	var topics []string
	byTopic := map[string][]record{}
	for _, r := range rs {
		if byTopic[r.Topic] == nil {
			topics = append(topics, r.Topic)
		}
		byTopic[r.Topic] = append(byTopic[r.Topic], r)
	}
	var out []record
	for i := 0; len(out) < n; i++ {
		took := false
		for _, t := range topics {
			if i < len(byTopic[t]) && len(out) < n {
				out = append(out, byTopic[t][i])
				took = true
			}
		}
		if !took {
			break
		}
	}
	return out
}

// condense shows a record's change: the new row of an insert, the old row of
// a delete, and only the columns that changed for an update.
func condense(r record) string {
	if r.Value == nil {
		return "value null"
	}
	var env struct {
		Before json.RawMessage `json:"before"`
		After  json.RawMessage `json:"after"`
	}
	if err := json.Unmarshal(r.Value, &env); err != nil {
		return "value " + string(r.Value)
	}
	before, after := fields(env.Before), fields(env.After)
	switch {
	case r.Op == "c":
		return "after " + row(after, nil)
	case r.Op == "d":
		return "before " + row(before, nil)
	case r.Op == "u" && before == nil:
		return "after " + row(after, nil)
	case r.Op == "u":
		old := map[string]string{}
		for _, f := range before {
			old[f.name] = string(f.value)
		}
		changed := map[string]bool{}
		for _, f := range after {
			if v, ok := old[f.name]; !ok || v != string(f.value) {
				changed[f.name] = true
			}
		}
		return row(before, changed) + " → " + row(after, changed)
	}
	return "value " + string(r.Value)
}

// field is one member of a JSON object.
type field struct {
	name  string
	value json.RawMessage
}

// fields returns the members of a JSON object in their order; nil for null
// or anything else.
func fields(raw json.RawMessage) []field {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out
		}
		out = append(out, field{name, v})
	}
	return out
}

// row renders fs as a compact JSON object, keeping only the names in keep
// (all if keep is nil).
func row(fs []field, keep map[string]bool) string {
	if fs == nil {
		return "null"
	}
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	for _, f := range fs {
		if keep != nil && !keep[f.name] {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		name, _ := json.Marshal(f.name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(f.value)
	}
	b.WriteByte('}')
	return b.String()
}

// envelope prints a record value with one top-level field per line.
func envelope(value []byte) string {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(value, &env); err != nil {
		return "  " + string(value) + "\n"
	}
	var b strings.Builder
	for _, k := range []string{"before", "after", "source", "op", "ts_ms", "transaction"} {
		v, ok := env[k]
		if !ok {
			continue
		}
		var c bytes.Buffer
		if json.Compact(&c, v) != nil {
			c.Reset()
			c.Write(v)
		}
		fmt.Fprintf(&b, "  %-12s %s\n", k+":", c.String())
	}
	return b.String()
}
