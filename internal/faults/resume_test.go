//go:build faults

package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The resume scenario (issue 17.6): the big table, FAULTS_RESUME_ROWS rows
// (default 1,000,000; 5,000,000 is the figure and works, it only
// takes longer: the copy reads the rows through FAULTS_PG_RATE), is
// copied under the load while mooncdc is killed (kill -9) at random points
// of the copy; each restart must resume from the chunks in Kafka, not from
// zero. The check is the suite's (check_test.go, which takes a resumed
// copy's several snapshots into account): nothing lost or reordered, the
// tables equal, and in exactly-once mode no change record twice.

const resumeKills = 5

// resumeRows is FAULTS_RESUME_ROWS.
func resumeRows(t *testing.T) int { return envInt(t, "FAULTS_RESUME_ROWS", 1_000_000) }

// resumeKill is what one kill left, as the offsets topic and the killed
// instance say.
type resumeKill struct {
	victim     *instance
	phase      string
	chunksDone int   // in the progress stored when it died
	chunks     int   // the plan's
	rowsDone   int64 // rows of the done chunks
	copied     int64 // rows the victim copied (mooncdc_table_copy_rows_total)
}

// resumeKills, by scenario env (the scenario's run and verify share them).
var resumeLog = map[*env][]resumeKill{}

// runResume kills mooncdc resumeKills times during the big table's copy,
// at random points spread over the whole table (kill k once the rows in
// Kafka pass a random point of the table's k-th sixth, so that a 5M-row
// copy is killed late in it too, not only in its first seconds): after a
// checkpoint of the running attempt, at a random moment of its copy, or
// just after it began to resume (while it streams the changes since the
// base or checkpoints). Each kill is followed by a restart.
func runResume(e *env) int {
	e.startFirst()
	total := int64(e.gen.specs[0].seed)
	kills := 0
	for kills < resumeKills {
		in := e.cur
		resuming := kills%3 == 2 && e.bigProgress().doneChunks() > 0
		msg := "copying table"
		if resuming {
			msg = "resuming copy"
		}
		for !in.has(msg, bigTable) && in.running() && time.Since(in.started) < 2*time.Minute && !e.bigDone() {
			time.Sleep(2 * time.Millisecond)
		}
		if e.bigDone() || in.has("table copied", bigTable) {
			break // copied: the kills of the copy are over
		}
		if !resuming {
			seg := total / (resumeKills + 1)
			e.waitRowsCopied(in, int64(kills)*seg+e.rng.Int64N(seg))
		}
		before := e.bigProgress().doneChunks()
		switch {
		case resuming: // while it streams the changes since the base, or checkpoints
			time.Sleep(e.rnd(0, 300*time.Millisecond))
		case kills%3 == 0: // after the attempt's next checkpoint
			deadline := time.Now().Add(time.Minute)
			for e.bigProgress().doneChunks() == before && !in.has("table copied", bigTable) && time.Now().Before(deadline) {
				e.sleep(100 * time.Millisecond)
			}
			e.sleep(e.rnd(0, time.Second))
		default: // anywhere in the attempt's copy
			e.sleep(e.rnd(300*time.Millisecond, 3*time.Second))
		}
		if in.has("table copied", bigTable) {
			break
		}
		e.ensure()
		k := resumeKill{victim: in, phase: e.phase(), copied: int64(in.metric("mooncdc_table_copy_rows_total", bigTable))}
		in.kill9()
		kills++
		p := e.bigProgress()
		k.chunksDone = p.doneChunks()
		if p.Copy != nil {
			k.chunks, k.rowsDone = p.Copy.Chunks, p.Copy.Rows
		}
		resumeLog[e] = append(resumeLog[e], k)
		e.note("resume: kill %d during %s: %d of %d chunks done (%d rows) in the offsets topic; the killed instance had copied %d rows",
			kills, k.phase, k.chunksDone, k.chunks, k.rowsDone, k.copied)
		e.restart()
	}
	e.waitAllReady(4 * time.Minute)
	return kills
}

