package ittest

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// FreeAddr is a free TCP address on 127.0.0.1.
func FreeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Get fetches url and returns its status code and body.
func Get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// GrepMooncdc keeps the lines of a metrics page that start with mooncdc_.
func GrepMooncdc(body string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "mooncdc_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
