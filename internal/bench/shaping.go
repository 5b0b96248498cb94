package main

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// The shaping benchmark (issue 14's cost of Debezium's options): the
// snapshot benchmark's copy again with one record-shaping option on the
// bench table's payload column, each on a fresh broker, beside the plain
// run of the same sitting. The cost of an option is the CPU µs a row above
// the plain run's.

// shapings are the -shapings variants: the format keys each adds.
var shapings = map[string]string{
	// column.mask.with.8.chars
	"mask": `  column_mask: [{columns: ["` + snapQualified + `.payload"], chars: 8}]`,
	// column.mask.hash.v2.SHA-256.with.salt.CzQMA0cB5K
	"hash": `  column_hash: [{columns: ["` + snapQualified + `.payload"], algorithm: SHA-256, salt: CzQMA0cB5K, version: 2}]`,
	// column.truncate.to.16.chars
	"truncate": `  column_truncate: [{columns: ["` + snapQualified + `.payload"], length: 16}]`,
	// the ExtractNewRecordState SMT
	"flat": `  envelope: flat`,
	// a three-transform chain (transformsChain), set in the config, not
	// under format
	"transforms": "",
	// the value formats a Kafka Connect deployment picks as its converter
	// besides JSON and Avro (issue 30): Debezium's CloudEventsConverter,
	// Confluent's ProtobufConverter and JsonSchemaConverter (these two with
	// the Schema Registry stand-in, srtest), set in the config (formatOf)
	"cloudevents": "",
	"protobuf":    "",
	"json_schema": "",
}

// formatOf is the format.value of a -shapings format variant ("" for the
// others, which keep the snapshot benchmark's JSON).
func formatOf(name string) string {
	switch name {
	case "cloudevents":
		return config.FormatCloudEvents
	case "protobuf":
		return config.FormatProtobuf
	case "json_schema":
		return config.FormatJSONSchema
	}
	return ""
}

// transformsChain is the -shapings transforms variant's chain: Debezium's
// Filter with a CEL condition, Kafka's InsertField$Value and
// ReplaceField$Value, on every record of the copy (none is dropped).
var transformsChain = map[string]string{
	"transforms":                        "keep,addRegion,dropTimes",
	"transforms.keep.type":              "io.debezium.transforms.Filter",
	"transforms.keep.language":          "cel",
	"transforms.keep.condition":         "value.op != 'd'",
	"transforms.addRegion.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
	"transforms.addRegion.static.field": "region",
	"transforms.addRegion.static.value": "EU",
	"transforms.dropTimes.type":         "org.apache.kafka.connect.transforms.ReplaceField$Value",
	"transforms.dropTimes.exclude":      "ts_us,ts_ns",
}

// shapingResult is one variant's run.
type shapingResult struct {
	name    string
	elapsed time.Duration
	cpu     cpuTime
}

func runShapings(ctx context.Context, o options, src *source, kfakeBin, tmp string, base shapingResult) error {
	n := o.snapRows
	results := []shapingResult{base}
	for _, name := range strings.Split(o.shapings, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		keys, ok := shapings[name]
		if !ok {
			return fmt.Errorf("-shapings: %q is none of mask, hash, truncate, flat, transforms, cloudevents, protobuf, json_schema", name)
		}
		r, err := shapingRun(ctx, o, src, kfakeBin, tmp, name, keys)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		results = append(results, r)
	}
	fmt.Println()
	fmt.Printf("record shaping: the snapshot of %d rows (mooncdc, start → exit) with one option on %s.payload or one value format, each on a fresh kfake\n", n, snapQualified)
	fmt.Printf("  %-10s %12s %12s %14s\n", "option", "mooncdc r/s", "CPU µs/row", "vs none µs/row")
	for _, r := range results {
		fmt.Printf("  %-10s %12s %12.2f %+14.2f\n", r.name, rate(n, r.elapsed), perRow(r.cpu, n), perRow(r.cpu, n)-perRow(base.cpu, n))
	}
	return nil
}

