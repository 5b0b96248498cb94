package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// checkSections splits check --config DIR's output into its sections:
// header line → the indented lines under it.
func checkSections(out string) map[string][]string {
	sections := map[string][]string{}
	var head string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case l == "":
		case strings.HasPrefix(l, "  "):
			sections[head] = append(sections[head], strings.TrimPrefix(l, "  "))
		default:
			head = l
			sections[head] = nil
		}
	}
	return sections
}

// TestCheckConfigDirChecksEveryPipelineUnderItsName: check --config DIR
// validates every file, applies run's rules across the files, and runs
// every check of each valid pipeline in a section named after it. A good
// directory exits 0; a bad file and two pipelines on one slot exit 2,
// each named, and the valid pipelines are still checked.
func TestCheckConfigDirChecksEveryPipelineUnderItsName(t *testing.T) {
	pg := pgtest.New(t, func(o *pgtest.Options) {
		o.Settings = map[string]string{"max_slot_wal_keep_size": "1GB"} // no warning: a good setup is all ✓
	})
	checkDatabase(t, pg, "grp", `CREATE TABLE t1 (id int PRIMARY KEY); CREATE TABLE t2 (id int PRIMARY KEY)`)
	broker := kafkatest.New(t)
	flags := []string{"--postgres-url", pg.URL("grp"), "--brokers", broker.Addr()}

	t.Run("two good pipelines", func(t *testing.T) {
		dir := writeDir(t, map[string]string{
			"one.yaml": "name: one\npostgres:\n  tables: [public.t1]\nworker_group: ops\n",
			"two.yaml": "name: two\npostgres:\n  tables: [public.t2]\nworker_group: ops\n",
		})
		code, out, stderr := runCLI(t, append([]string{"check", "--config", dir}, flags...), nil)
		t.Logf("check --config DIR → exit %d:\n%s%s", code, out, stderr)
		if code != connector.ExitOK {
			t.Errorf("exit %d, want 0", code)
		}
		sec := checkSections(out)
		one, two := filepath.Join(dir, "one.yaml"), filepath.Join(dir, "two.yaml")
		dirHead := "Config directory " + dir + ": 2 pipeline files, worker group mooncdc-workers-ops"
		for head, want := range map[string][]string{
			dirHead:                                {"✓ " + one + ": pipeline one", "✓ " + two + ": pipeline two", "✓ rules across the 2 valid files: names and slots distinct"},
			"Postgres servers shared by pipelines": {"✓ replication slots on ", "✓ WAL senders on "},
			"Pipeline one (" + one + ")":           {"✓ postgres.tables public.t1: 1 table: public.t1", `✓ replication slot "mooncdc_one": does not exist`, "✓ Kafka " + broker.Addr(), "0 failed: ready for mooncdc run"},
			"Pipeline two (" + two + ")":           {"✓ postgres.tables public.t2: 1 table: public.t2", `✓ replication slot "mooncdc_two": does not exist`, "✓ Kafka " + broker.Addr(), "0 failed: ready for mooncdc run"},
		} {
			lines, ok := sec[head]
			if !ok {
				t.Errorf("no section %q", head)
				continue
			}
			for _, w := range want {
				checkWantLine(t, lines, "", w)
			}
			for _, l := range lines {
				if strings.HasPrefix(l, "✗") {
					t.Errorf("section %q has a ✗ line: %s", head, l)
				}
			}
		}
		if !strings.Contains(out, "All 2 pipeline files: ") || !strings.Contains(out, "0 failed: ready for mooncdc run") {
			t.Errorf("no summary of all the files:\n%s", out)
		}
	})

	// Two pipelines on one server whose copy workers fit one at a time but
	// not together: one worker may run both, so the directory's check
	// fails on their sum, while each pipeline's own check passes.
	t.Run("slots that fit each pipeline but not both", func(t *testing.T) {
		dir := writeDir(t, map[string]string{
			"w1.yaml": "name: w1\npostgres:\n  tables: [public.t1]\nsnapshot:\n  workers: 20\n",
			"w2.yaml": "name: w2\npostgres:\n  tables: [public.t2]\nsnapshot:\n  workers: 20\n",
		})
		code, out, stderr := runCLI(t, append([]string{"check", "--config", dir}, flags...), nil)
		t.Logf("check --config DIR → exit %d:\n%s%s", code, out, stderr)
		if code != connector.ExitRuntime {
			t.Errorf("exit %d, want %d", code, connector.ExitRuntime)
		}
		sec := checkSections(out)
		shared := sec["Postgres servers shared by pipelines"]
		checkWantLine(t, shared, "✗ replication slots on ", "max_replication_slots 32, 0 used by others, pipelines w1, w2 need 42 together", "ALTER SYSTEM SET max_replication_slots = 42")
		checkWantLine(t, shared, "✗ WAL senders on ", "pipelines w1, w2 need 42 together")
		checkWantLine(t, sec["Pipeline w1 ("+filepath.Join(dir, "w1.yaml")+")"], "✓ replication slots: ", "mooncdc needs 21")
	})

	t.Run("a bad file and a shared slot", func(t *testing.T) {
		dir := writeDir(t, map[string]string{
			"a.yaml":   "name: a\npostgres:\n  tables: [public.t1]\n  slot: shared\n",
			"b.yaml":   "name: b\npostgres:\n  tables: [public.t2]\n  slot: shared\n",
			"bad.yaml": "name: bad\npostgres:\n  tables: [public.t1]\n  nosuchkey: 1\n",
		})
		code, out, stderr := runCLI(t, append([]string{"check", "--config", dir}, flags...), nil)
		t.Logf("check --config DIR → exit %d:\n%s%s", code, out, stderr)
		if code != connector.ExitConfig {
			t.Errorf("exit %d, want %d", code, connector.ExitConfig)
		}
		a, b, bad := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml"), filepath.Join(dir, "bad.yaml")
		sec := checkSections(out)
		dirLines := sec["Config directory "+dir+": 3 pipeline files, worker group mooncdc-workers-default"]
		checkWantLine(t, dirLines, "✓ "+a+": pipeline a")
		checkWantLine(t, dirLines, "✗ "+bad+": invalid config (1 problem, below)")
		checkWantLine(t, dirLines, "✗ across the files: "+b+`: postgres.slot "shared" on the same database as `+a)
		checkWantLine(t, sec[bad+": invalid config"], "✗ config: ", "nosuchkey")
		// The valid pipelines are checked all the same.
		checkWantLine(t, sec["Pipeline a ("+a+")"], "✓ postgres.tables public.t1: 1 table: public.t1")
		checkWantLine(t, sec["Pipeline b ("+b+")"], "✓ postgres.tables public.t2: 1 table: public.t2")
		if !strings.Contains(out, "All 3 pipeline files: ") || !strings.Contains(out, "2 failed: fix the ✗ lines") {
			t.Errorf("the summary of all does not count the two ✗:\n%s", out)
		}
	})

	t.Run("a check that fails in one pipeline", func(t *testing.T) {
		dir := writeDir(t, map[string]string{
			"ok.yaml":   "name: ok\npostgres:\n  tables: [public.t1]\n",
			"nope.yaml": "name: nope\npostgres:\n  tables: [public.missing]\n",
		})
		code, out, _ := runCLI(t, append([]string{"check", "--config", dir}, flags...), nil)
		t.Logf("check --config DIR → exit %d:\n%s", code, out)
		if code != connector.ExitRuntime {
			t.Errorf("exit %d, want %d", code, connector.ExitRuntime)
		}
		sec := checkSections(out)
		checkWantLine(t, sec["Pipeline nope ("+filepath.Join(dir, "nope.yaml")+")"], "✗ postgres.tables public.missing: matches no table")
		checkNoLine(t, sec["Pipeline ok ("+filepath.Join(dir, "ok.yaml")+")"], "✗")
	})

	code, _, stderr := runCLI(t, append([]string{"check", "--group", "g", "--name", "x"}, flags...), nil)
	if code != connector.ExitConfig || !strings.Contains(stderr, "--config DIR") {
		t.Errorf("check --group without a directory: exit %d:\n%s", code, stderr)
	}
}
