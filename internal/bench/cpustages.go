package main

// This file breaks a CPU profile of mooncdc down by stage: where each
// sampled CPU second went, Postgres protocol (the COPY or the stream
// read), parsing (COPY rows; pgoutput messages into changes), encoding records, the Kafka client
// (batching, compression, writes), the pipeline around them, and the Go
// runtime (GC, scheduler).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// The stages, in the order they are printed.
const (
	stageRead     = "Postgres read"
	stageParse    = "parse"
	stageEncode   = "encode"
	stageProduce  = "Kafka client"
	stagePipeline = "pipeline"
	stageRuntime  = "runtime, GC"
)

var stageOrder = []string{stageRead, stageParse, stageEncode, stageProduce, stagePipeline, stageRuntime}

// stageRules map a function's name (its package path and name, as a
// profile holds it) to a stage, first match wins. A sample belongs to the
// stage of its leaf-most frame that any rule matches: the standard
// library and the runtime below a stage (syscalls under a read,
// allocations under an encoder) count for that stage, and a sample with
// no such frame (the GC's workers, the scheduler) is the runtime's.
var stageRules = []struct{ prefix, stage string }{
	{"github.com/mooncdc/mooncdc/schema.ParseCopyRow", stageParse},
	{"github.com/mooncdc/mooncdc/schema.unescapeCopyField", stageParse},
	{"github.com/jackc/pglogrepl.", stageParse}, // pgoutput messages
	{"github.com/mooncdc/mooncdc/connector/stream.(*Decoder)", stageParse},
	{"github.com/mooncdc/mooncdc/schema.", stageEncode},
	{"github.com/hamba/avro/", stageEncode},
	{"github.com/jackc/", stageRead},
	{"github.com/twmb/franz-go/", stageProduce},
	{"github.com/klauspost/", stageProduce},
	{"github.com/pierrec/", stageProduce},
	{"github.com/mooncdc/mooncdc/", stagePipeline},
	{"go.uber.org/zap", stagePipeline},
}

// stagesProfile is where the child named name writes its CPU profile,
// or "" (no profile) without -stages.
func (o options) stagesProfile(tmp, name string) string {
	if !o.stages {
		return ""
	}
	return filepath.Join(tmp, name+".cpu.pprof")
}

// stageOf is the stage of a sample whose stack, leaf first, has these
// function names.
func stageOf(stack []string) string {
	for _, fn := range stack {
		for _, r := range stageRules {
			if strings.HasPrefix(fn, r.prefix) {
				return r.stage
			}
		}
	}
	return stageRuntime
}

// cpuStages is a profile's CPU time per stage.
type cpuStages struct {
	total time.Duration
	by    map[string]time.Duration
}

// readCPUStages reads the CPU profile at path (as mooncdc run
// --cpuprofile writes it) and sums its samples by stage.
func readCPUStages(path string) (cpuStages, error) {
	f, err := os.Open(path)
	if err != nil {
		return cpuStages{}, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return cpuStages{}, fmt.Errorf("parse CPU profile %s: %w", path, err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			idx = i
		}
	}
	if idx < 0 {
		return cpuStages{}, fmt.Errorf("%s: not a CPU profile (no cpu/nanoseconds sample type)", path)
	}
	cs := cpuStages{by: map[string]time.Duration{}}
	var stack []string
	for _, s := range p.Sample {
		stack = stack[:0]
		for _, loc := range s.Location { // leaf first
			for i := len(loc.Line) - 1; i >= 0; i-- { // inlined callees first
				if loc.Line[i].Function != nil {
					stack = append(stack, loc.Line[i].Function.Name)
				}
			}
		}
		d := time.Duration(s.Value[idx])
		cs.by[stageOf(stack)] += d
		cs.total += d
	}
	return cs, nil
}

// perRow formats cs as µs of CPU per row of n, stage by stage, with each
// stage's share.
func (cs cpuStages) perRow(n int) string {
	var b strings.Builder
	for i, st := range stageOrder {
		if i > 0 {
			b.WriteString(", ")
		}
		d := cs.by[st]
		share := 0.0
		if cs.total > 0 {
			share = 100 * float64(d) / float64(cs.total)
		}
		fmt.Fprintf(&b, "%s %.2f µs (%.0f%%)", st, float64(d.Nanoseconds())/1e3/float64(n), share)
	}
	return b.String()
}
