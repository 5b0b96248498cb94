package connectformat

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// FuzzDecodeProtobuf reads untrusted record bytes as a consumer does:
// the frame, then the message with the envelope's descriptor. Nothing may
// panic; what decodes re-encodes and decodes to an equal message.
func FuzzDecodeProtobuf(f *testing.F) {
	p, err := NewProtobuf(pgEnvelope)
	if err != nil {
		f.Fatal(err)
	}
	good, err := p.AppendEncode(nil, 7, pgChange(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte{0, 0, 0, 0, 1, 2, 2, 4, 8})
	f.Add([]byte{0, 0, 0, 0, 1, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, payload, err := DecodeProtobufFrame(b)
		if err != nil {
			return
		}
		m := dynamicpb.NewMessage(p.Message)
		if proto.Unmarshal(payload, m) != nil {
			return
		}
		again, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		m2 := dynamicpb.NewMessage(p.Message)
		if err := proto.Unmarshal(again, m2); err != nil || !proto.Equal(m, m2) {
			t.Fatalf("re-decode: %v", err)
		}
	})
}

// FuzzDecodeJSONFrame: the JSON Schema frame never panics and never
// returns a payload for fewer than five bytes or a wrong magic byte.
func FuzzDecodeJSONFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, '{', '}'})
	f.Add([]byte{1, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, payload, err := DecodeJSONFrame(b)
		if err == nil && (len(b) < 5 || b[0] != 0 || len(payload) != len(b)-5) {
			t.Fatalf("accepted % x", b)
		}
	})
}
