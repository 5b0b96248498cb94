package connectformat

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/sr"
)

// This file reads the Confluent wire format's header (magic byte 0, a
// 4-byte big-endian schema id, and for Protobuf the message indexes),
// with franz-go's sr.ConfluentHeader, the registry client mooncdc uses.

// DecodeProtobufFrame splits a Protobuf record value into its schema id,
// message indexes and message bytes.
func DecodeProtobufFrame(b []byte) (id int, index []int, payload []byte, err error) {
	h := new(sr.ConfluentHeader)
	id, rest, err := h.DecodeID(b)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("protobuf frame: %w (want magic byte 0 and a 4-byte schema id)", err)
	}
	// A schema file holds few messages; 64 levels bound a hostile count.
	index, payload, err = h.DecodeIndex(rest, 64)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("protobuf frame: message indexes: %w", err)
	}
	return id, index, payload, nil
}

// DecodeJSONFrame splits a JSON Schema record value into its schema id and
// JSON document.
func DecodeJSONFrame(b []byte) (id int, payload []byte, err error) {
	id, payload, err = new(sr.ConfluentHeader).DecodeID(b)
	if err != nil {
		return 0, nil, fmt.Errorf("json schema frame: %w (want magic byte 0 and a 4-byte schema id)", err)
	}
	return id, payload, nil
}