func shapingRun(ctx context.Context, o options, src *source, kfakeBin, tmp, name, keys string) (shapingResult, error) {
	out := shapingResult{name: name}
	format := formatOf(name)
	var reg *srtest.Registry
	if format == config.FormatProtobuf || format == config.FormatJSONSchema {
		var err error
		if reg, err = srtest.Start(); err != nil {
			return out, err
		}
		defer reg.Close()
	}
	v, err := runSnapshotVariant(ctx, o, src, kfakeBin, tmp, "shaping "+name, name,
		func(cfg *config.Config) {
			cfg.Kafka.Compression = "none"
			if name == "transforms" {
				cfg.Transforms = transformsChain
			}
			if format != "" {
				cfg.Format.Value = format
			}
			if reg != nil {
				cfg.Format.SchemaRegistry.URL = reg.URL()
			}
		}, keys)
	if err != nil {
		return out, err
	}
	// The option was applied: the first record's payload is shaped.
	if err := checkShaped(name, v.first.Value); err != nil {
		return out, err
	}
	out.elapsed, out.cpu = v.elapsed, v.cpu
	return out, nil
}

// checkShaped checks a snapshot record's payload against what the
// option makes of the table's md5(id) || md5(id + 1).
func checkShaped(name string, value []byte) error {
	var v struct {
		Region string       `json:"region"`
		TsUs   *json.Number `json:"ts_us"`
		After  struct {
			ID      int64  `json:"id"`
			Payload string `json:"payload"`
		} `json:"after"`
	}
	var event struct {
		Data json.RawMessage `json:"data"`
	}
	switch name {
	case "flat": // the row itself is the value
		if err := json.Unmarshal(value, &v.After); err != nil {
			return fmt.Errorf("the first record: %w", err)
		}
	case "cloudevents": // the envelope is the event's data
		if err := json.Unmarshal(value, &event); err != nil {
			return fmt.Errorf("the first record: %w", err)
		}
		if err := json.Unmarshal(event.Data, &v); err != nil {
			return fmt.Errorf("the first record's data: %w", err)
		}
	case "json_schema": // Confluent's frame: magic byte 0, a 4-byte schema id
		if len(value) < 5 || value[0] != 0 {
			return fmt.Errorf("the first record is not in Confluent's wire format: % x", value[:min(len(value), 5)])
		}
		if err := json.Unmarshal(value[5:], &v); err != nil {
			return fmt.Errorf("the first record's payload: %w", err)
		}
	case "protobuf": // framed; a string field's bytes are written as they are
		if len(value) < 6 || value[0] != 0 {
			return fmt.Errorf("the first record is not in Confluent's wire format: % x", value[:min(len(value), 6)])
		}
		return checkProtobuf(value[5:])
	default:
		if err := json.Unmarshal(value, &v); err != nil {
			return fmt.Errorf("the first record: %w", err)
		}
	}
	a, b := md5.Sum([]byte(strconv.FormatInt(v.After.ID, 10))), md5.Sum([]byte(strconv.FormatInt(v.After.ID+1, 10)))
	plain := hex.EncodeToString(a[:]) + hex.EncodeToString(b[:])
	p := v.After.Payload
	ok := false
	switch name {
	case "mask":
		ok = p == "********"
	case "hash":
		ok = len(p) == 64 && p != plain
	case "truncate":
		ok = p == plain[:16]
	case "flat", "cloudevents", "json_schema":
		ok = p == plain
	case "transforms": // the chain ran: region added, ts_us gone
		ok = p == plain && v.Region == "EU" && v.TsUs == nil
	}
	if !ok {
		return fmt.Errorf("the first record's payload %q is not what %s makes of %q", p, name, plain)
	}
	return nil
}

// checkProtobuf checks a Protobuf snapshot record (after its schema id):
// a string field is its bytes as they are, so the row's payload,
// md5(id) || md5(id + 1) of one of the bench table's ids, appears whole in
// it. The id is found from the payload's first half.
func checkProtobuf(b []byte) error {
	for i := 0; i+64 <= len(b); i++ {
		h := b[i : i+64]
		if !isHex(h) {
			continue
		}
		for id := int64(1); id <= 1<<22; id++ {
			a := md5.Sum([]byte(strconv.FormatInt(id, 10)))
			if hex.EncodeToString(a[:]) != string(h[:32]) {
				continue
			}
			c := md5.Sum([]byte(strconv.FormatInt(id+1, 10)))
			if hex.EncodeToString(c[:]) == string(h[32:]) {
				return nil
			}
			return fmt.Errorf("the first record's payload %q is not the row's (id %d)", h, id)
		}
	}
	return fmt.Errorf("the first record holds no payload of the bench table: % x", b[:min(len(b), 64)])
}

func isHex(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
