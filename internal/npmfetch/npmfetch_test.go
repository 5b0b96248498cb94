package npmfetch

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestPackChecksTheIntegrity: a downloaded tarball whose sha512 is not
// the registry's is refused, never unpacked.
func TestPackChecksTheIntegrity(t *testing.T) {
	body := []byte("not really a tarball")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	defer srv.Close()
	sum := sha512.Sum512(body)
	good := Dist{Tarball: srv.URL + "/p.tgz", Integrity: "sha512-" + base64.StdEncoding.EncodeToString(sum[:])}
	path, err := Pack(context.Background(), good, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(body) {
		t.Errorf("downloaded %q", b)
	}
	bad := good
	bad.Integrity = "sha512-" + base64.StdEncoding.EncodeToString(make([]byte, 64))
	if _, err := Pack(context.Background(), bad, t.TempDir()); err == nil || !strings.Contains(err.Error(), "the registry says") {
		t.Errorf("a wrong sha512: %v", err)
	}
	if _, err := Pack(context.Background(), Dist{Tarball: good.Tarball, Integrity: "sha1-abc"}, t.TempDir()); err == nil {
		t.Error("a sha1 integrity was accepted")
	}
}
