package main

import "testing"

// TestStageOfTakesTheLeafMostKnownFrame: a sample counts for the stage of
// its leaf-most frame that a rule names, so the runtime and the standard
// library below a stage count for it, and only a stack without any is the
// runtime's.
func TestStageOfTakesTheLeafMostKnownFrame(t *testing.T) {
	for _, tt := range []struct {
		stack []string
		want  string
	}{
		{[]string{"internal/runtime/syscall/linux.Syscall6", "net.(*conn).Read", "github.com/jackc/pgx/v5/pgconn.(*PgConn).CopyTo", "github.com/mooncdc/mooncdc/connector.(*chunkWriter).copyChunk"}, stageRead},
		{[]string{"github.com/mooncdc/mooncdc/schema.unescapeCopyField", "github.com/mooncdc/mooncdc/schema.ParseCopyRow", "github.com/mooncdc/mooncdc/connector.(*chunkWriter).row", "github.com/jackc/pgx/v5/pgconn.(*PgConn).CopyTo"}, stageParse},
		{[]string{"runtime.mallocgc", "strconv.AppendInt", "github.com/mooncdc/mooncdc/schema.appendDatumJSON", "github.com/mooncdc/mooncdc/schema.(*JSONEncoder).AppendValue", "github.com/mooncdc/mooncdc/connector.(*snapshotOut).encode"}, stageEncode},
		{[]string{"github.com/hamba/avro/v2.(*Writer).WriteLong", "github.com/mooncdc/mooncdc/schema.(*AvroEncoder).AppendValue"}, stageEncode},
		{[]string{"github.com/klauspost/compress/s2.encodeBlock", "github.com/twmb/franz-go/pkg/kgo.(*recBatch).appendTo"}, stageProduce},
		{[]string{"syscall.Syscall", "github.com/twmb/franz-go/pkg/kgo.(*brokerCxn).writeConn"}, stageProduce},
		{[]string{"sync.(*Mutex).Lock", "github.com/mooncdc/mooncdc/connector.(*Tracker).Add"}, stagePipeline},
		{[]string{"github.com/jackc/pglogrepl.(*TupleData).Decode", "github.com/mooncdc/mooncdc/connector/stream.(*Decoder).Decode", "github.com/jackc/pgx/v5/pgconn.(*PgConn).ReceiveMessage"}, stageParse},
		{[]string{"runtime.memmove", "github.com/mooncdc/mooncdc/connector/stream.(*Decoder).emit", "github.com/mooncdc/mooncdc/connector/stream.(*Session).loop"}, stageParse},
		{[]string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}, stageRuntime},
		{nil, stageRuntime},
	} {
		if got := stageOf(tt.stack); got != tt.want {
			t.Errorf("%v: %s, want %s", tt.stack, got, tt.want)
		}
	}
}

func TestMedianOf(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{0.8}, 0.8},
		{[]float64{0.98, 0.90, 0.99}, 0.98},
		{[]float64{0.5, 0.9, 0.7, 0.1}, 0.6},
		{[]float64{1, 1}, 1},
	} {
		if got := medianOf(c.xs); got != c.want {
			t.Errorf("medianOf(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}
