package pgtest

import (
	"fmt"
	"strings"
	"testing"
)

// fatalRecorder is a testing.TB whose Fatalf and Skip* only record: it shows
// what RequireExtension does to a test without ending this one.
type fatalRecorder struct {
	testing.TB
	fatal, skipped string
}

func (r *fatalRecorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }
func (r *fatalRecorder) Skip(args ...any)                  { r.skipped = fmt.Sprint(args...) }
func (r *fatalRecorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *fatalRecorder) SkipNow()                          { r.skipped = "SkipNow" }

// TestMissingExtensionFailsWithTheInstallCommand: a test that requires an
// extension the server lacks fails, naming the command that installs it,
// and is never skipped; an available extension is created in the schema
// asked for.
func TestMissingExtensionFailsWithTheInstallCommand(t *testing.T) {
	t.Parallel()
	SkipIntegrationInShort(t)
	c := New(t)
	extensionPackages["mooncdc_absent_ext"] = "postgresql-%d-mooncdc-absent"
	defer delete(extensionPackages, "mooncdc_absent_ext")

	r := &fatalRecorder{TB: t}
	RequireExtension(r, c, "postgres", "mooncdc_absent_ext", "")
	if r.skipped != "" {
		t.Errorf("skipped (%q); a missing extension must fail the test", r.skipped)
	}
	if !strings.Contains(r.fatal, "apt-get install -y postgresql-") || !strings.Contains(r.fatal, "-mooncdc-absent") ||
		!strings.Contains(r.fatal, `"mooncdc_absent_ext"`) {
		t.Errorf("failure %q does not name the extension and its install command", r.fatal)
	}
	if got := ExtensionInstallHint("postgis", 15); !strings.HasPrefix(got, "apt-get install -y postgresql-15-postgis-3") {
		t.Errorf("PostGIS hint = %q", got)
	}

	// plpgsql ships with every server: created (already there) without a failure.
	r = &fatalRecorder{TB: t}
	RequireExtension(r, c, "postgres", "plpgsql", "")
	if r.fatal != "" || r.skipped != "" {
		t.Errorf("plpgsql: fatal %q, skipped %q", r.fatal, r.skipped)
	}
}