// verifyResume: every restart after a kill that left progress resumed
// from exactly that progress, and copied at most the rows not done then
// (plus a 5 % slack for the rows the load inserts and the chunks in
// flight); at least one kill left progress.
func verifyResume(e *env, raw map[string][]*kgo.Record, faults int) {
	kills := resumeLog[e]
	delete(resumeLog, e)
	total := int64(e.gen.specs[0].seed)
	slack := total / 20
	resumed := 0
	var copiedAll int64
	for i, k := range kills {
		copiedAll += k.copied
		if k.chunksDone == 0 {
			continue
		}
		next := e.insts[indexOf(e.insts, k.victim)+1]
		r, ok := next.field("resuming copy", bigTable)
		if !ok {
			e.t.Errorf("resume: kill %d left %d of %d chunks done, but mooncdc %s did not resume the copy; the end of its log:\n%s",
				i+1, k.chunksDone, k.chunks, next.label, next.tail(20))
			continue
		}
		if int(r["chunks_done"].(float64)) != k.chunksDone {
			e.t.Errorf("resume: kill %d left %d chunks done; mooncdc %s resumed with %v", i+1, k.chunksDone, next.label, r["chunks_done"])
		}
		resumed++
		copied := int64(next.metric("mooncdc_table_copy_rows_total", bigTable))
		if i+1 < len(kills) {
			copied = kills[i+1].copied
		} else if l, ok := next.field("table copied", bigTable); ok {
			copied = int64(l["rows"].(float64))
		}
		if copied > total-k.rowsDone+slack {
			e.t.Errorf("resume: after kill %d (%d rows done), mooncdc %s copied %d rows of %d: more than the rows not done",
				i+1, k.rowsDone, next.label, copied, total)
		}
		e.note("resume: restart %d resumed %d of %d chunks (%d rows) and copied %d rows (%.0f%% of the table)",
			i+1, k.chunksDone, k.chunks, k.rowsDone, copied, 100*float64(copied)/float64(total))
	}
	if resumed == 0 {
		e.t.Errorf("resume: no kill left progress to resume from (%d kills)", len(kills))
	}
	last := e.insts[len(e.insts)-1]
	if l, ok := last.field("table copied", bigTable); ok && len(kills) > 0 {
		copiedAll += int64(l["rows"].(float64))
	}
	reads, distinct := 0, map[string]bool{}
	for _, r := range raw["big"] {
		if d, err := decode(r); err == nil && d.op == "r" {
			reads++
			distinct[string(r.Key)] = true
		}
	}
	e.note("resume: %d kills, %d resumed; rows copied over all attempts %d for a table of %d (%.2fx); snapshot rows of big in its topic %d for %d keys",
		len(kills), resumed, copiedAll, total, float64(copiedAll)/float64(total), reads, len(distinct))
}

// waitRowsCopied waits until the big table has rows in Kafka: the rows
// of the chunks done when in's attempt began, and the rows it copied
// (its mooncdc_table_copy_rows_total, scraped every 20 ms), or until the
// copy is over or in stopped.
func (e *env) waitRowsCopied(in *instance, rows int64) {
	var before int64
	if p := e.bigProgress(); p.Copy != nil {
		before = p.Copy.Rows
	}
	for in.running() && !in.has("table copied", bigTable) &&
		before+int64(in.metric("mooncdc_table_copy_rows_total", bigTable)) < rows {
		time.Sleep(20 * time.Millisecond)
	}
}

func indexOf(ins []*instance, in *instance) int {
	for i, x := range ins {
		if x == in {
			return i
		}
	}
	return -1
}

// bigProgress is the big table's record in the offsets topic now.
func (e *env) bigProgress() tableValue {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var v tableValue
	_ = json.Unmarshal([]byte(e.tableRecords(ctx)[bigTable]), &v)
	return v
}

// bigDone reports whether the offsets topic has the big table handed over.
func (e *env) bigDone() bool {
	ph := e.bigProgress().Phase
	return ph == "ready" || ph == "catchup"
}

// field returns the fields of the instance's last log line with msg (a
// prefix) for table.
func (in *instance) field(msg, table string) (map[string]any, bool) {
	var out map[string]any
	for _, l := range in.lines() {
		if strings.HasPrefix(l.Msg, msg) && l.Table == table {
			var m map[string]any
			if json.Unmarshal([]byte(l.raw), &m) == nil {
				out = m
			}
		}
	}
	return out, out != nil
}

// metric reads a counter of table from the instance's /metrics; 0 when it
// does not answer.
func (in *instance) metric(name, table string) float64 {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + in.metricsAddr + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	want := fmt.Sprintf(`%s{table=%q} `, name, table)
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), want); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}
