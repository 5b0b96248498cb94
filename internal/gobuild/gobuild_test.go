package gobuild

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestArgsFollowTheRaceSetting(t *testing.T) {
	got := Args("/tmp/x", "example.com/m/cmd/x")
	if slices.Contains(got, "-race") != Race {
		t.Fatalf("Args = %v with Race = %v", got, Race)
	}
	if got[0] != "build" || got[len(got)-1] != "example.com/m/cmd/x" {
		t.Fatalf("Args = %v", got)
	}
}

// TestBuiltBinaryHasTheRaceSetting builds a tiny main package of this
// module and reads back, with go version -m, whether it was built with
// -race: under make test it must be, so the build is a link from the
// cache go test filled.
func TestBuiltBinaryHasTheRaceSetting(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin, err := BuildIn(t.TempDir(), "github.com/mooncdc/mooncdc/internal/gobuild/testdata/hello", "hello")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "version", "-m", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "-race=true") != Race {
		t.Fatalf("built with Race = %v, but go version -m says:\n%s", Race, out)
	}
	if got, err := exec.Command(bin).Output(); err != nil || string(got) != "hello\n" {
		t.Fatalf("%s ran: %q, %v", filepath.Base(bin), got, err)
	}
}
