//go:build faults

package faults

import (
	"os/exec"
	"strings"
	"time"
)

// The incremental scenario (issue 29): once every table streams, an
// incremental snapshot of the big table is asked for with the real
// `mooncdc resnapshot --incremental`, and mooncdc is killed (kill -9)
// at random moments of it, up to three times, each kill followed by a
// restart, which resumes the snapshot from the chunks its offsets record
// holds. The check is the suite's (its rebuild counts the windows' rows,
// and checkWindows that none is older than a change of its key before it):
// nothing lost or reordered, the tables equal, in exactly-once mode no
// change record twice.

const incrementalKills = 3

// logged reports whether in's log has a line whose msg is msg for table.
func (in *instance) logged(msg, table string) bool {
	for _, l := range in.lines() {
		if l.Msg == msg && l.Table == table {
			return true
		}
	}
	return false
}

func runIncrementalKill9(e *env) int {
	e.startFirst()
	e.waitAllReady(3 * time.Minute)
	out, err := exec.Command(mooncdcBin, "resnapshot", "--config", e.cfgPath, "--incremental", bigTable).CombinedOutput()
	if err != nil {
		e.t.Fatalf("mooncdc resnapshot --incremental: %v\n%s", err, out)
	}
	e.note("resnapshot: %s", out)
	kills := 0
	for kills < incrementalKills {
		in := e.cur
		for !in.logged("incremental snapshot", bigTable) && in.running() && time.Since(in.started) < 2*time.Minute {
			time.Sleep(5 * time.Millisecond)
		}
		e.sleep(e.rnd(100*time.Millisecond, 1500*time.Millisecond))
		if in.logged("incremental snapshot done", bigTable) {
			break
		}
		e.ensure()
		e.cur.kill9()
		kills++
		e.restart()
	}
	in := e.cur
	deadline := time.Now().Add(3 * time.Minute)
	for !in.logged("incremental snapshot done", bigTable) && time.Now().Before(deadline) {
		e.ensure()
		in = e.cur
		time.Sleep(50 * time.Millisecond)
	}
	if !in.logged("incremental snapshot done", bigTable) {
		e.t.Errorf("the incremental snapshot of %s did not end within 3 minutes of the last kill; the end of the log:\n%s", bigTable, in.tail(20))
	}
	e.sleep(2 * time.Second)
	resumed := 0
	for _, in := range e.insts[1:] {
		for _, l := range in.lines() {
			if l.Msg == "incremental snapshot" && l.Table == bigTable && strings.Contains(l.raw, `"resumed":true`) {
				resumed++
				break
			}
		}
	}
	if kills > 0 && resumed == 0 {
		e.t.Errorf("%d kills, and no restart resumed the incremental snapshot from its progress", kills)
	}
	e.note("incremental: %d kills during the snapshot, %d restarts resumed it by chunk", kills, resumed)
	return kills
}
